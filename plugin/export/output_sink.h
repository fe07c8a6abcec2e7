// Where the export's trace bytes go: common/output_file.h with the plugin's policy. A trace is
// worth more than a tool's output (the capture cannot be run again), so the sink never gives up
// early: an unwritable directory falls back (where the caller allows it) to the same file name in $TMPDIR (or /tmp), a
// directory in the way or a failed rename leaves the whole trace under its temporary name, a
// failed write keeps the partial file. Errors (unwritable directory, full disk) are reported
// once, with the path and the reason, as warnings (common/warning.h: NCCL's log in the plugin,
// stderr in katrace-export); after an error the sink swallows writes, so the job never stalls
// on I/O.
#ifndef KATRACE_PLUGIN_EXPORT_OUTPUT_SINK_H_
#define KATRACE_PLUGIN_EXPORT_OUTPUT_SINK_H_

#include <stddef.h>
#include <stdint.h>

#include <string>

#include "common/output_file.h"

namespace katrace {

class OutputSink {
 public:
  OutputSink();
  OutputSink(const OutputSink&) = delete;
  OutputSink& operator=(const OutputSink&) = delete;

  // Opens "<path>.tmp.<pid>" (the next free "<path>.tmp.<pid>.<n>" when that exists:
  // common/unique_temp_file.h), or |path| itself when it is a device or pipe. When the directory
  // is not writable, falls back to the same file name in $TMPDIR (or /tmp) and says so, where
  // |fallback| allows it (not for a path a user named on katrace-export's command line, where a
  // file of that name in $TMPDIR would be overwritten unasked). Returns false when nothing could
  // be opened.
  bool Open(const std::string& path, bool gzip, bool fallback = true);
  void Write(const char* data, size_t n);
  // Flushes, closes and renames to the final path. Returns false on any error so far.
  bool Commit();

  const std::string& path() const { return file_.path(); }
  uint64_t bytes_written() const { return file_.bytes_written(); }
  uint64_t io_errors() const { return io_errors_; }
  // Written in place (a device, a pipe, one of the process's descriptors): no file of its own.
  bool in_place() const { return file_.in_place(); }
  // Why Open failed, when it did without a fallback.
  const std::string& failed_reason() const { return file_.failed_reason(); }

 private:
  // Counts the file's failure and warns about the first.
  void Fail();

  OutputFile file_;
  bool failed_ = false;
  uint64_t io_errors_ = 0;
  bool job_goes_on_ = true;  // the messages say so only in the plugin's own export
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_OUTPUT_SINK_H_
