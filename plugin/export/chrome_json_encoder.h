// The Chrome trace-event JSON encoder (docs/trace-format.md): one event per line, the header as
// the first event, the footer in otherData.katrace. Text is built in a JsonOut (raw pointer
// writes, integer-only number formatting) and handed to the OutputSink in ~1 MiB pieces.
#ifndef KATRACE_PLUGIN_EXPORT_CHROME_JSON_ENCODER_H_
#define KATRACE_PLUGIN_EXPORT_CHROME_JSON_ENCODER_H_

#include "plugin/export/trace_encoder.h"
#include <string>

#include "plugin/export/json_out.h"
#include "plugin/output_sink.h"

namespace katrace {
namespace exporting {

class ChromeJsonEncoder : public TraceEncoder {
 public:
  explicit ChromeJsonEncoder(OutputSink* sink) : sink_(sink) {}
  ~ChromeJsonEncoder() override = default;

  void Begin(const TraceProcess& process) override;
  void Track(int track, std::string_view name, int sort_index) override;
  void Slice(const SliceEvent& slice) override;
  void Flow(uint64_t id, int from_track, int64_t from_ts, int to_track, int64_t to_ts) override;
  void Counter(std::string_view name, int64_t ts, const Arg* args, size_t nargs) override;
  void End(const TraceTotals& totals) override;

 private:
  void BeginEvent() {
    if (!first_event_) buf_.Raw(",\n");
    first_event_ = false;
  }
  void Args(const Arg* args, size_t n);
  void Identity();
  void MaybeFlush() {
    if (buf_.size() >= kFlushBytes) Flush();
  }
  void Flush();

  static constexpr size_t kFlushBytes = 1 << 20;
  OutputSink* sink_;
  JsonOut buf_;
  TraceProcess process_;
  std::string slice_mid_;  // "\",\"ph\":\"X\",\"pid\":<rank>,\"tid\":", the same for every slice
  bool first_event_ = true;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_CHROME_JSON_ENCODER_H_
