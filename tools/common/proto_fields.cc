// ProtoFields (see proto_fields.h).
#include "tools/common/proto_fields.h"

namespace katrace::tools {

const char* WireTypeName(uint32_t type) {
  switch (type) {
    case pftrace::kVarint: return "varint";
    case pftrace::kFixed64: return "fixed64";
    case pftrace::kLengthDelimited: return "length-delimited";
    case pftrace::kFixed32: return "fixed32";
    case 3: return "start-group";
    case 4: return "end-group";
    default: return "invalid";
  }
}

bool ProtoFields::Fail(size_t at, const std::string& what) {
  error_ = what + " at byte " + std::to_string(offset_ + at);
  pos_ = message_.size();
  return false;
}

bool ProtoFields::VarintSlow(uint64_t* v, const char* what) {
  const uint8_t* begin = reinterpret_cast<const uint8_t*>(message_.data());
  const uint8_t* p = begin + pos_;
  const uint8_t* end = begin + message_.size();
  if (pftrace::GetVarint(&p, end, v)) {
    pos_ = static_cast<size_t>(p - begin);
    return true;
  }
  // Either every byte up to the end has its continuation bit, or it runs past ten bytes.
  const size_t left = message_.size() - pos_;
  return Fail(pos_, std::string("bad varint (") + what +
                        (left < pftrace::kMaxVarintBytes ? ", cut by the end of its message)"
                                                         : ", past 64 bits)"));
}

bool ProtoFields::BadFieldNumber(size_t tag_at, uint64_t tag) {
  return Fail(tag_at, "field number " + std::to_string(tag >> 3) + " (not a protobuf field)");
}

bool ProtoFields::FixedCut(size_t n) {
  return Fail(pos_, "a " + std::to_string(n) + "-byte field cut by the end of its message");
}

bool ProtoFields::LengthPastEnd(size_t tag_at, uint32_t number, uint64_t length) {
  return Fail(tag_at, "field " + std::to_string(number) + " says " + std::to_string(length) +
                          " bytes, past the end of its message (" +
                          std::to_string(message_.size() - pos_) + " bytes left)");
}

bool ProtoFields::BadWireType(size_t tag_at, uint32_t number, uint32_t type) {
  return Fail(tag_at, "field " + std::to_string(number) + " has wire type " + std::to_string(type) +
                          " (" + WireTypeName(type) + "), which no katrace message has");
}

}  // namespace katrace::tools
