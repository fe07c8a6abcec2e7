// The Chrome trace-event JSON encoder (docs/trace-format.md): one event per line, the header as
// the first event, the footer in otherData.katrace. Text is built in a JsonOut (raw pointer
// writes, integer-only number formatting) and handed to the OutputSink in ~1 MiB pieces.
#ifndef KATRACE_PLUGIN_EXPORT_CHROME_JSON_ENCODER_H_
#define KATRACE_PLUGIN_EXPORT_CHROME_JSON_ENCODER_H_

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "plugin/export/json_out.h"
#include "plugin/export/trace_encoder.h"
#include "plugin/export/write_behind.h"

namespace katrace {
namespace exporting {

class ChromeJsonEncoder : public TraceEncoder {
 public:
  explicit ChromeJsonEncoder(WriteBehind* writer) : writer_(writer), buf_(std::make_unique<JsonOut>()) {}
  ~ChromeJsonEncoder() override = default;

  void Begin(const TraceProcess& process) override;
  void Track(const TrackInfo& track) override;
  void Slice(const SliceEvent& slice) override;
  void Counter(std::string_view name, int64_t ts, const Arg* args, size_t nargs) override;
  void Instant(std::string_view name, int64_t ts, const Arg* args, size_t nargs) override;
  void End(const TraceTotals& totals) override;

 private:
  void BeginEvent() {
    if (!first_event_) buf_->Raw(",\n");
    first_event_ = false;
  }
  void Args(const Arg* args, size_t n);
  bool FastSlice(const SliceEvent& slice);
  // A slice's flow end: the arrow is written once both ends were (JSON binds it by timestamp).
  void FlowEnd(uint64_t id, bool out, int track, int64_t ts);
  void WriteFlow(uint64_t id, int from_track, int64_t from_ts, int to_track, int64_t to_ts);
  void ProcessMetadata(const TraceRank& r);
  int PidOf(int track) const {
    return track >= 0 && static_cast<size_t>(track) < track_pid_.size() ? track_pid_[static_cast<size_t>(track)] : pid0_;
  }
  void MaybeFlush() {
    if (buf_->size() >= kFlushBytes) Flush();
  }
  void Flush();

  static constexpr size_t kFlushBytes = 1 << 20;
  WriteBehind* writer_;
  std::unique_ptr<JsonOut> buf_;
  TraceProcess process_;
  std::vector<int> track_pid_;  // per track: the pid it belongs to
  int pid0_ = 0;                // the first rank's: counters and the closing instant
  struct FlowHalf {
    bool out;
    int track;
    int64_t ts;
  };
  std::unordered_map<uint64_t, FlowHalf> flows_;  // flow ids whose first end was written
  bool first_event_ = true;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_CHROME_JSON_ENCODER_H_
