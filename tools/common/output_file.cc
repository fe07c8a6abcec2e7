// OutputFile: write(2) or gzwrite behind a 1 MiB buffer, temporary name, rename on commit.
#include "tools/common/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace katrace::tools {
namespace {
constexpr size_t kBufferBytes = 1 << 20;
}  // namespace

bool HasGzipSuffix(const std::string& path) {
  return path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

OutputFile::~OutputFile() { Abandon(); }

bool OutputFile::Open(const std::string& path, bool gzip, std::string* error) {
  path_ = path;
  struct stat st;
  const bool special = path != "-" && stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  if (path == "-") {
    fd_ = dup(STDOUT_FILENO);
  } else if (special) {
    // A device or pipe (/dev/null, a FIFO): write in place; renaming over it would replace it.
    fd_ = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  } else {
    tmp_path_ = path + ".tmp";
    fd_ = open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  if (fd_ < 0) {
    *error = "cannot create " + (tmp_path_.empty() ? path : tmp_path_) + ": " +
             std::strerror(errno);
    return false;
  }
  if (gzip) {
    gz_ = gzdopen(fd_, "wb6");
    if (gz_ == nullptr) {
      *error = "cannot start gzip output";
      Abandon();
      return false;
    }
    fd_ = -1;  // owned by gz_ now
    gzbuffer(gz_, kBufferBytes);
  }
  buffer_.reserve(kBufferBytes);
  return true;
}

bool OutputFile::Write(std::string_view data) {
  if (!error_.empty()) return false;
  buffer_.append(data);
  bytes_written_ += data.size();
  return buffer_.size() < kBufferBytes || Flush();
}

bool OutputFile::Flush() {
  if (!error_.empty()) return false;
  const char* p = buffer_.data();
  size_t left = buffer_.size();
  while (left > 0) {
    if (gz_ != nullptr) {
      const int n = gzwrite(gz_, p, static_cast<unsigned>(left));
      if (n <= 0) {
        int errnum = 0;
        error_ = std::string("gzip write failed: ") + gzerror(gz_, &errnum);
        return false;
      }
      p += n;
      left -= static_cast<size_t>(n);
    } else {
      const ssize_t n = write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error_ = std::string("write failed: ") + std::strerror(errno);
        return false;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  buffer_.clear();
  return true;
}

bool OutputFile::Commit(std::string* error) {
  bool ok = Flush();
  if (gz_ != nullptr) {
    const int rc = gzclose(gz_);
    gz_ = nullptr;
    if (ok && rc != Z_OK) {
      ok = false;
      error_ = "gzip close failed";
    }
  } else if (fd_ >= 0) {
    if (close(fd_) != 0 && ok) {
      ok = false;
      error_ = std::string("close failed: ") + std::strerror(errno);
    }
    fd_ = -1;
  }
  if (ok && !tmp_path_.empty() && std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    ok = false;
    error_ = "cannot rename " + tmp_path_ + " to " + path_ + ": " + std::strerror(errno);
  }
  if (!ok) {
    *error = error_;
    if (!tmp_path_.empty()) unlink(tmp_path_.c_str());
  }
  tmp_path_.clear();
  return ok;
}

void OutputFile::Abandon() {
  if (gz_ != nullptr) gzclose(gz_);
  if (fd_ >= 0) close(fd_);
  gz_ = nullptr;
  fd_ = -1;
  if (!tmp_path_.empty()) unlink(tmp_path_.c_str());
  tmp_path_.clear();
}

}  // namespace katrace::tools
