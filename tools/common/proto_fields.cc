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

// Nearly every varint of a katrace trace is one or two bytes (tags, iids, lengths, deltas of
// clock 64): those are read here, inline in Next, with one bound check. The rest, those within
// two bytes of the end of their message, and every error go to VarintSlow.
inline bool ProtoFields::Varint(uint64_t* v, const char* what) {
  if (message_.size() - pos_ >= 2) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(message_.data()) + pos_;
    if (p[0] < 0x80) {
      *v = p[0];
      pos_ += 1;
      return true;
    }
    if (p[1] < 0x80) {
      *v = uint64_t{p[0] & 0x7fu} | uint64_t{p[1]} << 7;
      pos_ += 2;
      return true;
    }
  }
  return VarintSlow(v, what);
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

bool ProtoFields::Next(ProtoField* f) {
  if (pos_ >= message_.size()) return false;
  f->offset = offset_ + pos_;
  const size_t tag_at = pos_;
  uint64_t tag = 0;
  if (!Varint(&tag, "a field tag")) return false;
  if ((tag >> 3) == 0 || (tag >> 3) > UINT32_MAX) {
    return Fail(tag_at, "field number " + std::to_string(tag >> 3) + " (not a protobuf field)");
  }
  f->number = static_cast<uint32_t>(tag >> 3);
  const uint32_t type = static_cast<uint32_t>(tag & 7);
  const size_t left = message_.size() - pos_;
  switch (type) {
    case pftrace::kVarint:
      f->type = pftrace::kVarint;
      return Varint(&f->value, "a field value");
    case pftrace::kFixed64:
    case pftrace::kFixed32: {
      const size_t n = type == pftrace::kFixed64 ? 8 : 4;
      if (left < n) {
        return Fail(pos_, "a " + std::to_string(n) + "-byte field cut by the end of its message");
      }
      f->type = static_cast<pftrace::WireType>(type);
      f->value = 0;
      for (size_t i = 0; i < n; ++i) {
        f->value |= uint64_t{static_cast<uint8_t>(message_[pos_ + i])} << (8 * i);  // little-endian
      }
      pos_ += n;
      return true;
    }
    case pftrace::kLengthDelimited: {
      uint64_t length = 0;
      if (!Varint(&length, "a length")) return false;
      if (length > message_.size() - pos_) {
        return Fail(tag_at, "field " + std::to_string(f->number) + " says " +
                                std::to_string(length) + " bytes, past the end of its message (" +
                                std::to_string(message_.size() - pos_) + " bytes left)");
      }
      f->type = pftrace::kLengthDelimited;
      f->bytes = message_.substr(pos_, static_cast<size_t>(length));
      f->payload_offset = offset_ + pos_;
      pos_ += static_cast<size_t>(length);
      return true;
    }
    default:
      return Fail(tag_at, "field " + std::to_string(f->number) + " has wire type " +
                              std::to_string(type) + " (" + WireTypeName(type) +
                              "), which no katrace message has");
  }
}

}  // namespace katrace::tools
