#include "plugin/export/output_sink.h"

#include "common/paths.h"
#include "common/warning.h"

namespace katrace {
namespace {

// A trace path is a file name ("-" too), a directory in the way is written beside, and what was
// written stays when the output fails.
OutputFilePolicy TracePolicy() {
  OutputFilePolicy p;
  p.dash_is_stdout = false;
  p.refuse_directory = false;
  p.keep_failed_temp = true;
  return p;
}

}  // namespace

OutputSink::OutputSink() : file_(TracePolicy()) {}

bool OutputSink::Open(const std::string& path, bool gzip, bool fallback) {
  std::string ignored;  // the warnings below word it for the plugin
  // Only the plugin's own export falls back; katrace-export, which does not, has no job to go on.
  job_goes_on_ = fallback;
  if (file_.Open(path, gzip, &ignored)) return true;
  const std::string error = file_.failed_reason();
  if (!fallback) {
    failed_ = true;  // the caller says so, with failed_reason()
    return false;
  }
  const std::string elsewhere = InTempDir(path);
  if (elsewhere != path && file_.Open(elsewhere, gzip, &ignored)) {
    Warn("cannot write the trace to '" + path + "' (" + error + "); writing it to '" + elsewhere + "' instead");
    return true;
  }
  Warn("cannot write the trace to '" + path + "' (" + error +
       "); no trace file will be written, the job goes on (set KATRACE_OUTPUT to a writable path)");
  failed_ = true;
  return false;
}

void OutputSink::Fail() {
  ++io_errors_;
  if (failed_) return;
  failed_ = true;
  const std::string reason = file_.failed_reason();
  const std::string& tmp = file_.temp_path();
  if (file_.failed_step() == OutputFile::Step::kRename) {
    Warn("renaming '" + tmp + "' to '" + file_.path() + "' failed (" + reason + "); the complete trace is in '" + tmp +
         "'");
    return;
  }
  const std::string what = file_.failed_step() == OutputFile::Step::kClose ? "closing" : "writing";
  const std::string goes_on = job_goes_on_ ? "; the job goes on" : "";
  if (file_.in_place()) {
    Warn(what + " '" + file_.path() + "' failed (" + reason + "); the rest of the trace is lost" + goes_on);
  } else if (file_.temp_holds_nothing()) {
    Warn(what + " '" + tmp + "' failed (" + reason + "); nothing of the trace reached the file, which is removed" +
         goes_on);
  } else {
    Warn(what + " '" + tmp + "' failed (" + reason + "); the rest of the trace is lost" + goes_on +
         "; the partial file is kept");
  }
}

void OutputSink::Write(const char* data, size_t n) {
  if (failed_ || n == 0) return;
  if (!file_.Write(data, n)) Fail();
}

bool OutputSink::Commit() {
  std::string ignored;
  if (file_.Commit(&ignored)) return true;
  if (!failed_) Fail();
  return false;
}

}  // namespace katrace
