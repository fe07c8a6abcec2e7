// A protobuf message being built, protozero-style: fields are appended as bytes (tag, then a
// varint, a fixed64 or a length-prefixed payload) into one reused array, with no message objects.
// A nested message is built in a ProtoBytes of its own and appended whole, so its length is
// known when its prefix is written: no placeholder lengths, no padding bytes. The Perfetto
// encoder keeps a few of these and clears them per event, so building an event allocates nothing.
#ifndef KATRACE_PLUGIN_EXPORT_PROTO_BYTES_H_
#define KATRACE_PLUGIN_EXPORT_PROTO_BYTES_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <memory>
#include <string_view>
#include <utility>

#include "common/perfetto_wire.h"

namespace katrace {
namespace exporting {

class ProtoBytes {
 public:
  ProtoBytes() : bytes_(new uint8_t[256]), cap_(256) {}

  const uint8_t* data() const { return bytes_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { size_ = 0; }

  void Varint(uint32_t field, uint64_t v) {
    uint8_t* p = Room(2 * pftrace::kMaxVarintBytes);
    p = pftrace::PutVarint(p, pftrace::Tag(field, pftrace::kVarint));
    Done(pftrace::PutVarint(p, v));
  }
  // int64 and int32 fields: two's complement as a varint (ten bytes when negative).
  void Signed(uint32_t field, int64_t v) { Varint(field, static_cast<uint64_t>(v)); }
  void Fixed64(uint32_t field, uint64_t v) {
    uint8_t* p = Room(pftrace::kMaxVarintBytes + 8);
    p = pftrace::PutVarint(p, pftrace::Tag(field, pftrace::kFixed64));
    p = pftrace::PutFixed64(p, v);
    Done(p);
  }
  void Double(uint32_t field, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof(bits));
    Fixed64(field, bits);
  }
  void Bytes(uint32_t field, const void* data, size_t n) {
    uint8_t* p = Room(2 * pftrace::kMaxVarintBytes + n);
    p = pftrace::PutVarint(p, pftrace::Tag(field, pftrace::kLengthDelimited));
    p = pftrace::PutVarint(p, n);
    if (n != 0) memcpy(p, data, n);
    Done(p + n);
  }
  void String(uint32_t field, std::string_view s) { Bytes(field, s.data(), s.size()); }
  void Message(uint32_t field, const ProtoBytes& m) { Bytes(field, m.data(), m.size()); }

  // Raw writes for a caller that encodes a field itself: room for |n| more bytes at the end (not
  // zeroed), then Done with the end of what was written.
  uint8_t* Room(size_t n) {
    if (cap_ - size_ < n) {
      size_t cap = cap_ * 2;
      while (cap - size_ < n) cap *= 2;
      std::unique_ptr<uint8_t[]> grown(new uint8_t[cap]);
      memcpy(grown.get(), bytes_.get(), size_);
      bytes_ = std::move(grown);
      cap_ = cap;
    }
    return bytes_.get() + size_;
  }
  void Done(const uint8_t* end) { size_ = static_cast<size_t>(end - bytes_.get()); }

 private:

  std::unique_ptr<uint8_t[]> bytes_;
  size_t size_ = 0;
  size_t cap_;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_PROTO_BYTES_H_
