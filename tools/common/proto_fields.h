// Walks the fields of one protobuf message held in memory (the wire format: a varint tag, then a
// varint, 8 or 4 fixed bytes, or a varint length and that many bytes), the way the protobuf
// trace reader takes a TracePacket and its nested messages apart. Nothing is copied: a
// length-delimited field is a view into the message. Offsets are absolute (the message's own
// offset in the file is given), so an error names the byte of the file it is at. Each malformed
// input (a varint cut or past 64 bits, a length past the end of its message, a group or a wire
// type protobuf does not have, field number 0) stops the walk with a message.
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
  bool Next(ProtoField* field);
  const std::string& error() const { return error_; }

 private:
  bool Varint(uint64_t* v, const char* what);
  bool VarintSlow(uint64_t* v, const char* what);
  bool Fail(size_t at, const std::string& what);

  std::string_view message_;
  uint64_t offset_;
  size_t pos_ = 0;
  std::string error_;
};

// The wire type's name for messages ("varint", "length-delimited", ...).
const char* WireTypeName(uint32_t type);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_PROTO_FIELDS_H_
