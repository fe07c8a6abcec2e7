// Fuzz input bytes as a file the tools can open by path: an anonymous in-memory file (memfd),
// read through its /proc path. A memfd is a regular file to stat and zlib, with nothing on disk.
#ifndef KATRACE_FUZZ_BYTES_FILE_H_
#define KATRACE_FUZZ_BYTES_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace katrace_fuzz {

class BytesFile {
 public:
  BytesFile(const uint8_t* data, size_t size);
  ~BytesFile();
  BytesFile(const BytesFile&) = delete;
  BytesFile& operator=(const BytesFile&) = delete;

  bool ok() const { return fd_ >= 0; }
  std::string path() const;

 private:
  int fd_ = -1;
};

}  // namespace katrace_fuzz

#endif  // KATRACE_FUZZ_BYTES_FILE_H_
