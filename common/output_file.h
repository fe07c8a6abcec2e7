// One output file written whole or not at all, for the plugin's trace (through
// plugin/export/output_sink.h) and every tool's output: bytes go to a temporary name unique to
// this process (common/unique_temp_file.h), renamed onto the final name by Commit, so a file with
// the final name is always complete and two processes writing the same output never write into
// one file. An existing device or pipe (/dev/null, /dev/stdout, a FIFO) is written in place,
// never renamed over; a FIFO only once a reader has it open (within seconds: never a hang), and
// a reader of a pipe that goes away fails the output with EPIPE, never kills the process with
// SIGPIPE (common/sigpipe_guard.h). Plain output goes through FileWriter, which writes the bulk of a big new
// file past the page cache; gzip output through zlib behind a 1 MiB buffer.
//
// The plugin and the tools differ in three things, chosen by OutputFilePolicy: what "-" means,
// whether an existing directory is refused at once, and whether a failed output's temporary file
// is kept. Failures are returned as text (a tool prints it) and as a step and errno (the plugin
// words its own warning).
// Thread safety: none.
#ifndef KATRACE_COMMON_OUTPUT_FILE_H_
#define KATRACE_COMMON_OUTPUT_FILE_H_

#include <stddef.h>
#include <stdint.h>

#include <zlib.h>

#include <memory>
#include <string>
#include <string_view>

#include "common/file_writer.h"

namespace katrace {

// The defaults are a tool's.
struct OutputFilePolicy {
  // "-" is standard output, as on a tool's command line (the plugin's trace path is always a
  // file name, "-" included).
  bool dash_is_stdout = true;
  // An existing directory at the path fails Open at once (a tool says so before any work). Not
  // refused, the output is written beside it under the temporary name, which Commit then cannot
  // rename: the plugin keeps the trace there (keep_failed_temp) and says where.
  bool refuse_directory = true;
  // A temporary file whose output failed (a write, the close or the rename), or that was never
  // committed, stays with what it holds (the plugin: a capture cannot be run again) instead of
  // being removed (a tool is simply run again); an empty one is removed either way.
  bool keep_failed_temp = false;
  // How long an existing FIFO is given for a reader to open it, before Open fails: blocking in
  // open() until one comes would hang the plugin at the application's exit, and a tool for good,
  // when none ever does.
  int fifo_reader_wait_ms = 10000;
};

class OutputFile {
 public:
  // Where the first failure happened.
  enum class Step { kNone, kOpen, kWrite, kClose, kRename };

  explicit OutputFile(OutputFilePolicy policy = OutputFilePolicy()) : policy_(policy) {}
  ~OutputFile();  // without Commit: closed, and the temporary file handled as a failure's
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Opens |path| for writing (gzip when |gzip|). False with |*error| set when nothing could be
  // opened; Open may then be called again, e.g. for a fallback path.
  bool Open(const std::string& path, bool gzip, std::string* error);
  // Buffered; false after a write error (it, and every later write, fail; see error()).
  bool Write(std::string_view data);
  bool Write(const char* data, size_t n) { return Write(std::string_view(data, n)); }
  // Flushes, closes and renames into place. False on any failure so far, with |*error| set.
  bool Commit(std::string* error);

  const std::string& path() const { return path_; }
  // Written in place (a device, a pipe, stdout): there is no temporary file.
  bool in_place() const { return in_place_; }
  // The temporary file's name (kept after Commit, for messages); "" when in place.
  const std::string& temp_path() const { return tmp_path_; }
  // The temporary file is empty or gone: a failed output's is then removed whatever the policy
  // (an empty file kept "for what it holds" holds nothing).
  bool temp_holds_nothing() const;
  // Uncompressed bytes taken so far.
  uint64_t bytes_written() const { return bytes_written_; }
  // The first failure: its step, its errno (0 when none applies: gzip could not start) and its
  // text ("write failed: No space left on device").
  Step failed_step() const { return failed_step_; }
  int failed_errno() const { return failed_errno_; }
  const std::string& error() const { return error_; }
  // The first failure's cause alone, for a caller that words its own message ("Broken pipe").
  const std::string& failed_reason() const { return reason_; }

 private:
  bool OpenFile(const std::string& path, bool gzip);
  bool Flush();
  bool WriteGzip(const char* p, size_t n);
  void Fail(Step step, int err, std::string text, std::string reason = "");
  // Closes whatever is open; the temporary file is removed unless the policy keeps it.
  void Abandon();

  const OutputFilePolicy policy_;
  std::string path_;
  std::string tmp_path_;
  bool in_place_ = false;
  bool pipe_ = false;  // a FIFO or socket: its writes are guarded against SIGPIPE
  bool temp_live_ = false;  // the temporary file exists and is neither renamed nor given up
  std::unique_ptr<FileWriter> file_;  // plain output
  gzFile gz_ = nullptr;
  std::string buffer_;  // gzip output's
  uint64_t bytes_written_ = 0;
  Step failed_step_ = Step::kNone;
  int failed_errno_ = 0;
  std::string error_;
  std::string reason_;
};

}  // namespace katrace

#endif  // KATRACE_COMMON_OUTPUT_FILE_H_
