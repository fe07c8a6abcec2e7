#include "plugin/export/spool_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <lz4.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/crc32.h"
#include "katrace/record_delta.h"

namespace katrace {
namespace exporting {
namespace {

// The largest header a future writer may declare; beyond it the file is not taken for a spool.
constexpr uint32_t kMaxFileHeaderBytes = 1u << 16;

}  // namespace

SpoolReader::~SpoolReader() {
  if (fd_ >= 0) close(fd_);
}

bool SpoolReader::ReadAt(uint64_t offset, void* dst, size_t n) const {
  uint8_t* p = static_cast<uint8_t*>(dst);
  while (n > 0) {
    ssize_t got = pread(fd_, p, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return true;
}

bool SpoolReader::Open(const std::string& path, std::string* error) {
  // Non-blocking: opening a FIFO for reading would wait for a writer; it is refused below.
  fd_ = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    *error = "cannot open '" + path + "': " + strerror(errno);
    return false;
  }
  struct stat st;
  if (fstat(fd_, &st) != 0) {
    *error = "cannot stat '" + path + "': " + strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = "'" + path + "' is not a regular file";
    return false;
  }
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ < sizeof(header_) || !ReadAt(0, &header_, sizeof(header_))) {
    *error = "'" + path + "' is not a katrace spool (shorter than the 64-byte spool header)";
    return false;
  }
  if (memcmp(header_.magic, spool::kFileMagic, sizeof(header_.magic)) != 0) {
    *error = "'" + path + "' is not a katrace spool (bad magic)";
    return false;
  }
  if (header_.version < spool::kOldestReadableVersion || header_.version > spool::kFormatVersion) {
    *error = "'" + path + "' is spool format version " + std::to_string(header_.version) +
             "; this exporter reads versions " + std::to_string(spool::kOldestReadableVersion) + " to " +
             std::to_string(spool::kFormatVersion);
    return false;
  }
  if (header_.header_bytes < sizeof(header_) || header_.header_bytes > kMaxFileHeaderBytes) {
    *error = "'" + path + "' has a bad spool header (header_bytes " + std::to_string(header_.header_bytes) + ")";
    return false;
  }
  return true;
}

BlockStatus SpoolReader::ReadBlockHeader(uint64_t offset, BlockRef* ref, std::string* reason) const {
  if (offset == size_) return BlockStatus::kEnd;
  if (offset > size_ || size_ - offset < sizeof(spool::BlockHeader)) {
    *reason = "the file ends inside a block header";
    return BlockStatus::kShort;
  }
  spool::BlockHeader h;
  if (!ReadAt(offset, &h, sizeof(h))) {
    *reason = std::string("read error: ") + strerror(errno);
    return BlockStatus::kIoError;
  }
  if (h.magic != spool::kBlockMagic) {
    *reason = "no block header (bad magic)";
    return BlockStatus::kBadMagic;
  }
  bool lz4 = (h.flags & spool::kBlockLz4) != 0;
  uint32_t max_stored = lz4 ? static_cast<uint32_t>(LZ4_compressBound(static_cast<int>(spool::kMaxBlockBytes)))
                            : spool::kMaxBlockBytes;
  if (h.raw_bytes > spool::kMaxBlockBytes || h.stored_bytes > max_stored || (!lz4 && h.stored_bytes != h.raw_bytes) ||
      (h.flags & ~static_cast<uint32_t>(spool::kKnownBlockFlags)) != 0) {
    *reason = "block lengths out of range (stored " + std::to_string(h.stored_bytes) + ", raw " +
              std::to_string(h.raw_bytes) + ", flags " + std::to_string(h.flags) + ")";
    return BlockStatus::kBadLength;
  }
  if (size_ - offset - sizeof(h) < h.stored_bytes) {
    *reason = "the file ends inside a block";
    return BlockStatus::kShort;
  }
  ref->offset = offset;
  ref->sequence = h.sequence;
  ref->stored_bytes = h.stored_bytes;
  ref->raw_bytes = h.raw_bytes;
  ref->flags = h.flags;
  ref->stream = h.stream;
  ref->os_tid = h.os_tid;
  ref->crc32 = h.crc32;
  return BlockStatus::kOk;
}

bool SpoolReader::LoadBlock(const BlockRef& ref, bool verify, ByteBuffer* scratch, ByteBuffer* raw,
                          std::string* reason) const {
  bool lz4 = (ref.flags & spool::kBlockLz4) != 0;
  ByteBuffer* stored = lz4 ? scratch : raw;
  spool::BlockHeader h;
  uint8_t* dst = stored->Reserve(ref.stored_bytes + 1u);  // + 1: never a null buffer
  stored->Reserve(ref.stored_bytes);
  if (!ReadAt(ref.offset, &h, sizeof(h)) || !ReadAt(ref.offset + sizeof(h), dst, ref.stored_bytes)) {
    *reason = std::string("read error: ") + strerror(errno);
    return false;
  }
  if (verify) {
    // The CRC covers the header with its crc32 field zeroed, then the payload.
    h.crc32 = 0;
    const uint32_t crc = Crc32(Crc32(0, reinterpret_cast<const uint8_t*>(&h), sizeof(h)), dst, ref.stored_bytes);
    if (crc != ref.crc32) {
      *reason = "bad block CRC";
      return false;
    }
  }
  if (lz4) {
    uint8_t* out = raw->Reserve(ref.raw_bytes + 1u);
    raw->Reserve(ref.raw_bytes);
    int got = LZ4_decompress_safe(reinterpret_cast<const char*>(dst), reinterpret_cast<char*>(out),
                                  static_cast<int>(ref.stored_bytes), static_cast<int>(ref.raw_bytes));
    if (got < 0 || static_cast<uint32_t>(got) != ref.raw_bytes) {
      *reason = "LZ4 payload does not decode to its stated size";
      return false;
    }
  }
  if (ref.flags & spool::kBlockDelta) spool::DecodeRecordDeltas(raw->data(), ref.raw_bytes);
  return true;
}

}  // namespace exporting
}  // namespace katrace
