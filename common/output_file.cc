// OutputFile: FileWriter, or gzwrite behind a 1 MiB buffer; temporary name, rename on Commit.
#include "common/output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/in_place_path.h"
#include "common/sigpipe_guard.h"
#include "common/unique_temp_file.h"

namespace katrace {
namespace {

constexpr size_t kBufferBytes = 1 << 20;
// Pieces at least this big go to zlib at once: the buffer only saves the calls of a writer of
// many small pieces (a tool's lines), and a big piece's write error is seen at that write, while
// the caller may still count it (the plugin's trace footer does).
constexpr size_t kUnbufferedBytes = 64 << 10;

constexpr int kFifoRetryMs = 20;

std::string ErrnoText(int err) { return strerror(err); }

std::string FifoWaitText(int ms) { return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms"; }

// |path|, a FIFO, opened for blocking writes once a reader has it open; -1 with errno set
// otherwise (ENXIO: no reader came within |wait_ms|).
int OpenFifoForWriting(const std::string& path, int wait_ms) {
  int fd = -1;
  for (int waited = 0;; waited += kFifoRetryMs) {
    fd = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0 || errno != ENXIO || waited >= wait_ms) break;
    const timespec pause = {0, kFifoRetryMs * 1000000L};
    nanosleep(&pause, nullptr);
  }
  if (fd < 0) return -1;
  // The reader sets the pace from here on, as for any writer into a pipe.
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

}  // namespace

OutputFile::~OutputFile() { Abandon(); }

void OutputFile::Fail(Step step, int err, std::string text, std::string reason) {
  if (failed_step_ != Step::kNone) return;
  failed_step_ = step;
  failed_errno_ = err;
  error_ = std::move(text);
  reason_ = !reason.empty() ? std::move(reason) : err != 0 ? ErrnoText(err) : error_;
}

void OutputFile::Abandon() {
  SigpipeGuard guard(pipe_);
  if (gz_ != nullptr) gzclose(gz_);
  gz_ = nullptr;
  file_.reset();  // closes the file
  if (temp_live_ && (!policy_.keep_failed_temp || temp_holds_nothing())) unlink(tmp_path_.c_str());
  temp_live_ = false;
}

bool OutputFile::temp_holds_nothing() const {
  struct stat st;
  return tmp_path_.empty() || stat(tmp_path_.c_str(), &st) != 0 || st.st_size == 0;
}

bool OutputFile::Open(const std::string& path, bool gzip, std::string* error) {
  // A second Open (a fallback path) starts afresh.
  Abandon();
  path_ = path;
  tmp_path_.clear();
  in_place_ = false;
  pipe_ = false;
  buffer_.clear();
  bytes_written_ = 0;
  failed_step_ = Step::kNone;
  failed_errno_ = 0;
  error_.clear();
  reason_.clear();
  if (!OpenFile(path, gzip)) {
    *error = error_;
    return false;
  }
  return true;
}

bool OutputFile::OpenFile(const std::string& path, bool gzip) {
  // One of this process's descriptors by name ("-" where the policy says so, /dev/stdout): a
  // duplicate of it, written at its offset with its flags, whatever it is.
  const int own = policy_.dash_is_stdout && path == "-" ? STDOUT_FILENO : DescriptorNamedBy(path);
  const bool dash = own >= 0;
  // Otherwise only what is not a regular file (a device, a pipe; a directory where the policy
  // refuses one, so that opening it fails and says why) is written in place: renaming onto it
  // would replace it (common/in_place_path.h). Everything else goes to a temporary name,
  // created exclusively.
  struct stat st;
  const bool special = !dash && stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) &&
                       (policy_.refuse_directory || !S_ISDIR(st.st_mode));
  int fd = -1;
  if (dash) {
    fd = fcntl(own, F_DUPFD_CLOEXEC, 0);
  } else if (special && S_ISFIFO(st.st_mode)) {
    fd = OpenFifoForWriting(path, policy_.fifo_reader_wait_ms);
  } else if (special) {
    fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  } else {
    fd = CreateUniqueTempFile(path, &tmp_path_);
  }
  if (fd < 0) {
    const int err = errno;
    const bool no_reader = special && S_ISFIFO(st.st_mode) && err == ENXIO;
    const std::string reason = no_reader ? "no process opened the FIFO for reading within " +
                                               FifoWaitText(policy_.fifo_reader_wait_ms)
                                         : ErrnoText(err);
    Fail(Step::kOpen, err,
         (dash || special ? "cannot open " + path : "cannot create a temporary file for " + path) + ": " + reason, reason);
    return false;
  }
  in_place_ = dash || special;
  struct stat opened;
  pipe_ = fstat(fd, &opened) == 0 && (S_ISFIFO(opened.st_mode) || S_ISSOCK(opened.st_mode));
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
  SigpipeGuard guard(pipe_);
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
  SigpipeGuard guard(pipe_);
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
    if (temp_live_ && (!policy_.keep_failed_temp || temp_holds_nothing())) unlink(tmp_path_.c_str());
  }
  temp_live_ = false;
  return ok;
}

}  // namespace katrace
