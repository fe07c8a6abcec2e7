// Usable event times (see event_times.h).
#include "tools/common/event_times.h"

#include "tools/common/plural.h"
#include "tools/common/utf8_text.h"

namespace katrace::tools {
namespace {

// Why |key| (ts or dur) of |event| is not a usable time; empty when it is. A hostile value can
// be long: the message quotes it cut short.
std::string UnusableTime(const Json& event, const char* key, bool may_be_negative) {
  const Json* value = Field(event, key);
  if (value == nullptr) return std::string("no ") + key;
  int64_t ns = 0;
  const char* problem = nullptr;
  if (!value->is_number()) {
    problem = "is not a number";
  } else if (!UsToNs(*value, &ns)) {
    problem = "is out of range";
  } else if (ns < 0 && !may_be_negative) {
    problem = "is negative";
  }
  if (problem == nullptr) return "";
  const std::string text = value->dump(-1, ' ', false, Json::error_handler_t::replace);
  return std::string(key) + " " + BoundedForMessage(text, 40) + " " + problem;
}

}  // namespace

std::string UnusableTimes(const Json& event, char phase) {
  if (phase == 'M') return "";
  std::string why = UnusableTime(event, "ts", true);
  if (why.empty() && phase == 'X') why = UnusableTime(event, "dur", false);
  return why;
}

void UnusableTimesTally::Add(const TraceEvent& event, const std::string& why) {
  if (count_++ > 0) return;
  const std::string name = QuoteForMessage(StringField(event.json, "name"), 80);
  first_ = (bytes_ ? "byte " : "line ") + std::to_string(event.line) + " (event #" +
           std::to_string(event.index) + " " + name + ": " + why + ")";
}

std::string UnusableTimesTally::Summary() const {
  return Plural(count_, "event") + " with unusable times left out, the first at " + first_;
}

}  // namespace katrace::tools
