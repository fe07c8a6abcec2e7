// Time spans spilled with bounded memory, for BusyTime (busy_time.h): bytes appended in order and
// read back from any offset (in memory, then in an unlinked temporary file), sorted spans encoded
// as varints into them, read back, and merged into their union. Thread safety: none.
#ifndef KATRACE_COMMON_SPAN_SPILL_H_
#define KATRACE_COMMON_SPAN_SPILL_H_

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/paths.h"

namespace katrace::span_spill {

constexpr size_t kMemoryBytes = 256 << 10;  // a spill's bytes held in memory before it opens a file
constexpr size_t kWriteBytes = 64 << 10;    // then written in blocks of this
constexpr size_t kReadBytes = 16 << 10;     // read buffer of each stream a sweep or merge reads

struct Span {
  int64_t start, end;
};

// end - start for end >= start, in unsigned arithmetic: the difference of two int64 can pass
// INT64_MAX.
inline uint64_t Length(int64_t start, int64_t end) { return static_cast<uint64_t>(end) - static_cast<uint64_t>(start); }

// An anonymous file in $TMPDIR (else /tmp): nothing to clean up whatever way the process ends,
// and O_CLOEXEC so a child exec'ed by the job does not hold it. -1 when none can be made.
inline int OpenTempFile() {
  const std::string dir = TempDir();
#ifdef O_TMPFILE
  int fd = open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
#endif
  std::string name = dir + "/katrace-busy-XXXXXX";
  fd = mkostemp(&name[0], O_CLOEXEC);
  if (fd >= 0) unlink(name.c_str());
  return fd;
}

// Bytes appended in order and read back from any offset: in memory up to kMemoryBytes, then in an
// unlinked temporary file. Positioned reads and writes (pread/pwrite) keep no shared file offset,
// so nothing depends on who else holds the descriptor.
class ByteSpill {
 public:
  ByteSpill() = default;
  ~ByteSpill() {
    if (fd_ >= 0) close(fd_);
  }
  ByteSpill(const ByteSpill&) = delete;
  ByteSpill& operator=(const ByteSpill&) = delete;

  uint64_t size() const { return written_ + tail_.size(); }

  // False when the file could not be made or written; the spill is then unusable.
  bool Append(const uint8_t* data, size_t n) {
    // Grow by hand: doubling past kMemoryBytes would hold twice the memory meant for a moment.
    if (tail_.size() + n > tail_.capacity()) {
      tail_.reserve(std::max(tail_.size() + n, std::min(2 * tail_.capacity(), kMemoryBytes + kWriteBytes)));
    }
    tail_.insert(tail_.end(), data, data + n);
    if (tail_.size() < (fd_ < 0 ? kMemoryBytes : kWriteBytes)) return true;
    if (fd_ < 0 && (fd_ = OpenTempFile()) < 0) return false;
    for (size_t done = 0; done < tail_.size();) {
      const ssize_t w = pwrite(fd_, tail_.data() + done, tail_.size() - done, static_cast<off_t>(written_ + done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      done += static_cast<size_t>(w);
    }
    written_ += tail_.size();
    tail_.clear();
    // The memory phase grew the buffer to kMemoryBytes; the file phase needs a quarter of it.
    if (tail_.capacity() > kWriteBytes) {
      tail_.shrink_to_fit();
      tail_.reserve(kWriteBytes);
    }
    return true;
  }

  // [offset, offset + n), which must lie within size(); false when the file could not be read.
  bool Read(uint64_t offset, uint8_t* out, size_t n) const {
    while (n > 0 && offset < written_) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(n, written_ - offset));
      const ssize_t r = pread(fd_, out, want, static_cast<off_t>(offset));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      out += r;
      offset += static_cast<uint64_t>(r);
      n -= static_cast<size_t>(r);
    }
    if (n > 0) std::memcpy(out, tail_.data() + (offset - written_), n);
    return true;
  }

 private:
  std::vector<uint8_t> tail_;  // bytes [written_, size()): all of them until the file exists
  uint64_t written_ = 0;       // bytes in the file
  int fd_ = -1;
};

// Sorted spans as bytes: each the gap from the previous end (the first from INT64_MIN) and its
// length, as LEB128 varints. Spans in time order have small gaps and lengths, so most take 2 to
// 6 bytes instead of 16; sorted, non-overlapping input keeps both numbers non-negative. Bytes
// gather in a small buffer written to the spill when full or flushed.
class SpanEncoder {
 public:
  explicit SpanEncoder(ByteSpill* spill) : spill_(spill) {}

  // False when the spill could not take the buffer.
  bool Put(Span s) {
    constexpr size_t kMaxSpanBytes = 2 * 10;  // two varints of at most 10 bytes
    if (used_ + kMaxSpanBytes > sizeof(buffer_) && !Flush()) return false;
    uint8_t* p = PutVarint(buffer_ + used_, Length(prev_end_, s.start));
    p = PutVarint(p, Length(s.start, s.end));
    used_ = static_cast<size_t>(p - buffer_);
    prev_end_ = s.end;
    return true;
  }
  bool Flush() {
    const bool ok = spill_->Append(buffer_, used_);
    used_ = 0;
    return ok;
  }

 private:
  static uint8_t* PutVarint(uint8_t* p, uint64_t v) {
    while (v >= 0x80) {
      *p++ = static_cast<uint8_t>(v | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<uint8_t>(v);
    return p;
  }

  ByteSpill* spill_;
  int64_t prev_end_ = INT64_MIN;
  uint8_t buffer_[4096];
  size_t used_ = 0;
};

// Reads back what a SpanEncoder wrote to [offset, offset + bytes) of a spill.
class SpanReader {
 public:
  SpanReader(const ByteSpill* spill, uint64_t offset, uint64_t bytes)
      : spill_(spill), next_(offset), end_(offset + bytes) {}

  // False at the end, or when the spill could not be read (failed()).
  bool Next(Span* out) {
    uint64_t gap, length;
    if (next_ == end_ && pos_ == buffer_.size()) return false;
    if (!Varint(&gap) || !Varint(&length)) {
      failed_ = true;  // a spill ending inside a span was cut: as much a failure as a bad read
      return false;
    }
    out->start = static_cast<int64_t>(static_cast<uint64_t>(prev_end_) + gap);
    out->end = static_cast<int64_t>(static_cast<uint64_t>(out->start) + length);
    prev_end_ = out->end;
    return true;
  }
  bool failed() const { return failed_; }

 private:
  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ == buffer_.size() && !Refill()) return false;
      const uint8_t b = buffer_[pos_++];
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  bool Refill() {
    if (next_ == end_) return false;
    buffer_.resize(static_cast<size_t>(std::min<uint64_t>(kReadBytes, end_ - next_)));
    pos_ = 0;
    if (!spill_->Read(next_, buffer_.data(), buffer_.size())) return false;
    next_ += buffer_.size();
    return true;
  }

  const ByteSpill* spill_;
  uint64_t next_, end_;  // the part of the range not read yet
  std::vector<uint8_t> buffer_;
  size_t pos_ = 0;
  int64_t prev_end_ = INT64_MIN;
  bool failed_ = false;
};

// The union of sorted sources (runs in a spill, one sorted vector), in time order, as disjoint
// spans that do not touch: a k-way merge by start whose overlapping and touching spans coalesce.
class SpanUnion {
 public:
  void AddRun(const ByteSpill* spill, uint64_t offset, uint64_t bytes) {
    sources_.push_back({SpanReader(spill, offset, bytes), nullptr, 0});
  }
  void AddSorted(const std::vector<Span>* spans) { sources_.push_back({SpanReader(nullptr, 0, 0), spans, 0}); }

  bool Next(Span* out) {
    if (!started_) Start();
    if (heap_.empty()) return false;
    Span merged = Pop();
    while (!heap_.empty() && heap_.front().span.start <= merged.end) merged.end = std::max(merged.end, Pop().end);
    *out = merged;
    return true;
  }
  bool failed() const {
    for (const Source& s : sources_) {
      if (s.reader.failed()) return true;
    }
    return false;
  }

 private:
  struct Source {
    SpanReader reader;
    const std::vector<Span>* spans;  // or null for the reader
    size_t pos;
  };
  struct Head {
    Span span;
    size_t source;
  };
  // std::push_heap keeps the largest first; "later start" as less puts the earliest first.
  static bool Later(const Head& a, const Head& b) { return a.span.start > b.span.start; }

  bool Pull(size_t i, Span* out) {
    Source& s = sources_[i];
    if (s.spans == nullptr) return s.reader.Next(out);
    if (s.pos == s.spans->size()) return false;
    *out = (*s.spans)[s.pos++];
    return true;
  }
  void Push(size_t i) {
    Head h{{0, 0}, i};
    if (!Pull(i, &h.span)) return;
    heap_.push_back(h);
    std::push_heap(heap_.begin(), heap_.end(), Later);
  }
  Span Pop() {
    std::pop_heap(heap_.begin(), heap_.end(), Later);
    const Head h = heap_.back();
    heap_.pop_back();
    Push(h.source);
    return h.span;
  }
  void Start() {
    started_ = true;
    for (size_t i = 0; i < sources_.size(); ++i) Push(i);
  }

  std::vector<Source> sources_;
  std::vector<Head> heap_;
  bool started_ = false;
};

}  // namespace katrace::span_spill

#endif  // KATRACE_COMMON_SPAN_SPILL_H_
