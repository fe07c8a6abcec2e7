// Where the trace bytes go: a temporary file next to the final path, plain (through FileWriter,
// which writes a big trace past the page cache) or gzip, renamed to the final name only when the
// trace is complete. Errors (unwritable directory, full disk) are
// reported once with the path and the reason; after an error the sink swallows writes so the job
// never stalls on I/O.
#ifndef KATRACE_PLUGIN_OUTPUT_SINK_H_
#define KATRACE_PLUGIN_OUTPUT_SINK_H_

#include <stdint.h>

#include <memory>
#include <string>

#include <zlib.h>

#include "common/file_writer.h"

namespace katrace {

class OutputSink {
 public:
  OutputSink() = default;
  ~OutputSink();
  OutputSink(const OutputSink&) = delete;
  OutputSink& operator=(const OutputSink&) = delete;

  // Opens "<path>.tmp.<pid>" (the next free "<path>.tmp.<pid>.<n>" when that exists:
  // common/unique_temp_file.h), or |path| itself when it is a device or pipe. When the directory
  // is not writable, falls back to the same file name in $TMPDIR (or /tmp) and says so. Returns
  // false when nothing could be opened.
  bool Open(const std::string& path, bool gzip);
  void Write(const char* data, size_t n);
  // Flushes, closes and renames to the final path. Returns false on any error so far.
  bool Commit();

  const std::string& path() const { return path_; }
  bool failed() const { return failed_; }
  uint64_t bytes_written() const { return bytes_; }
  uint64_t io_errors() const { return io_errors_; }

 private:
  bool OpenAt(const std::string& path, std::string* error);
  void Fail(const std::string& what, int err);

  std::string path_;
  std::string tmp_path_;
  bool gzip_ = false;
  bool in_place_ = false;
  std::unique_ptr<FileWriter> file_;
  gzFile gz_ = nullptr;
  bool failed_ = false;
  uint64_t bytes_ = 0;
  uint64_t io_errors_ = 0;
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_OUTPUT_SINK_H_
