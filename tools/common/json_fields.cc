// Field accessors and trace time conversions (see json_fields.h).
#include "tools/common/json_fields.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <string_view>

namespace katrace::tools {

bool AsInt64(const Json& value, int64_t* out) {
  if (value.is_number_unsigned()) {
    const uint64_t v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(v);
    return true;
  }
  if (value.is_number_integer()) {
    *out = value.get<int64_t>();
    return true;
  }
  return false;
}

bool AsUint64(const Json& value, uint64_t* out) {
  if (value.is_number_unsigned()) {
    *out = value.get<uint64_t>();
    return true;
  }
  if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    *out = static_cast<uint64_t>(value.get<int64_t>());
    return true;
  }
  return false;
}

bool UsToNs(const Json& value, int64_t* ns) {
  int64_t integer = 0;
  if (AsInt64(value, &integer)) {
    if (integer > INT64_MAX / 1000 || integer < INT64_MIN / 1000) return false;
    *ns = integer * 1000;
    return true;
  }
  if (!value.is_number_float()) return false;
  const double us = value.get<double>();
  // Below 2^51 ns a 3-decimal value times 1000 is within 0.5 of its integer, so rounding is exact.
  if (!std::isfinite(us) || std::fabs(us) > 9.0e15) return false;
  *ns = std::llround(us * 1000.0);
  return true;
}

std::string NsToUsText(int64_t ns) {
  const bool negative = ns < 0;
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  char buf[32];
  char* p = buf;
  if (negative) *p++ = '-';
  p = std::to_chars(p, buf + sizeof(buf), magnitude / 1000).ptr;
  const unsigned frac = static_cast<unsigned>(magnitude % 1000);
  *p++ = '.';
  *p++ = static_cast<char>('0' + frac / 100);
  *p++ = static_cast<char>('0' + frac / 10 % 10);
  *p++ = static_cast<char>('0' + frac % 10);
  return std::string(buf, p);
}

std::string NsSpanToUsText(int64_t start_ns, int64_t end_ns) {
  return "[" + NsToUsText(start_ns) + ", " + NsToUsText(end_ns) + "] us";
}

const char* JsonTypeName(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "object";
    case Json::value_t::array: return "array";
    case Json::value_t::string: return "string";
    case Json::value_t::boolean: return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "integer";
    case Json::value_t::number_float: return "number";
    default: return "other";
  }
}

std::string StringField(const Json& object, std::string_view key, const std::string& fallback) {
  const Json* v = Field(object, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : fallback;
}

bool IsTrue(const Json& object, std::string_view key) {
  const Json* v = Field(object, key);
  return v != nullptr && v->is_boolean() && v->get<bool>();
}

bool FlowKeyOf(const Json& event, uint64_t* key) {
  const Json* id = Field(event, "id");
  if (id == nullptr || !(id->is_number_integer() || id->is_string())) return false;
  *key = std::hash<std::string>()(StringField(event, "cat") + '\x1f' + StringField(event, "name") +
                                  '\x1f' + id->dump());
  return true;
}

bool ParseCommHash(const std::string& text, uint64_t* hash) {
  if (text.size() != 16) return false;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), *hash, 16);
  return result.ec == std::errc() && result.ptr == text.data() + text.size();
}

}  // namespace katrace::tools
