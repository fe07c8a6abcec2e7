// The NVTXT encoder: the trace as Nsight Systems' text annotations, one instruction a line, for
// ImportNvtxt (`--cmd create` makes a report of the file alone; `--cmd merge` with a linear time
// map, which the file's header spells out, lays the ranges over an nsys report of the same run).
// Each slice is one `RangeStartEnd` line at absolute CLOCK_MONOTONIC ns (`TimeBase = Manual`),
// its args folded into the message; capture switches, dumps and the trace's end are `Marker`
// lines; counters have no NVTXT form and are only counted.
// Ranks are processes (`ProcessId`, named with `NameProcess`), tracks are threads (`ThreadId` =
// the track number, named with `NameOsThread`), slice categories are `CategoryId`s with a color
// each. The shapes are the ones ImportNvtxt 2022.4 (Debian's nsight-systems) was checked to
// import. It has no escapes: it keeps a backslash verbatim and a backslash before the closing
// quote breaks the string, so quotes and backslashes in text are replaced, not escaped.
// Text is built in a JsonOut (raw pointer writes, integer-only number formatting) and handed to
// the WriteBehind in ~1 MiB pieces, so memory stays bounded whatever the trace's size.
#ifndef KATRACE_PLUGIN_EXPORT_NVTXT_ENCODER_H_
#define KATRACE_PLUGIN_EXPORT_NVTXT_ENCODER_H_

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/export/json_out.h"
#include "plugin/export/trace_encoder.h"
#include "plugin/export/write_behind.h"

namespace katrace {
namespace exporting {

class NvtxtEncoder : public TraceEncoder {
 public:
  explicit NvtxtEncoder(WriteBehind* writer) : writer_(writer), buf_(std::make_unique<JsonOut>()) {}
  ~NvtxtEncoder() override = default;

  void Begin(const TraceProcess& process) override;
  void Track(const TrackInfo& track) override;
  void Slice(const SliceEvent& slice) override;
  void Counter(std::string_view name, int64_t ts, const Arg* args, size_t nargs) override;
  void Instant(std::string_view name, int64_t ts, const Arg* args, size_t nargs) override;
  void End(const TraceTotals& totals) override;

  // The most bytes of a message between its quotes, and the most args folded into it: a range's
  // label in Nsight is one line, and a few MiB per million slices keep the file small.
  static constexpr size_t kMaxMessage = 160;
  static constexpr size_t kMaxArgs = 8;

  // Writes |s| at |p| as NVTXT text, at most |room| bytes (never more than |s| itself): a quote
  // becomes ', a backslash /, a control byte a space, each byte of invalid UTF-8 '?'; a UTF-8
  // sequence that does not fit whole is left out. |*whole| (when given) says whether all of |s|
  // went in.
  static char* PutText(char* p, std::string_view s, size_t room, bool* whole);

 private:
  // The category's id (1, 2, ... in order of first use); a new one gets its comment line.
  int CategoryOf(std::string_view category);
  // The default-field lines that make the next data line's ProcessId and category right, each
  // only when its value changes.
  void Use(int pid, int category);
  // Sanitized |s| as a comment's text, or between quotes (|quoted|), cut at kMaxMessage.
  void Text(std::string_view s, bool quoted);
  // The quoted message: |name|, then " key=value" for each arg that still fits.
  static char* PutMessage(char* p, std::string_view name, const Arg* args, size_t nargs);
  // Absolute ns of a time relative to the base; the importer refuses negative values.
  int64_t Abs(int64_t ts) const {
    const int64_t t = static_cast<int64_t>(process_.base_monotonic_ns) + ts;
    return t < 0 ? 0 : t;
  }
  int PidOf(int track) const {
    return track >= 0 && static_cast<size_t>(track) < track_pid_.size() ? track_pid_[static_cast<size_t>(track)] : pid0_;
  }
  void MaybeFlush() {
    if (buf_->size() >= kFlushBytes) Flush();
  }
  void Flush() { writer_->Hand(&buf_); }

  static constexpr size_t kFlushBytes = 1 << 20;
  WriteBehind* writer_;
  std::unique_ptr<JsonOut> buf_;
  TraceProcess process_;
  std::vector<int> track_pid_;          // per track: the pid it belongs to
  int pid0_ = 0;                        // the first rank's: instants and the closing marker
  std::vector<std::string> categories_;  // by id - 1
  int pid_ = 0;                         // the ProcessId line in force
  int category_ = 0;                    // the CategoryId line in force (0: none yet)
  const char* color_ = nullptr;         // the Color line in force
  uint64_t counter_samples_ = 0;        // skipped: NVTXT has no counters
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_NVTXT_ENCODER_H_
