// Stage 1 of the export: the spool file as blocks and records (format: katrace/spool_format.h).
// Reads with pread only, so several threads can load blocks of one file at once; never trusts a
// length it has not checked against the file and the format's bounds, so a torn or hostile spool
// ends cleanly at the first block that is not whole (the "cut").
#ifndef KATRACE_PLUGIN_EXPORT_SPOOL_READER_H_
#define KATRACE_PLUGIN_EXPORT_SPOOL_READER_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <memory>
#include <string>

#include "katrace/spool_format.h"

namespace katrace {
namespace exporting {

// Where one block lies and what its header says (checked for bounds, not yet for its CRC).
struct BlockRef {
  uint64_t offset = 0;  // of the block header in the file
  uint64_t sequence = 0;
  uint32_t stored_bytes = 0;
  uint32_t raw_bytes = 0;
  uint32_t flags = 0;
  uint32_t stream = 0;
  uint32_t os_tid = 0;
  uint32_t crc32 = 0;
  uint64_t end() const { return offset + sizeof(spool::BlockHeader) + stored_bytes; }
};

// A byte buffer that grows without zero-filling (decoded payloads are overwritten whole).
class ByteBuffer {
 public:
  uint8_t* Reserve(size_t n) {
    if (n > capacity_) {
      data_.reset(new uint8_t[n]);
      capacity_ = n;
    }
    size_ = n;
    return data_.get();
  }
  const uint8_t* data() const { return data_.get(); }
  uint8_t* data() { return data_.get(); }
  size_t size() const { return size_; }

 private:
  std::unique_ptr<uint8_t[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

enum class BlockStatus {
  kOk,
  kEnd,        // exactly at the end of the file: nothing more
  kShort,      // the file ends inside the block (a killed writer)
  kBadMagic,   // not a block header
  kBadLength,  // lengths outside the format's bounds
  kIoError,
};

// The read side of a spool file (the capture writes it: plugin/capture/spool_file.h).
class SpoolReader {
 public:
  SpoolReader() = default;
  ~SpoolReader();
  SpoolReader(const SpoolReader&) = delete;
  SpoolReader& operator=(const SpoolReader&) = delete;

  // Opens |path| and checks its file header; |error| says why not (missing, unreadable, not a
  // spool, a newer format).
  bool Open(const std::string& path, std::string* error);

  const spool::FileHeader& header() const { return header_; }
  uint64_t size() const { return size_; }
  uint64_t first_block_offset() const { return header_.header_bytes; }

  // Reads the block header at |offset| and checks it against the format and the file size.
  BlockStatus ReadBlockHeader(uint64_t offset, BlockRef* ref, std::string* reason) const;

  // Loads the block: payload, CRC check (when |verify|), LZ4 decode. |raw| gets the records;
  // |scratch| holds the stored bytes of a compressed block. Thread-safe.
  bool LoadBlock(const BlockRef& ref, bool verify, ByteBuffer* scratch, ByteBuffer* raw,
                 std::string* reason) const;

 private:
  bool ReadAt(uint64_t offset, void* dst, size_t n) const;

  int fd_ = -1;
  uint64_t size_ = 0;
  spool::FileHeader header_{};
};

// Walks the records of one decoded payload. Stops at the end or at the first malformed record
// (size not a multiple of 8, below the header, or past the payload): the rest of that payload
// cannot be framed.
class RecordCursor {
 public:
  RecordCursor() = default;
  RecordCursor(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool Next(spool::RecordHeader* header, const uint8_t** body, size_t* body_size) {
    if (pos_ + sizeof(spool::RecordHeader) > size_) {
      malformed_ = pos_ != size_;
      if (malformed_) unread_bytes_ = size_ - pos_;
      pos_ = size_;
      return false;
    }
    memcpy(header, data_ + pos_, sizeof(*header));
    size_t n = header->size;
    if (n < sizeof(spool::RecordHeader) || n % 8 != 0 || n > size_ - pos_) {
      malformed_ = true;
      unread_bytes_ = size_ - pos_;
      pos_ = size_;
      return false;
    }
    *body = data_ + pos_ + sizeof(spool::RecordHeader);
    *body_size = n - sizeof(spool::RecordHeader);
    pos_ += n;
    return true;
  }
  bool malformed() const { return malformed_; }
  // The payload's bytes from the malformed record to its end, which could not be read.
  size_t unread_bytes() const { return unread_bytes_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t pos_ = 0;
  bool malformed_ = false;
  size_t unread_bytes_ = 0;
};

// A record body as a struct: copied (payloads carry no alignment promise to the compiler), with
// fields past a short body left zero.
template <typename T>
inline T ReadBody(const uint8_t* body, size_t size, size_t at = 0) {
  T out{};
  if (at >= size) return out;
  // A whole body (nearly always) is one fixed-size copy, which compiles to plain loads; a copy
  // of variable length goes through the stack byte by byte, and reading the result stalled.
  if (size - at >= sizeof(T)) {
    memcpy(&out, body + at, sizeof(T));
  } else {
    memcpy(&out, body + at, size - at);
  }
  return out;
}

// Host ticks a record carries (Start, State, Stop, Comm, CommEnd, Clock, Marker); false for the others.
// Inline: the merge asks for every record.
inline bool RecordTicks(const spool::RecordHeader& header, const uint8_t* body, size_t size, uint64_t* ticks) {
  size_t at;
  switch (header.type) {
    case spool::RecordType::kStart: at = offsetof(spool::StartBody, ticks); break;
    case spool::RecordType::kState: at = offsetof(spool::StateBody, ticks); break;
    case spool::RecordType::kStop: at = offsetof(spool::StopBody, ticks); break;
    case spool::RecordType::kComm: at = offsetof(spool::CommBody, ticks); break;
    case spool::RecordType::kCommEnd: at = offsetof(spool::CommEndBody, ticks); break;
    case spool::RecordType::kClock: at = offsetof(spool::ClockBody, ticks); break;
    case spool::RecordType::kMarker: at = offsetof(spool::MarkerBody, ticks); break;
    default: return false;
  }
  if (size < at + sizeof(uint64_t)) return false;
  memcpy(ticks, body + at, sizeof(uint64_t));
  return true;
}

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_SPOOL_READER_H_
