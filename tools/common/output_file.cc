// OutputFile: FileWriter, or gzwrite behind a 1 MiB buffer; temporary name, rename on commit.
#include "tools/common/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/unique_temp_file.h"

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
  int fd = -1;
  if (path == "-") {
    fd = dup(STDOUT_FILENO);
  } else if (special) {
    // A device or pipe (/dev/null, a FIFO): write in place; renaming over it would replace it.
    fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  } else {
    fd = CreateUniqueTempFile(path, &tmp_path_);
  }
  if (fd < 0) {
    *error = (special || path == "-" ? "cannot open " + path : "cannot create a temporary file for " + path) + ": " +
             std::strerror(errno);
    return false;
  }
  if (gzip) {
    gz_ = gzdopen(fd, "wb6");
    if (gz_ == nullptr) {
      close(fd);
      *error = "cannot start gzip output";
      Abandon();
      return false;
    }
    gzbuffer(gz_, kBufferBytes);
    buffer_.reserve(kBufferBytes);
  } else {
    // Only the new regular file may bypass the page cache: stdout and devices keep their writes.
    file_ = std::make_unique<FileWriter>(fd, !tmp_path_.empty());
  }
  return true;
}

bool OutputFile::Write(std::string_view data) {
  if (!error_.empty()) return false;
  bytes_written_ += data.size();
  if (file_ != nullptr) {
    if (file_->Write(data.data(), data.size())) return true;
    error_ = std::string("write failed: ") + std::strerror(errno);
    return false;
  }
  buffer_.append(data);
  return buffer_.size() < kBufferBytes || FlushGzip();
}

bool OutputFile::FlushGzip() {
  if (!error_.empty()) return false;
  const char* p = buffer_.data();
  size_t left = buffer_.size();
  while (left > 0 && gz_ != nullptr) {
    const int n = gzwrite(gz_, p, static_cast<unsigned>(left));
    if (n <= 0) {
      int errnum = 0;
      error_ = std::string("gzip write failed: ") + gzerror(gz_, &errnum);
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  buffer_.clear();
  return true;
}

bool OutputFile::Commit(std::string* error) {
  bool ok = error_.empty();
  if (gz_ != nullptr) {
    ok = FlushGzip();
    const int rc = gzclose(gz_);
    gz_ = nullptr;
    if (ok && rc != Z_OK) {
      ok = false;
      error_ = "gzip close failed";
    }
  } else if (file_ != nullptr) {
    if (!file_->Close() && ok) {
      ok = false;
      error_ = std::string("write failed: ") + std::strerror(errno);
    }
    file_.reset();
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
  gz_ = nullptr;
  file_.reset();  // closes the file
  if (!tmp_path_.empty()) unlink(tmp_path_.c_str());
  tmp_path_.clear();
}

}  // namespace katrace::tools
