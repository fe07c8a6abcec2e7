// Typed access to fields of one parsed trace event, and trace time conversions. Trace times are
// microseconds with 3 decimals; the tools compute in integer nanoseconds so a merge or a sum never
// accumulates floating-point error.
#ifndef KATRACE_TOOLS_COMMON_JSON_FIELDS_H_
#define KATRACE_TOOLS_COMMON_JSON_FIELDS_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace katrace::tools {

// Ordered, so a rewritten event keeps its keys in the order the plugin wrote them.
using Json = nlohmann::ordered_json;

// nullptr when |object| is not an object or has no |key|. The last of duplicate keys wins, as
// in a DOM parser. Inline: the tools look fields up for every event, by keys that are literals,
// so each call compares lengths known where it is made and the few bytes that then remain.
inline const Json* Field(const Json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto& members = object.get_ref<const Json::object_t&>();
  for (auto it = members.rbegin(); it != members.rend(); ++it) {
    if (it->first.size() == key.size() && std::memcmp(it->first.data(), key.data(), key.size()) == 0) {
      return &it->second;
    }
  }
  return nullptr;
}
// Integer JSON numbers only; a float or a string does not count.
bool AsInt64(const Json& value, int64_t* out);
bool AsUint64(const Json& value, uint64_t* out);
// A JSON number of microseconds (integer or float) to nanoseconds, rounded to the nearest.
bool UsToNs(const Json& value, int64_t* ns);
// Exact "<int>.<3 digits>" microseconds for integer nanoseconds, e.g. -1500 -> "-1.500".
std::string NsToUsText(int64_t ns);
// "[<start>, <end>] us", each as NsToUsText writes it: an interval in a message.
std::string NsSpanToUsText(int64_t start_ns, int64_t end_ns);
// "string", "integer", "number", "object", ... for messages.
const char* JsonTypeName(const Json& value);
// The string at |object|.|key|, or |fallback| when absent or not a string.
std::string StringField(const Json& object, std::string_view key, const std::string& fallback = "");
// True when |object|.|key| is the boolean true.
bool IsTrue(const Json& object, std::string_view key);
// Perfetto pairs v1 flow events (s/t/f) by (cat, name, id); a hash of that triple. False when
// the id is missing or neither an integer nor a string.
bool FlowKeyOf(const Json& event, uint64_t* key);
// Communicator hashes are written as 16 hex digits.
bool ParseCommHash(const std::string& text, uint64_t* hash);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_JSON_FIELDS_H_
