#include "plugin/capture/spool_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/in_place_path.h"
#include "common/paths.h"
#include "plugin/capture/block_frame.h"
#include "plugin/clock.h"
#include "plugin/logger.h"

namespace katrace {
namespace {

std::string Dirname(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

int CreateExclusive(const std::string& path) {
  return open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
}

}  // namespace

SpoolFile::~SpoolFile() { Close(); }

bool SpoolFile::Create(const std::string& trace_path, int os_pid, bool compress, std::string* note,
                       std::string* error) {
  compress_ = compress;
  note->clear();
  auto try_dir = [&](const std::string& base) {
    std::string candidates[] = {base + ".kspool", base + "." + std::to_string(os_pid) + ".kspool"};
    for (const std::string& c : candidates) {
      fd_ = CreateExclusive(c);
      if (fd_ >= 0) return path_ = c, true;
      if (errno != EEXIST) return false;
    }
    for (int n = 2; n < 1000; ++n) {
      std::string c = base + "." + std::to_string(os_pid) + "." + std::to_string(n) + ".kspool";
      fd_ = CreateExclusive(c);
      if (fd_ >= 0) return path_ = c, true;
      if (errno != EEXIST) return false;
    }
    return false;
  };
  // A spool made but whose header cannot be written (a full disk) is removed again, and the next
  // place tried: an empty file would be left saying nothing.
  auto create = [&](const std::string& base) {
    if (!try_dir(base)) return false;
    if (WriteHeader(os_pid)) return true;
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    unlink(path_.c_str());
    path_.clear();
    errno = err;
    return false;
  };
  // A trace written in place (a device such as /dev/stdout, a pipe) has no directory of its own
  // to spool in: the spool goes to $TMPDIR (or /tmp) under the trace's name.
  const bool in_place = IsWrittenInPlace(trace_path);
  if (in_place && create(InTempDir(trace_path))) return true;
  if (!create(trace_path)) {
    int first_errno = errno;
    std::string fallback = InTempDir(trace_path);
    if (!create(fallback)) {
      *error = "cannot create a spool next to '" + trace_path + "' (" + strerror(first_errno) + ") nor in '" +
               Dirname(fallback) + "' (" + strerror(errno) + ")";
      return false;
    }
    *note = "cannot create a spool in '" + Dirname(trace_path) + "' (" + strerror(first_errno) + "); spooling to '" +
            path_ + "' instead";
  }
  return true;
}

bool SpoolFile::WriteHeader(int os_pid) {
  spool::FileHeader h{};
  memcpy(h.magic, spool::kFileMagic, sizeof(h.magic));
  h.version = spool::kFormatVersion;
  h.header_bytes = sizeof(h);
  h.os_pid = static_cast<uint64_t>(os_pid);
  h.created_realtime_ns = NowRealtimeNs();
  int err = 0;
  if (!WriteAll(reinterpret_cast<const uint8_t*>(&h), sizeof(h), &err)) {
    errno = err;
    return false;
  }
  offset_ = sizeof(h);
  return true;
}

bool SpoolFile::WriteAll(const uint8_t* data, size_t n, int* err) {
  while (n > 0) {
    ssize_t w = write(fd_, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      *err = w < 0 ? errno : ENOSPC;
      return false;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

void SpoolFile::WriteBlock(uint32_t stream, uint32_t os_tid, const uint8_t* raw, uint32_t raw_bytes, bool compress) {
  if (raw_bytes == 0) return;
  bool written = false;
  if (fd_ < 0) {
    // A spool given up after a failure it could not undo: what comes after is lost as well.
  } else if (!(compress_ && compress)) {
    // Written from where the records lie: no copy into a frame.
    uint32_t payload_crc = 0;
    const spool::BlockHeader h = RawBlockHeader(stream, os_tid, sequence_, raw, raw_bytes, &payload_crc);
    written = Append(reinterpret_cast<const uint8_t*>(&h), sizeof(h), raw, raw_bytes, raw_bytes);
  } else {
    FrameBlock(stream, os_tid, sequence_, raw, raw_bytes, true, &frame_, &coded_);
    written = Append(frame_.data(), frame_.size(), nullptr, 0, raw_bytes);
  }
  if (!written) CountLostStarts(raw, raw_bytes);
}

void SpoolFile::CountLostStarts(const uint8_t* raw, uint32_t raw_bytes) {
  for (uint32_t at = 0; raw_bytes - at >= sizeof(spool::RecordHeader);) {
    spool::RecordHeader h;
    memcpy(&h, raw + at, sizeof(h));
    if (h.size < sizeof(h) || h.size > raw_bytes - at) return;  // not whole records: nothing more to read
    if (h.type == spool::RecordType::kStart && h.kind < spool::kCounterKinds) ++lost_starts_[h.kind];
    at += h.size;
  }
}

bool SpoolFile::Append(const uint8_t* frame, size_t n, const uint8_t* rest, size_t rest_n, uint32_t raw_bytes) {
  int err = 0;
  if (WriteAll(frame, n, &err) && (rest_n == 0 || WriteAll(rest, rest_n, &err))) {
    offset_ += n + rest_n;
    raw_total_ += raw_bytes;
    ++sequence_;
    DropBehind();
    return true;
  }
  // A torn block would hide every later one from readers: cut it off again.
  ++io_errors_;
  if (ftruncate(fd_, static_cast<off_t>(offset_)) != 0 || lseek(fd_, static_cast<off_t>(offset_), SEEK_SET) < 0) {
    LogWarn("spool '" + path_ + "': cannot undo a failed write (" + strerror(errno) + "); the spool ends here");
    ::close(fd_);
    fd_ = -1;
    return false;
  }
  if (io_errors_ == 1) {
    LogWarn("cannot write the spool '" + path_ + "' (" + strerror(err) +
            "); events captured while writes fail are lost and counted, the job goes on");
  }
  return false;
}

void SpoolFile::DropBehind() {
  if (offset_ < started_to_ || offset_ - started_to_ < chunk_) return;
  // The chunk before the one just started has had a whole chunk's time to reach the disk: wait
  // for it (rarely needed) and give its pages back, then start the writeback of the new one.
  if (started_to_ > dropped_to_) {
    // From the page the last range ended in: the advice drops whole pages only, and that one was
    // still being written then.
    static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const off_t from = static_cast<off_t>(dropped_to_ - dropped_to_ % page);
    const off_t len = static_cast<off_t>(started_to_) - from;
    if (sync_file_range(fd_, from, len, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) == 0) {
      posix_fadvise(fd_, from, len, POSIX_FADV_DONTNEED);
    }
    dropped_to_ = started_to_;
  }
  sync_file_range(fd_, static_cast<off_t>(started_to_), static_cast<off_t>(offset_ - started_to_), SYNC_FILE_RANGE_WRITE);
  started_to_ = offset_;
}

void SpoolFile::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace katrace
