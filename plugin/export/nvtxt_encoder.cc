#include "plugin/export/nvtxt_encoder.h"

#include <string.h>

#include "common/utf8_sequence.h"

namespace katrace {
namespace exporting {

namespace {

// Color names ImportNvtxt 2022.4 maps to ARGB (checked); one per category, repeating after eight.
constexpr const char* kColors[] = {"Blue", "Green", "Orange", "Purple", "Red", "Cyan", "Magenta", "Yellow"};
constexpr size_t kColorCount = sizeof(kColors) / sizeof(kColors[0]);

// The category of the process-level markers (capture switches, dumps, the trace's end).
constexpr std::string_view kMarkerCategory = "katrace";

// Appends " key=value" when all of it fits before |limit|; leaves |*pp| alone when not.
bool PutArg(char** pp, char* limit, const Arg& a) {
  char* p = *pp;
  if (limit - p < 3) return false;
  *p++ = ' ';
  bool whole = false;
  p = NvtxtEncoder::PutText(p, a.key, static_cast<size_t>(limit - p - 1), &whole);
  if (!whole) return false;
  *p++ = '=';
  if (a.type == ArgType::kString) {
    p = NvtxtEncoder::PutText(p, a.s, static_cast<size_t>(limit - p), &whole);
    if (!whole) return false;
  } else {
    char num[JsonOut::kMaxMicros + 2];
    char* e = num;
    switch (a.type) {
      case ArgType::kUint: e = JsonOut::PutUint(e, a.u); break;
      case ArgType::kInt: e = JsonOut::PutInt(e, a.i); break;
      case ArgType::kBool: e = JsonOut::PutRaw(e, a.u ? "true" : "false"); break;
      case ArgType::kTime:
        // A point in time as µs from the clock base, as the other formats show it.
        e = JsonOut::PutMicros(e, a.i);
        e = JsonOut::PutRaw(e, "us");
        break;
      case ArgType::kHex64: e = JsonOut::PutHex64(e, a.u); break;
      case ArgType::kString: break;
    }
    const size_t len = static_cast<size_t>(e - num);
    if (len > static_cast<size_t>(limit - p)) return false;
    memcpy(p, num, len);
    p += len;
  }
  *pp = p;
  return true;
}

}  // namespace

char* NvtxtEncoder::PutText(char* p, std::string_view s, size_t room, bool* whole) {
  const unsigned char* in = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  char* const end = p + room;
  size_t i = 0;
  while (i < n && p < end) {
    const unsigned char c = in[i];
    if (c >= 0x20 && c < 0x7f) {
      *p++ = c == '"' ? '\'' : c == '\\' ? '/' : static_cast<char>(c);
      ++i;
    } else if (c < 0x80) {
      *p++ = ' ';  // a control byte, newlines and DEL included
      ++i;
    } else if (size_t bad = 0; const size_t len = Utf8SequenceLength(in + i, n - i, &bad)) {
      if (len > static_cast<size_t>(end - p)) break;
      memcpy(p, in + i, len);
      p += len;
      i += len;
    } else {
      *p++ = '?';
      ++i;
    }
  }
  if (whole != nullptr) *whole = i == n;
  return p;
}

char* NvtxtEncoder::PutMessage(char* p, std::string_view name, const Arg* args, size_t nargs) {
  *p++ = '"';
  char* const limit = p + kMaxMessage;
  p = PutText(p, name, kMaxMessage, nullptr);
  // Args in their order while each fits whole: a message never shows half a value, and the
  // ones left off are the last ones.
  const size_t n = nargs < kMaxArgs ? nargs : kMaxArgs;
  for (size_t i = 0; i < n && PutArg(&p, limit, args[i]); ++i) {
  }
  *p++ = '"';
  return p;
}

void NvtxtEncoder::Text(std::string_view s, bool quoted) {
  char* p = buf_->Claim(kMaxMessage + 2);
  if (quoted) *p++ = '"';
  p = PutText(p, s, kMaxMessage, nullptr);
  if (quoted) *p++ = '"';
  buf_->Commit(p);
}

int NvtxtEncoder::CategoryOf(std::string_view category) {
  if (category_ > 0 && categories_[static_cast<size_t>(category_ - 1)] == category) return category_;
  for (size_t i = 0; i < categories_.size(); ++i) {
    if (categories_[i] == category) return static_cast<int>(i + 1);
  }
  categories_.emplace_back(category);
  const int id = static_cast<int>(categories_.size());
  buf_->Raw("# category ").Int(id).Raw(": ");
  Text(category, false);
  buf_->Raw(", color ").Raw(kColors[static_cast<size_t>(id - 1) % kColorCount]).Char('\n');
  return id;
}

void NvtxtEncoder::Use(int pid, int category) {
  if (pid != pid_) {
    buf_->Raw("ProcessId = ").Int(pid).Char('\n');
    pid_ = pid;
  }
  if (category != category_) {
    buf_->Raw("CategoryId = ").Int(category).Char('\n');
    category_ = category;
    const char* color = kColors[static_cast<size_t>(category - 1) % kColorCount];
    if (color != color_) {
      buf_->Raw("Color = ").Raw(color).Char('\n');
      color_ = color;
    }
  }
}

void NvtxtEncoder::Begin(const TraceProcess& process) {
  process_ = WithARank(process);
  pid0_ = process_.ranks.front().pid;
  JsonOut& b = *buf_;
  b.Raw("# katrace NCCL profiler trace, NVTXT (Nsight Systems text annotations) version 1\n# host ");
  Text(process_.host, false);
  b.Raw(", os pid ").Int(process_.os_pid).Raw(", ").Uint(process_.ranks.size()).Raw(" rank(s)\n");
  b.Raw("# clock base: base_monotonic_ns ").Uint(process_.base_monotonic_ns);
  b.Raw(" (CLOCK_MONOTONIC) is base_realtime_ns ").Uint(process_.base_realtime_ns).Raw(" (CLOCK_REALTIME)\n");
  b.Raw("# times: absolute ns on this host's CLOCK_MONOTONIC (TimeBase = Manual), GPU work placed on it by\n");
  b.Raw("# katrace's GPU clock fit. A report of this file alone: ImportNvtxt --cmd create -n FILE -o OUT.nsys-rep\n");
  // Checked with ImportNvtxt 2022.4: in a merge, Manual times are the report's session ns (ns
  // from its SessionStartTime), so a plain merge skips them as outside the session; a linear map
  // from this file's clock base lines them up with the report's own ranges (to ~0.1 ms).
  b.Raw("# over an nsys report of this run (Manual times are taken as the report's session ns, so map them):\n");
  b.Raw("#   ImportNvtxt --cmd merge -i IN.nsys-rep -n FILE -o OUT.nsys-rep --target 0:1 --mode lin --freq 1000000000\n");
  b.Raw("#   --nvtxt_a ").Uint(process_.base_monotonic_ns).Raw(" --ns_a <").Uint(process_.base_realtime_ns);
  b.Raw(" - the report's SessionStartTime ns since epoch, from nsys export --type info>\n");
  b.Raw("# ProcessId: a rank's pid; ThreadId: katrace's track (host thread, proxy or GPU pseudo-thread), 0 the\n");
  b.Raw("# process-level markers; a range's message is its name and args (times as us from the clock base)\n");
  b.Raw("SetFileDisplayName, \"katrace ");
  b.Commit(PutText(b.Claim(kMaxMessage), process_.host, kMaxMessage, nullptr));
  b.Raw(" pid ").Int(process_.os_pid).Raw("\"\n");
  b.Raw("@RangeStartEnd, Start, End, ThreadId, Message\n@Marker, Time, ThreadId, Message\nTimeBase = Manual\n");
  for (const TraceRank& r : process_.ranks) {
    const std::string label = r.label.empty() ? "rank " + std::to_string(r.pid) : r.label;
    b.Raw("# rank pid ").Int(r.pid).Raw(": ");
    Text(label, false);
    b.Raw(", world rank ").Int(r.world_rank).Raw(", launcher rank ").Int(r.launcher_rank);
    b.Raw(", cuda device ").Int(r.cuda_device).Raw("\nNameProcess, ").Int(r.pid).Raw(", ");
    Text(label, true);
    b.Char('\n');
  }
  b.Raw("NameOsThread, ").Int(pid0_).Raw(", 0, \"katrace\"\n");
  b.Raw("ProcessId = ").Int(pid0_).Char('\n');
  pid_ = pid0_;
}

void NvtxtEncoder::Track(const TrackInfo& t) {
  if (t.track >= 0) {
    if (track_pid_.size() <= static_cast<size_t>(t.track)) track_pid_.resize(static_cast<size_t>(t.track) + 1, pid0_);
    track_pid_[static_cast<size_t>(t.track)] = t.pid;
  }
  buf_->Raw("# track ").Int(t.track).Raw(": ");
  Text(t.name, false);
  buf_->Raw(" (pid ").Int(t.pid).Raw(")\nNameOsThread, ").Int(t.pid).Raw(", ").Int(t.track).Raw(", ");
  Text(t.name, true);
  buf_->Char('\n');
  MaybeFlush();
}

void NvtxtEncoder::Slice(const SliceEvent& s) {
  Use(PidOf(s.track), CategoryOf(s.category));
  const int64_t start = Abs(s.ts);
  const int64_t end = s.dur > 0 ? start + s.dur : start;
  // The whole line in one pass through a local pointer: its parts are bounded, the message by
  // kMaxMessage.
  char* p = buf_->Claim(32 + 3 * JsonOut::kMaxInt + kMaxMessage);
  p = JsonOut::PutRaw(p, "RangeStartEnd, ");
  p = JsonOut::PutInt(p, start);
  p = JsonOut::PutRaw(p, ", ");
  p = JsonOut::PutInt(p, end);
  p = JsonOut::PutRaw(p, ", ");
  p = JsonOut::PutInt(p, s.track);
  p = JsonOut::PutRaw(p, ", ");
  p = PutMessage(p, s.name, s.args, s.nargs);
  *p++ = '\n';
  buf_->Commit(p);
  MaybeFlush();
}

void NvtxtEncoder::Counter(std::string_view, int64_t, const Arg*, size_t) { ++counter_samples_; }

void NvtxtEncoder::Instant(std::string_view name, int64_t ts, const Arg* args, size_t nargs) {
  Use(pid0_, CategoryOf(kMarkerCategory));
  char* p = buf_->Claim(32 + 2 * JsonOut::kMaxInt + kMaxMessage);
  p = JsonOut::PutRaw(p, "Marker, ");
  p = JsonOut::PutInt(p, Abs(ts));
  p = JsonOut::PutRaw(p, ", 0, ");
  p = PutMessage(p, name, args, nargs);
  *p++ = '\n';
  buf_->Commit(p);
  MaybeFlush();
}

void NvtxtEncoder::End(const TraceTotals& t) {
  uint64_t events = 0, drops = 0;
  for (int k = 0; k < kKindCount; ++k) {
    events += t.events[k];
    drops += t.drops[k];
  }
  const Arg end_args[] = {Arg::Uint("drops", drops), Arg::Uint("incomplete", t.incomplete)};
  Instant("katrace trace end", t.end_ts, end_args, 2);
  JsonOut& b = *buf_;
  b.Raw("# end of trace: ").Uint(events).Raw(" events, ").Uint(drops).Raw(" dropped, ").Uint(t.incomplete);
  b.Raw(" incomplete\n# events:");
  for (int k = 0; k < kKindCount; ++k) b.Char(' ').Raw(kKindInfo[k].name).Char('=').Uint(t.events[k]);
  b.Raw("\n# drops:");
  for (int k = 0; k < kKindCount; ++k) b.Char(' ').Raw(kKindInfo[k].name).Char('=').Uint(t.drops[k]);
  b.Raw("\n# incomplete=").Uint(t.incomplete).Raw(" late_children=").Uint(t.late_children);
  b.Raw(" gpu_before_launch=").Uint(t.gpu_before_launch).Raw(" waits=").Uint(t.waits);
  b.Raw(" io_errors=").Uint(t.io_errors).Raw(" strings_unnamed=").Uint(t.strings_unnamed);
  b.Raw("\n# spool: blocks=").Uint(t.spool_blocks).Raw(" bytes=").Uint(t.spool_bytes);
  b.Raw(" clean_end=").Raw(t.clean_end ? "true" : "false").Raw(" cut_offset=").Uint(t.cut_offset).Char('\n');
  if (t.flight) {
    b.Raw("# flight recorder dump: reason=");
    Text(t.flight_reason, false);
    b.Raw(" signal=").Int(t.flight_signal).Raw(" evicted_blocks=").Uint(t.flight_evicted_blocks);
    b.Raw(" evicted_bytes=").Uint(t.flight_evicted_bytes).Raw(" cut_records=").Uint(t.flight_cut_records).Char('\n');
  }
  b.Raw("# counters: ").Uint(counter_samples_);
  b.Raw(" samples skipped (NVTXT has no counters; the JSON and Perfetto traces carry them)\n");
  Flush();
}

}  // namespace exporting
}  // namespace katrace
