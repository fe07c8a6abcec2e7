// The merge driver (see merger.h).
#include "tools/merge/merger.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/output_file.h"
#include "tools/common/event_times.h"
#include "tools/common/host_alignment.h"
#include "tools/common/plural.h"
#include "tools/common/progress.h"
#include "tools/common/trace_header.h"
#include "tools/common/trace_reader.h"
#include "tools/common/captured_ranks.h"
#include "tools/merge/event_rewriter.h"
#include "tools/merge/event_selection.h"
#include "tools/merge/merged_footer.h"
#include "tools/merge/pftrace_merge_writer.h"
#include "tools/merge/pid_assigner.h"

namespace katrace::tools {
namespace {

struct Input {
  std::string path;
  TraceHeader header;
  uint64_t file_size = 0;
  // Its pids whose ranks an earlier input already holds (see LeaveOutRanksHeldElsewhere).
  std::set<int64_t> held_elsewhere;
};

// The process that wrote an input, for messages: a merged trace's ranks come from several, and its
// header names only the first rank's.
std::string WhoWroteIt(const Input& input) {
  if (input.header.rebased) return "a merged trace";
  return input.header.host + ", os pid " + std::to_string(input.header.os_pid);
}

uint64_t FileSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// A gzip file records its uncompressed size mod 2^32 in its last 4 bytes; good enough to warn.
uint64_t UncompressedSizeGuess(const std::string& path, uint64_t file_size) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return file_size;
  unsigned char magic[2] = {0, 0}, tail[4] = {0, 0, 0, 0};
  uint64_t guess = file_size;
  if (std::fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b &&
      std::fseek(f, -4, SEEK_END) == 0 && std::fread(tail, 1, 4, f) == 4) {
    const uint64_t isize = tail[0] | tail[1] << 8 | tail[2] << 16 | uint64_t{tail[3]} << 24;
    guess = std::max(isize, file_size * 8);  // the field wraps at 4 GiB; JSON packs ~8-20x
  }
  std::fclose(f);
  return guess;
}

// Whole and with its footer; |why| says what is missing otherwise. A full read, so only used
// when two inputs claim one rank.
bool IsCompleteTrace(const std::string& path, std::string* why) {
  struct Nothing : TraceVisitor {
    bool OnEvent(const TraceEvent& /*event*/) override { return true; }
  } nothing;
  const ReadResult read = ReadTrace(path, &nothing);
  if (read.status != ReadStatus::kOk) {
    *why = read.message;
    return false;
  }
  if (!read.has_other_data) {
    *why = "no footer";
    return false;
  }
  return true;
}

// Warns once, as soon as the output passes the size Perfetto's web UI handles comfortably.
struct SizeWarning {
  uint64_t limit_bytes;
  bool quiet;
  bool warned = false;
  void Check(uint64_t written_bytes) {
    if (warned || quiet || written_bytes <= limit_bytes) return;
    warned = true;
    std::fprintf(stderr,
                 "katrace-merge: warning: the output has passed %s; Perfetto's web UI may fail "
                 "to load it (consider --ranks, --from/--to, --kinds, or trace_processor "
                 "--httpd)\n",
                 HumanBytes(limit_bytes).c_str());
  }
};

class FlowWindowPass : public TraceVisitor {
 public:
  FlowWindowPass(const EventSelection& selection, const EventRewriter& rewriter,
                 FlowWindow* window)
      : selection_(selection), rewriter_(rewriter), window_(window) {}
  bool OnEvent(const TraceEvent& event) override {
    const std::string ph = StringField(event.json, "ph");
    if (ph != "s" && ph != "f") return true;
    int64_t start = 0, end = 0, pid = 0;
    uint64_t key = 0;
    const Json* pid_value = Field(event.json, "pid");
    if (pid_value == nullptr || !AsInt64(*pid_value, &pid) || !rewriter_.KeepsPid(pid) ||
        !rewriter_.MergedSpan(event.json, &start, &end) || !selection_.InWindow(start, end) ||
        !FlowKeyOf(event.json, &key)) {
      return true;
    }
    if (ph == "s") {
      window_->AddStart(key);
    } else {
      window_->AddEnd(key);
    }
    return true;
  }

 private:
  const EventSelection& selection_;
  const EventRewriter& rewriter_;
  FlowWindow* window_;
};

// The first pass of a protobuf output: which slices and flow ends the write pass will keep, so
// that an arrow is put on its two slices (see FlowPlan).
class FlowPlanPass : public TraceVisitor {
 public:
  FlowPlanPass(const EventSelection& selection, const EventRewriter& rewriter, FlowPlan* plan)
      : selection_(selection), rewriter_(rewriter), plan_(plan) {}
  bool OnEvent(const TraceEvent& event) override {
    const Json& json = event.json;
    const std::string ph = StringField(json, "ph");
    if (ph != "X" && ph != "s" && ph != "f") return true;
    int64_t pid = 0, start = 0, end = 0;
    uint64_t tid = 0;
    const Json* pid_value = Field(json, "pid");
    const Json* tid_value = Field(json, "tid");
    if (pid_value == nullptr || !AsInt64(*pid_value, &pid) || !rewriter_.KeepsPid(pid) ||
        tid_value == nullptr || !AsUint64(*tid_value, &tid) ||
        !rewriter_.MergedSpan(json, &start, &end) ||
        !selection_.Keep(ph[0], StringField(json, "cat"), StringField(json, "name"), start, end)) {
      return true;
    }
    if (ph == "X") {
      plan_->AddSlice(pid, tid, start);
    } else if (const Json* id = Field(json, "id")) {
      plan_->AddFlowEnd(pid, tid, start, rewriter_.FlowId(*id), ph == "s");
    }
    return true;
  }

 private:
  const EventSelection& selection_;
  const EventRewriter& rewriter_;
  FlowPlan* plan_;
};

class WritePass : public TraceVisitor {
 public:
  // |plan|: for a JSON output, the flows whose slices at both ends are kept (null: all flows).
  WritePass(const EventSelection& selection, const EventRewriter& rewriter,
            const FlowWindow* window, const FlowPlan* plan, OutputFile* out, bool* first_event,
            SizeWarning* size, EventRewriter::PidMap pid_of, PftraceMergeWriter* pftrace)
      : selection_(selection), rewriter_(rewriter), window_(window), plan_(plan), out_(out),
        first_event_(first_event), size_(size), pid_of_(std::move(pid_of)), pftrace_(pftrace) {}

  void OnFormat(TraceFileFormat format) override { unusable_times_.SetFormat(format); }

  bool OnEvent(const TraceEvent& event) override {
    const Json& json = event.json;
    int64_t pid = 0;
    const Json* pid_value = Field(json, "pid");
    if (pid_value != nullptr && AsInt64(*pid_value, &pid)) {
      if (!rewriter_.KeepsPid(pid)) return true;
      ++of_selected_ranks_;
    }
    const std::string ph = StringField(json, "ph");
    const char phase = ph.size() == 1 ? ph[0] : '?';
    // The merge writes its own process order (by rank) right after each header.
    if (phase == 'M' && StringField(json, "name") == "process_sort_index") return true;
    // An event the merged timeline cannot place is left out, but counted: the merged trace
    // must not look whole when it is not.
    if (std::string why = UnusableTimes(json, phase); !why.empty()) {
      unusable_times_.Add(event, why);
      return true;
    }
    int64_t start = 0, end = 0;
    if (phase != 'M' && !rewriter_.MergedSpan(json, &start, &end)) {
      unusable_times_.Add(event, "its span is out of range once moved onto the merged timeline");
      return true;
    }
    if (!selection_.Keep(phase, StringField(json, "cat"), StringField(json, "name"), start, end)) {
      return true;
    }
    if ((phase == 's' || phase == 'f') && window_ != nullptr) {
      uint64_t key = 0;
      if (!FlowKeyOf(json, &key) || !window_->Contains(key)) return true;
    }
    if ((phase == 's' || phase == 'f') && plan_ != nullptr) {
      // Half an arrow whose slice --kinds left out would bind to whatever slice is open there.
      const Json* id = Field(json, "id");
      if (id == nullptr || !plan_->Drawn(rewriter_.FlowId(*id))) return true;
    }
    if (pftrace_ != nullptr) {
      // The protobuf writer puts flows on their slices (its plan pairs them) and orders the
      // processes by rank itself.
      // A process_name stands for the process_sort_index the JSON merge writes after it too.
      if (pftrace_->Event(json)) written_ += phase == 'M' && StringField(json, "name") == "process_name" ? 2 : 1;
      size_->Check(pftrace_->bytes_written());
      return true;
    }
    line_.clear();
    rewriter_.Write(json, &line_);
    Emit();
    if (phase == 'M' && StringField(json, "name") == "process_name" && pid_value != nullptr) {
      // Perfetto orders processes by this hint when it honours it; ranks then read top-down.
      const int64_t merged = pid_of_(pid);
      line_ = "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + std::to_string(merged) +
              ",\"tid\":0,\"args\":{\"sort_index\":" + std::to_string(merged) + "}}";
      Emit();
    }
    return true;
  }

  void OnOtherData(const Json& other_data) override {
    if (const Json* katrace = Field(other_data, "katrace")) {
      footer_ = *katrace;
      has_footer_ = true;
    }
  }

  uint64_t written() const { return written_; }
  // Events of a rank --ranks keeps (every rank has its metadata), whatever else left them out.
  uint64_t of_selected_ranks() const { return of_selected_ranks_; }
  const Json* footer() const { return has_footer_ ? &footer_ : nullptr; }
  const UnusableTimesTally& unusable_times() const { return unusable_times_; }

 private:
  void Emit() {
    if (!*first_event_) out_->Write(",\n");
    *first_event_ = false;
    out_->Write(line_);
    ++written_;
    size_->Check(out_->bytes_written());
  }

  const EventSelection& selection_;
  const EventRewriter& rewriter_;
  const FlowWindow* window_;
  const FlowPlan* plan_;
  OutputFile* out_;
  bool* first_event_;
  SizeWarning* size_;
  EventRewriter::PidMap pid_of_;
  PftraceMergeWriter* pftrace_;
  std::string line_;
  uint64_t written_ = 0;
  uint64_t of_selected_ranks_ = 0;
  UnusableTimesTally unusable_times_;
  Json footer_;
  bool has_footer_ = false;
};

// A merged trace merged again with one of its own inputs, or two merged traces that share a
// capture, would hold those ranks twice, each under a pid of its own: the later holders leave
// them out (captured_ranks.h), and an input left with no rank is left out whole.
void LeaveOutRanksHeldElsewhere(std::vector<Input>* kept, bool* had_problems) {
  if (std::none_of(kept->begin(), kept->end(), [](const Input& k) { return k.header.rebased; })) return;
  std::vector<TraceInput> inputs;
  for (const Input& input : *kept) inputs.push_back({input.path, input.header});
  const std::vector<HeldElsewhere> held = RanksHeldElsewhere(inputs, "katrace-merge");
  std::vector<Input> still;
  for (size_t i = 0; i < kept->size(); ++i) {
    if (!held[i].pids.empty()) *had_problems = true;
    if (held[i].all) continue;
    still.push_back(std::move((*kept)[i]));
    still.back().held_elsewhere = held[i].pids;
  }
  *kept = std::move(still);
}

// Each kept input's clock base on the merged timeline's clock: its own, or moved with its host
// under --align-hosts (|host_shift|: by how much). Clock bases further apart than an int64_t of ns
// cannot share one timeline (a corrupt or hostile header): the input furthest from the others'
// median is left out (said) until the rest fit.
std::vector<int64_t> PlaceOnOneClock(const MergeOptions& options, std::vector<Input>* kept,
                                     std::vector<int64_t>* host_shift, bool* had_problems) {
  host_shift->assign(kept->size(), 0);
  if (options.align_hosts) {
    std::vector<TraceInput> to_align;
    for (const Input& input : *kept) to_align.push_back({input.path, input.header});
    ReadOptions read_options;
    read_options.tool = "katrace-merge";
    read_options.progress_min_bytes = options.progress_min_bytes;
    *host_shift = AlignInputHosts(to_align, options.quiet, read_options, had_problems);
  }
  std::vector<int64_t> start(kept->size());
  for (size_t i = 0; i < kept->size(); ++i) start[i] = (*kept)[i].header.base_realtime_ns + (*host_shift)[i];
  while (kept->size() > 1) {
    const auto [low, high] = std::minmax_element(start.begin(), start.end());
    const uint64_t span = static_cast<uint64_t>(*high) - static_cast<uint64_t>(*low);
    if (span <= static_cast<uint64_t>(INT64_MAX)) break;
    std::vector<int64_t> sorted = start;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<ptrdiff_t>(sorted.size() / 2), sorted.end());
    const int64_t median = sorted[sorted.size() / 2];
    const bool drop_low = static_cast<uint64_t>(median) - static_cast<uint64_t>(*low) >
                          static_cast<uint64_t>(*high) - static_cast<uint64_t>(median);
    const size_t drop = static_cast<size_t>((drop_low ? low : high) - start.begin());
    std::fprintf(stderr,
                 "katrace-merge: %s: its clock base (%lld ns) lies further from the other inputs' than one "
                 "timeline of int64 ns holds; left out\n",
                 (*kept)[drop].path.c_str(), static_cast<long long>(start[drop]));
    *had_problems = true;
    kept->erase(kept->begin() + static_cast<ptrdiff_t>(drop));
    start.erase(start.begin() + static_cast<ptrdiff_t>(drop));
    host_shift->erase(host_shift->begin() + static_cast<ptrdiff_t>(drop));
  }
  return start;
}

}  // namespace

int RunMerge(const MergeOptions& options) {
  bool had_problems = false;
  std::vector<Input> inputs;
  for (const std::string& path : options.inputs) {
    const HeaderProbe probe = ProbeHeader(path);
    if (!probe.found) {
      const std::string why = probe.read.ok() || probe.read.message.empty()
                                  ? probe.problem
                                  : probe.read.message;
      std::fprintf(stderr, "katrace-merge: %s: %s; left out\n", path.c_str(), why.c_str());
      had_problems = true;
      continue;
    }
    inputs.push_back(Input{path, probe.header, FileSize(path), {}});
  }
  std::stable_sort(inputs.begin(), inputs.end(),
                   [](const Input& a, const Input& b) { return a.header.rank < b.header.rank; });
  std::vector<Input> kept;
  for (const Input& input : inputs) {
    // Two files of one capture (a copy, a cut copy): the complete one is the one to merge,
    // whichever came first on the command line. Files of different processes are never dropped
    // for sharing a pid: the later one's rank moves to a free pid (see PidAssigner).
    auto same = std::find_if(kept.begin(), kept.end(), [&](const Input& k) {
      return !k.header.rebased && !input.header.rebased && k.header.rank == input.header.rank &&
             k.header.SameCapture(input.header);
    });
    if (same != kept.end()) {
      std::string kept_why, input_why;
      const bool kept_complete = IsCompleteTrace(same->path, &kept_why);
      const bool input_complete = IsCompleteTrace(input.path, &input_why);
      if (input_complete && !kept_complete) {
        std::fprintf(stderr,
                     "katrace-merge: warning: rank %lld is in %s and %s; %s is incomplete (%s), "
                     "so %s is merged and %s left out\n",
                     static_cast<long long>(input.header.rank), same->path.c_str(),
                     input.path.c_str(), same->path.c_str(), kept_why.c_str(),
                     input.path.c_str(), same->path.c_str());
        *same = input;
      } else {
        std::fprintf(stderr, "katrace-merge: %s: rank %lld is already in %s (a copy of the same "
                     "capture); left out\n",
                     input.path.c_str(), static_cast<long long>(input.header.rank),
                     same->path.c_str());
      }
      had_problems = true;
      continue;
    }
    // A merged input may hold several ranks: its ranks are selected per event instead.
    const std::vector<int64_t> own = input.header.Pids();
    if (!input.header.rebased && std::none_of(own.begin(), own.end(), [&](int64_t pid) {
          return options.ranks.Contains(pid);
        })) {
      continue;
    }
    kept.push_back(input);
  }
  LeaveOutRanksHeldElsewhere(&kept, &had_problems);
  if (kept.empty()) {
    std::fprintf(stderr, "katrace-merge: nothing to merge%s\n",
                 inputs.empty() ? "" : " (no input matches --ranks)");
    return 2;
  }
  // Each input's clock base on the merged timeline's clock, and what --align-hosts moved it by.
  std::vector<int64_t> host_shift;
  const std::vector<int64_t> start = PlaceOnOneClock(options, &kept, &host_shift, &had_problems);
  int64_t base = start.front();
  uint64_t input_bytes = 0, estimate = 0;
  for (size_t i = 0; i < kept.size(); ++i) {
    base = std::min(base, start[i]);
    input_bytes += kept[i].file_size;
    estimate += UncompressedSizeGuess(kept[i].path, kept[i].file_size);
  }
  // Timestamps are µs with three decimals, read back as doubles (by the tools and by Perfetto's
  // JSON importer): exact to the ns only within 2^51 ns (about 26 days) of the merged start.
  const int64_t latest_base = *std::max_element(start.begin(), start.end());
  constexpr int64_t kExactSpanNs = int64_t{1} << 51;
  if (latest_base - base > kExactSpanNs) {
    std::fprintf(stderr,
                 "katrace-merge: warning: the inputs' clock bases are %.1f days apart; on one timeline "
                 "the later ones' timestamps pass 2^51 ns (about 26 days), where µs read as doubles "
                 "are no longer exact to the ns (katrace-check may then see slices overlap that do "
                 "not): merge traces of one job\n",
                 static_cast<double>(latest_base - base) / 86400e9);
  }
  EventSelection selection(options);
  if (!options.quiet && !options.kinds && !selection.has_window() &&
      estimate > options.warn_bytes) {
    std::fprintf(stderr,
                 "katrace-merge: warning: the merged trace will be about %s (the inputs' size); Perfetto's "
                 "web UI struggles past a few hundred MB: narrow it with --ranks, --from/--to "
                 "or --kinds, or open it with trace_processor --httpd\n",
                 HumanBytes(estimate).c_str());
  }

  OutputFile out;
  std::string error;
  if (!out.Open(options.output, options.gzip, &error)) {
    std::fprintf(stderr, "katrace-merge: %s\n", error.c_str());
    return 2;
  }
  const bool protobuf = options.format == TraceFormat::kPerfetto;
  std::unique_ptr<PftraceMergeWriter> pftrace;
  if (protobuf) {
    // Boot time at the merged start: the monotonic time of the input whose base it is (monotonic
    // and boot time differ only by the time that machine slept).
    int64_t boottime = 0;
    for (size_t i = 0; i < kept.size(); ++i) {
      if (start[i] == base) {
        boottime = kept[i].header.base_monotonic_ns;
        break;
      }
    }
    pftrace = std::make_unique<PftraceMergeWriter>(&out, base, boottime);
  } else {
    out.Write("{\"traceEvents\":[\n");
  }
  MergedFooter footer;
  bool first_event = true;
  SizeWarning size_warning{options.warn_bytes, options.quiet};
  uint64_t total_written = 0;
  uint64_t of_selected_ranks = 0;
  const bool show_progress = input_bytes >= options.progress_min_bytes;
  ReadOptions read_options;
  read_options.tool = "katrace-merge";
  read_options.progress_min_bytes = options.progress_min_bytes;
  PidAssigner pids;
  for (const Input& input : kept) {
    for (int64_t pid : input.header.Pids()) pids.Reserve(pid);
  }
  for (size_t i = 0; i < kept.size(); ++i) {
    const Input& input = kept[i];
    auto keeps_pid = [&](int64_t pid) {
      return options.ranks.Contains(pid) && input.held_elsewhere.count(pid) == 0;
    };
    // One line per remap, naming both files, the first time an event of the rank is written.
    auto pid_of = [&, i](int64_t pid) {
      // A rank --ranks leaves out gets no pid of the merged trace (the rewriter leaves it out of
      // the headers too): it neither takes a free pid nor shows in the footer's ranks, pids and
      // pid_remap, and no line reports a move of it.
      if (!keeps_pid(pid)) return pid;
      const PidAssigner::Mapping m = pids.Map(i, pid);
      if (m.remapped && m.first_time) {
        const Input& holder = kept[m.holder];
        std::fprintf(stderr,
                     "katrace-merge: pid %lld is in %s (%s) and in %s (%s): %s keeps pid %lld; %s's "
                     "pid %lld is pid %lld in the merged trace\n",
                     static_cast<long long>(pid), holder.path.c_str(), WhoWroteIt(holder).c_str(),
                     input.path.c_str(), WhoWroteIt(input).c_str(), holder.path.c_str(),
                     static_cast<long long>(pid), input.path.c_str(), static_cast<long long>(pid),
                     static_cast<long long>(m.pid));
      }
      return m.pid;
    };
    if (show_progress) {
      std::fprintf(stderr, "katrace-merge: [%zu/%zu] rank %lld: %s\n", i + 1, kept.size(),
                   static_cast<long long>(input.header.rank), input.path.c_str());
    }
    const int64_t offset = start[i] - base;
    EventRewriter rewriter(static_cast<int64_t>(i), offset, base, pid_of, keeps_pid);
    FlowWindow window;
    FlowPlan plan;
    // Where --kinds may leave out the slice at one end of an arrow, JSON keeps only the arrows
    // with both slices, as protobuf must (its arrows live on their slices): the same plan.
    const bool plan_flows = selection.KeepsFlows() && (protobuf || options.kinds.has_value());
    const bool pair_flows =
        !protobuf && !plan_flows && selection.has_window() && selection.KeepsFlows();
    if (plan_flows) {
      FlowPlanPass pass(selection, rewriter, &plan);
      ReadTrace(input.path, &pass, read_options);
      plan.Seal();
    }
    if (protobuf) {
      pftrace->BeginInput(&rewriter, &plan);
    } else if (pair_flows) {
      FlowWindowPass pass(selection, rewriter, &window);
      ReadTrace(input.path, &pass, read_options);
      window.Seal();
    }
    WritePass pass(selection, rewriter, pair_flows ? &window : nullptr,
                   plan_flows && !protobuf ? &plan : nullptr, &out, &first_event, &size_warning,
                   pid_of, pftrace.get());
    const ReadResult read = ReadTrace(input.path, &pass, read_options);
    if (protobuf) pftrace->EndInput();
    // What the reader or the merge left out of an input that otherwise reads whole: said once per
    // file, and the exit status says the merged trace is not all of its inputs.
    std::string left_out;
    if (read.problems > 0) {
      left_out = Plural(read.problems, "problem") + " in the protobuf trace, the first at " +
                 read.first_problem;
    }
    if (pass.unusable_times().count() > 0) {
      left_out += (left_out.empty() ? "" : "; ") + pass.unusable_times().Summary();
    }
    if (!left_out.empty()) {
      had_problems = true;
      std::fprintf(stderr, "katrace-merge: %s: warning: %s (katrace-check lists them)\n",
                   input.path.c_str(), left_out.c_str());
    }
    std::string problem;
    if (read.status != ReadStatus::kOk) {
      problem = read.message;
      had_problems = true;
      std::fprintf(stderr, "katrace-merge: %s: %s; %s merged\n", input.path.c_str(),
                   read.message.c_str(),
                   read.events == 1 ? "its first event is"
                                    : ("its first " + std::to_string(read.events) + " events are")
                                          .c_str());
    } else if (pass.footer() == nullptr) {
      problem = "no footer (otherData.katrace)";
      std::fprintf(stderr, "katrace-merge: %s: warning: %s\n", input.path.c_str(),
                   problem.c_str());
    } else {
      problem = left_out;
    }
    std::vector<std::pair<int64_t, int64_t>> pid_map;
    for (const auto& [key, merged] : pids.mappings()) {
      if (key.first == i) pid_map.emplace_back(key.second, merged);
    }
    footer.AddInput(input.path, input.header.rank, offset, read.events, pass.written(),
                    pass.footer(), problem, pid_map, options.ranks);
    if (options.align_hosts) footer.NoteHostShift(host_shift[i]);
    total_written += pass.written();
    of_selected_ranks += pass.of_selected_ranks();
  }
  // A merged input is selected event by event: that none of its ranks is selected shows only now.
  // Nothing is written then, as when no per-rank file matched.
  if (of_selected_ranks == 0 && !options.ranks.all()) {
    std::fprintf(stderr, "katrace-merge: nothing to merge (no input matches --ranks)\n");
    return 2;
  }
  if (protobuf) {
    pftrace->End(footer.Katrace(base, options));
  } else {
    out.Write("\n],\n" + footer.Render(base, options) + "}\n");
  }
  if (!out.Commit(&error)) {
    std::fprintf(stderr, "katrace-merge: %s\n", error.c_str());
    return 2;
  }
  if (!options.quiet) {
    std::fprintf(stderr, "katrace-merge: wrote %s: %s from %s, %s of %s\n",
                 options.output.c_str(), Plural(total_written, "event").c_str(),
                 Plural(kept.size(), "file").c_str(), HumanBytes(out.bytes_written()).c_str(),
                 protobuf ? "Perfetto protobuf" : "JSON");
    if (protobuf && pftrace->left_out() > 0) {
      std::fprintf(stderr,
                   "katrace-merge: %s not written: protobuf cannot hold them as katrace lays it "
                   "out (metadata of another name, a flow whose slice is not kept, a counter "
                   "that is not an integer)\n",
                   Plural(pftrace->left_out(), "event").c_str());
    }
  }
  return had_problems ? 1 : 0;
}

}  // namespace katrace::tools
