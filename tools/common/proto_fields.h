// Walks the fields of one protobuf message held in memory (the wire format: a varint tag, then a
// varint, 8 or 4 fixed bytes, or a varint length and that many bytes), the way the protobuf
// trace reader takes a TracePacket and its nested messages apart. Nothing is copied: a
// length-delimited field is a view into the message. Offsets are absolute (the message's own
// offset in the file is given), so an error names the byte of the file it is at. Each malformed
// input (a varint cut or past 64 bits, a length past the end of its message, a group or a wire
// type protobuf does not have, field number 0) stops the walk with a message.
//
// Next runs for every field of every packet, so it is inline here, and forced to be (GCC kept
// it out of line, at about a dozen instructions of call per field); what is rare (a varint of
// three bytes or more, every error and its message) is out of line in proto_fields.cc.
#ifndef KATRACE_TOOLS_COMMON_PROTO_FIELDS_H_
#define KATRACE_TOOLS_COMMON_PROTO_FIELDS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/perfetto_wire.h"

namespace katrace::tools {

struct ProtoField {
  uint32_t number = 0;
  pftrace::WireType type = pftrace::kVarint;
  uint64_t value = 0;      // a varint, fixed64 or fixed32 field's value
  std::string_view bytes;  // a length-delimited field's payload
  uint64_t offset = 0;     // absolute offset of the field's tag
  uint64_t payload_offset = 0;  // absolute offset of |bytes|
};

class ProtoFields {
 public:
  ProtoFields(std::string_view message, uint64_t offset) : message_(message), offset_(offset) {}

  // The next field; false at the end of the message or on an error (then error() is set).
  inline __attribute__((always_inline)) bool Next(ProtoField* field);
  const std::string& error() const { return error_; }

 private:
  inline bool Varint(uint64_t* v, const char* what);
  bool VarintSlow(uint64_t* v, const char* what);
  bool Fail(size_t at, const std::string& what);
  // The errors of Next, each with its message.
  bool BadFieldNumber(size_t tag_at, uint64_t tag);
  bool FixedCut(size_t n);
  bool LengthPastEnd(size_t tag_at, uint32_t number, uint64_t length);
  bool BadWireType(size_t tag_at, uint32_t number, uint32_t type);

  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(message_.data()); }

  std::string_view message_;
  uint64_t offset_;
  size_t pos_ = 0;  // never past message_.size()
  std::string error_;
};

// The wire type's name for messages ("varint", "length-delimited", ...).
const char* WireTypeName(uint32_t type);

// Nearly every varint of a katrace trace is one or two bytes (tags, iids, lengths, small
// values): those are read here. Longer ones and every error go to VarintSlow.
bool ProtoFields::Varint(uint64_t* v, const char* what) {
  const size_t left = message_.size() - pos_;
  const uint8_t* p = data() + pos_;
  if (left >= 1 && p[0] < 0x80) {
    *v = p[0];
    pos_ += 1;
    return true;
  }
  if (left >= 2 && p[1] < 0x80) {
    *v = uint64_t{p[0] & 0x7fu} | uint64_t{p[1]} << 7;
    pos_ += 2;
    return true;
  }
  return VarintSlow(v, what);
}

bool ProtoFields::Next(ProtoField* f) {
  if (pos_ >= message_.size()) return false;
  f->offset = offset_ + pos_;
  const size_t tag_at = pos_;
  uint64_t tag = 0;
  if (!Varint(&tag, "a field tag")) return false;
  if ((tag >> 3) == 0 || (tag >> 3) > UINT32_MAX) return BadFieldNumber(tag_at, tag);
  f->number = static_cast<uint32_t>(tag >> 3);
  const uint32_t type = static_cast<uint32_t>(tag & 7);
  switch (type) {
    case pftrace::kVarint:
      f->type = pftrace::kVarint;
      return Varint(&f->value, "a field value");
    case pftrace::kFixed64:
    case pftrace::kFixed32: {
      const size_t n = type == pftrace::kFixed64 ? 8 : 4;
      if (message_.size() - pos_ < n) return FixedCut(n);
      f->type = static_cast<pftrace::WireType>(type);
      f->value = 0;
      for (size_t i = 0; i < n; ++i) f->value |= uint64_t{data()[pos_ + i]} << (8 * i);  // little-endian
      pos_ += n;
      return true;
    }
    case pftrace::kLengthDelimited: {
      uint64_t length = 0;
      if (!Varint(&length, "a length")) return false;
      if (length > message_.size() - pos_) return LengthPastEnd(tag_at, f->number, length);
      f->type = pftrace::kLengthDelimited;
      f->bytes = message_.substr(pos_, static_cast<size_t>(length));
      f->payload_offset = offset_ + pos_;
      pos_ += static_cast<size_t>(length);
      return true;
    }
    default: return BadWireType(tag_at, f->number, type);
  }
}

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_PROTO_FIELDS_H_
