// Appends bytes to an open file through one aligned staging buffer, and writes a big regular
// file's bulk past the page cache (O_DIRECT).
//
// Why: a trace of 10 M events is 2.5 GB of JSON written once and read later, if at all. Through
// the page cache, every byte is copied into a freshly allocated page. On a virtual machine that
// hands freed memory back to its host, each of those pages costs a fault in the host too: on the
// project's CPU machine writing 2.5 GB to a new file took 6.7 s of system time (dd, 2 MiB
// writes), against 0.3 s with O_DIRECT. Small files keep the page cache: their first
// |direct_after| bytes are written as usual, and a reader that comes right after finds them in
// memory.
//
// O_DIRECT needs aligned buffers, sizes and offsets (4096 covers the block devices and file
// systems in use). The staging buffer is aligned and always written whole; only the last,
// partial piece at Close goes through the page cache again. A file system that refuses O_DIRECT
// (at fcntl, or with EINVAL at the first direct write) keeps the page cache: nothing is lost.
#ifndef KATRACE_COMMON_FILE_WRITER_H_
#define KATRACE_COMMON_FILE_WRITER_H_

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <memory>

namespace katrace {

class FileWriter {
 public:
  static constexpr size_t kAlign = 4096;
  static constexpr size_t kDefaultStageBytes = 4u << 20;
  static constexpr uint64_t kDefaultDirectAfter = 64u << 20;

  // Takes |fd| (open for writing, at offset 0). |may_bypass_cache|: a regular file, which may be
  // written with O_DIRECT once |direct_after| bytes are out. |stage_bytes| and |direct_after| are
  // multiples of kAlign.
  FileWriter(int fd, bool may_bypass_cache, size_t stage_bytes = kDefaultStageBytes,
             uint64_t direct_after = kDefaultDirectAfter);
  ~FileWriter();  // closes the file if Close was not called (what is staged is lost)
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  // False on a write error, with errno set; the writer is then failed and writes nothing more.
  bool Write(const char* data, size_t n);
  // Writes what is staged and closes the file. False on any error, with errno set.
  bool Close();

  // Whether any byte went past the page cache.
  bool wrote_direct() const { return wrote_direct_; }

 private:
  struct FreeDeleter {
    void operator()(char* p) const { free(p); }
  };
  // Writes the full staged buffer.
  bool FlushStage();
  bool WriteAll(const char* p, size_t n);
  bool SetDirect(bool on);

  int fd_;
  bool may_direct_;
  const size_t stage_bytes_;
  const uint64_t direct_after_;
  std::unique_ptr<char, FreeDeleter> stage_;
  size_t staged_ = 0;
  uint64_t offset_ = 0;  // bytes in the file
  bool direct_ = false;
  bool wrote_direct_ = false;
  bool failed_ = false;
};

}  // namespace katrace

#endif  // KATRACE_COMMON_FILE_WRITER_H_
