#include "plugin/capture/start_record.h"

#include <string.h>

#include "plugin/capture/record_appender.h"

namespace katrace {

uint32_t InternStringFirstTime(const CaptureTarget& t, const char* text) {
  bool is_new = false;
  const uint32_t id = t.strings->Intern(text, &is_new);
  if (is_new) {
    size_t n = strnlen(text, 256);
    spool::StringBody body{id, static_cast<uint32_t>(n)};
    // A name is needed by every event that uses it: never dropped while the writer runs.
    AppendPolicy waiting = *t.policy;
    waiting.drop_when_full = false;
    AppendRecord(t.buffer, waiting, spool::RecordType::kString, 0, 0, 0, body, text, n);
  }
  // A full table gives no id: not remembered, so each use is counted as unnamed.
  if (id != 0 && t.buffer != nullptr) t.buffer->strings.Remember(text, id);
  return id;
}

}  // namespace katrace
