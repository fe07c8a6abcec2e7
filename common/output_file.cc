// OutputFile: FileWriter, or gzwrite behind a 1 MiB buffer; temporary name, rename on Commit.
#include "common/output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/unique_temp_file.h"

namespace katrace {
namespace {

constexpr size_t kBufferBytes = 1 << 20;
// Pieces at least this big go to zlib at once: the buffer only saves the calls of a writer of
// many small pieces (a tool's lines), and a big piece's write error is seen at that write, while
// the caller may still count it (the plugin's trace footer does).
constexpr size_t kUnbufferedBytes = 64 << 10;

std::string ErrnoText(int err) { return strerror(err); }

}  // namespace

OutputFile::~OutputFile() { Abandon(); }

void OutputFile::Fail(Step step, int err, std::string text) {
  if (failed_step_ != Step::kNone) return;
  failed_step_ = step;
  failed_errno_ = err;
  error_ = std::move(text);
}

void OutputFile::Abandon() {
  if (gz_ != nullptr) gzclose(gz_);
  gz_ = nullptr;
  file_.reset();  // closes the file
  if (temp_live_ && !policy_.keep_failed_temp) unlink(tmp_path_.c_str());
  temp_live_ = false;
}

bool OutputFile::Open(const std::string& path, bool gzip, std::string* error) {
  // A second Open (a fallback path) starts afresh.
  Abandon();
  path_ = path;
  tmp_path_.clear();
  in_place_ = false;
  buffer_.clear();
  bytes_written_ = 0;
  failed_step_ = Step::kNone;
  failed_errno_ = 0;
  error_.clear();
  if (!OpenFile(path, gzip)) {
    *error = error_;
    return false;
  }
  return true;
}

bool OutputFile::OpenFile(const std::string& path, bool gzip) {
  const bool dash = policy_.dash_is_stdout && path == "-";
  // Only what is not a regular file (a device, a pipe; a directory where the policy refuses
  // one, so that opening it fails and says why) is written in place: renaming onto it would
  // replace it. Everything else goes to a temporary name, created exclusively.
  struct stat st;
  const bool special = !dash && stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) &&
                       (policy_.refuse_directory || !S_ISDIR(st.st_mode));
  int fd = -1;
  if (dash) {
    fd = dup(STDOUT_FILENO);
  } else if (special) {
    fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  } else {
    fd = CreateUniqueTempFile(path, &tmp_path_);
  }
  if (fd < 0) {
    const int err = errno;
    Fail(Step::kOpen, err,
         (dash || special ? "cannot open " + path : "cannot create a temporary file for " + path) + ": " +
             ErrnoText(err));
    return false;
  }
  in_place_ = dash || special;
  temp_live_ = !in_place_;
  if (gzip) {
    gz_ = gzdopen(fd, "wb6");
    if (gz_ == nullptr) {
      close(fd);
      // Nothing was written: the empty temporary file goes, whatever the policy.
      if (temp_live_) unlink(tmp_path_.c_str());
      temp_live_ = false;
      Fail(Step::kOpen, 0, "cannot start gzip output");
      return false;
    }
    gzbuffer(gz_, kBufferBytes);
    buffer_.reserve(kBufferBytes);
  } else {
    // Only the new regular file may bypass the page cache: stdout and devices keep their writes.
    file_ = std::make_unique<FileWriter>(fd, !in_place_);
  }
  return true;
}

bool OutputFile::Write(std::string_view data) {
  if (failed_step_ != Step::kNone) return false;
  if (file_ != nullptr) {
    errno = 0;
    if (!file_->Write(data.data(), data.size())) {
      const int err = errno != 0 ? errno : EIO;
      Fail(Step::kWrite, err, "write failed: " + ErrnoText(err));
      return false;
    }
  } else if (gz_ == nullptr) {
    return false;  // not open
  } else if (data.size() >= kUnbufferedBytes) {
    if (!Flush() || !WriteGzip(data.data(), data.size())) return false;
  } else {
    buffer_.append(data);
    if (buffer_.size() >= kBufferBytes && !Flush()) return false;
  }
  bytes_written_ += data.size();
  return true;
}

bool OutputFile::WriteGzip(const char* p, size_t n) {
  while (n > 0) {
    const unsigned piece = n < (1u << 30) ? static_cast<unsigned>(n) : 1u << 30;
    errno = 0;
    const int w = gzwrite(gz_, p, piece);
    if (w <= 0) {
      int zerr = 0;
      const char* what = gzerror(gz_, &zerr);
      Fail(Step::kWrite, zerr == Z_ERRNO && errno != 0 ? errno : EIO, std::string("gzip write failed: ") + what);
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool OutputFile::Flush() {
  if (buffer_.empty()) return true;
  const bool ok = WriteGzip(buffer_.data(), buffer_.size());
  buffer_.clear();
  return ok;
}

bool OutputFile::Commit(std::string* error) {
  bool ok = failed_step_ == Step::kNone;
  if (gz_ != nullptr) {
    if (ok) ok = Flush();
    errno = 0;
    const int rc = gzclose(gz_);
    const int err = errno != 0 ? errno : EIO;
    gz_ = nullptr;
    if (ok && rc != Z_OK) {
      Fail(Step::kClose, err, "gzip close failed");
      ok = false;
    }
  } else if (file_ != nullptr) {
    errno = 0;
    const bool closed = file_->Close();
    const int err = errno != 0 ? errno : EIO;
    file_.reset();
    if (ok && !closed) {
      Fail(Step::kClose, err, "write failed: " + ErrnoText(err));
      ok = false;
    }
  } else if (ok) {
    Fail(Step::kClose, EBADF, "no output is open for " + path_);
    ok = false;
  }
  if (ok && !in_place_ && rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    Fail(Step::kRename, err, "cannot rename " + tmp_path_ + " to " + path_ + ": " + ErrnoText(err));
    ok = false;
  }
  if (!ok) {
    *error = error_;
    if (temp_live_ && !policy_.keep_failed_temp) unlink(tmp_path_.c_str());
  }
  temp_live_ = false;
  return ok;
}

}  // namespace katrace
