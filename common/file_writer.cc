#include "common/file_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

namespace katrace {

FileWriter::FileWriter(int fd, bool may_bypass_cache, size_t stage_bytes, uint64_t direct_after)
    : fd_(fd), may_direct_(may_bypass_cache), stage_bytes_(stage_bytes), direct_after_(direct_after) {
  void* p = nullptr;
  if (posix_memalign(&p, kAlign, stage_bytes_) == 0) {
    stage_.reset(static_cast<char*>(p));
  } else {
    may_direct_ = false;  // no aligned buffer: every write goes straight to the file
  }
}

FileWriter::~FileWriter() {
  if (fd_ >= 0) close(fd_);
}

bool FileWriter::SetDirect(bool on) {
  const int flags = fcntl(fd_, F_GETFL);
  if (flags < 0 || fcntl(fd_, F_SETFL, on ? flags | O_DIRECT : flags & ~O_DIRECT) != 0) return false;
  direct_ = on;
  return true;
}

bool FileWriter::WriteAll(const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EINVAL && direct_) {
      // The file system takes the flag but not these writes: the page cache it is.
      may_direct_ = false;
      if (!SetDirect(false)) return false;
      continue;
    }
    if (w <= 0) {
      if (w == 0) errno = EIO;
      return false;
    }
    if (direct_) wrote_direct_ = true;
    p += w;
    n -= static_cast<size_t>(w);
    offset_ += static_cast<uint64_t>(w);
  }
  return true;
}

bool FileWriter::FlushStage() {
  // Only whole staged buffers were written before, so the file's end is aligned here: this is
  // where the bulk may start to bypass the cache.
  if (may_direct_ && !direct_ && offset_ >= direct_after_ && !SetDirect(true)) may_direct_ = false;
  staged_ = 0;
  return WriteAll(stage_.get(), stage_bytes_);
}

bool FileWriter::Write(const char* data, size_t n) {
  if (failed_) {
    errno = EIO;
    return false;
  }
  if (!stage_) {
    failed_ = !WriteAll(data, n);
    return !failed_;
  }
  while (n > 0) {
    const size_t take = n < stage_bytes_ - staged_ ? n : stage_bytes_ - staged_;
    memcpy(stage_.get() + staged_, data, take);
    staged_ += take;
    data += take;
    n -= take;
    if (staged_ == stage_bytes_ && !FlushStage()) {
      failed_ = true;
      return false;
    }
  }
  return true;
}

bool FileWriter::Close() {
  bool ok = !failed_;
  if (ok && staged_ > 0) {
    // The aligned part of the rest may still go direct; the tail goes through the page cache.
    const size_t aligned = direct_ ? staged_ - staged_ % kAlign : 0;
    const size_t tail = staged_ - aligned;
    ok = (aligned == 0 || WriteAll(stage_.get(), aligned)) && (tail == 0 || !direct_ || SetDirect(false)) &&
         (tail == 0 || WriteAll(stage_.get() + aligned, tail));
    staged_ = 0;
  }
  const int saved = errno;
  const int rc = close(fd_);
  fd_ = -1;
  if (!ok) {
    errno = saved;
    return false;
  }
  return rc == 0;
}

}  // namespace katrace
