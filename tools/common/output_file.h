// Buffered output to a file (plain or gzip) written under a temporary name unique to this process
// (common/unique_temp_file.h) and renamed on Commit, so a file with the final name is always
// complete and two processes writing the same output never write into one file. "-" writes to
// stdout, and an existing device or pipe (/dev/null, a FIFO) is written in place, never renamed
// over. Plain output goes through FileWriter, which writes the bulk of a big new file past the
// page cache.
// Thread safety: none.
#ifndef KATRACE_TOOLS_COMMON_OUTPUT_FILE_H_
#define KATRACE_TOOLS_COMMON_OUTPUT_FILE_H_

#include <zlib.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/file_writer.h"

namespace katrace::tools {

class OutputFile {
 public:
  OutputFile() = default;
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  bool Open(const std::string& path, bool gzip, std::string* error);
  // Buffered; false after a write error (kept in error()).
  bool Write(std::string_view data);
  // Flushes, closes and renames into place. On failure the temporary file is removed.
  bool Commit(std::string* error);
  // Uncompressed bytes written so far.
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  bool FlushGzip();
  void Abandon();

  std::string path_;
  std::string tmp_path_;
  std::unique_ptr<FileWriter> file_;  // plain output
  gzFile gz_ = nullptr;
  std::string buffer_;  // gzip output's
  uint64_t bytes_written_ = 0;
  std::string error_;
};

// True for names ending in ".gz".
bool HasGzipSuffix(const std::string& path);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_OUTPUT_FILE_H_
