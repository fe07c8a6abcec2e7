#include "plugin/output_sink.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/unique_temp_file.h"
#include "plugin/logger.h"

namespace katrace {

OutputSink::~OutputSink() {
  if (gz_ != nullptr) gzclose(gz_);
}

bool OutputSink::OpenAt(const std::string& path, std::string* error) {
  // Only what is not a regular file (a device such as /dev/null or /dev/stdout, a pipe) is
  // written in place: nothing can be renamed onto it. Everything else goes to a temporary name
  // unique to this process, created exclusively, and is renamed when whole.
  struct stat st;
  in_place_ = stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
  std::string tmp = path;
  int fd = in_place_ ? open(path.c_str(), O_WRONLY | O_CLOEXEC) : CreateUniqueTempFile(path, &tmp);
  if (fd < 0) {
    *error = strerror(errno);
    return false;
  }
  if (gzip_) {
    gz_ = gzdopen(fd, "wb6");
    if (gz_ == nullptr) {
      close(fd);
      *error = "cannot start gzip";
      return false;
    }
    gzbuffer(gz_, 1 << 20);
  } else {
    // A device or pipe keeps its usual writes; a new regular file may bypass the page cache.
    file_ = std::make_unique<FileWriter>(fd, !in_place_);
  }
  path_ = path;
  tmp_path_ = tmp;
  return true;
}

bool OutputSink::Open(const std::string& path, bool gzip) {
  gzip_ = gzip;
  std::string error;
  errno = 0;
  if (OpenAt(path, &error)) return true;
  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  const char* tmpdir = getenv("TMPDIR");
  std::string fallback = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") + "/" + base;
  std::string error2;
  errno = 0;
  if (fallback != path && OpenAt(fallback, &error2)) {
    LogWarn("cannot write the trace to '" + path + "' (" + error + "); writing it to '" + fallback +
            "' instead");
    return true;
  }
  LogWarn("cannot write the trace to '" + path + "' (" + error +
          "); no trace file will be written, the job goes on (set KATRACE_OUTPUT to a writable path)");
  failed_ = true;
  return false;
}

void OutputSink::Fail(const std::string& what, int err) {
  ++io_errors_;
  if (failed_) return;
  failed_ = true;
  if (what == "renaming") {
    LogWarn("renaming '" + tmp_path_ + "' to '" + path_ + "' failed (" + strerror(err) +
            "); the complete trace is in '" + tmp_path_ + "'");
  } else if (in_place_) {
    LogWarn(what + " '" + path_ + "' failed (" + strerror(err) + "); the rest of the trace is lost, the job goes on");
  } else {
    LogWarn(what + " '" + tmp_path_ + "' failed (" + strerror(err) +
            "); the rest of the trace is lost, the job goes on; the partial file is kept");
  }
}

void OutputSink::Write(const char* data, size_t n) {
  if (failed_ || n == 0) return;
  errno = 0;
  if (gz_ != nullptr) {
    int w = gzwrite(gz_, data, static_cast<unsigned>(n));
    if (w <= 0 || static_cast<size_t>(w) != n) {
      int err = 0;
      gzerror(gz_, &err);
      Fail("writing", err == Z_ERRNO && errno != 0 ? errno : EIO);
      return;
    }
  } else if (file_ != nullptr) {
    if (!file_->Write(data, n)) {
      Fail("writing", errno != 0 ? errno : EIO);
      return;
    }
  } else {
    return;
  }
  bytes_ += n;
}

bool OutputSink::Commit() {
  bool ok = !failed_;
  errno = 0;
  if (gz_ != nullptr) {
    int rc = gzclose(gz_);
    gz_ = nullptr;
    if (rc != Z_OK && ok) Fail("closing", errno != 0 ? errno : EIO), ok = false;
  } else if (file_ != nullptr) {
    const bool closed = file_->Close();
    file_.reset();
    if (!closed && ok) Fail("closing", errno != 0 ? errno : EIO), ok = false;
  } else {
    return false;
  }
  if (!ok) return false;
  if (!in_place_ && rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    Fail("renaming", errno);
    return false;
  }
  return true;
}

}  // namespace katrace
