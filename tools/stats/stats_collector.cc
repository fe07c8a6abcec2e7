// The per-file stats visitor (see stats_collector.h).
#include "tools/stats/stats_collector.h"

#include <cstdio>
#include <set>

#include "tools/common/event_times.h"
#include "tools/common/plural.h"

namespace katrace::tools {
namespace {

class StatsCollector : public TraceVisitor {
 public:
  StatsCollector(const StatsOptions& options, int64_t clock_shift_ns, const std::set<int64_t>& left_out_pids,
                 StatsState* state)
      : options_(options), state_(state), wants_arrivals_(options.Wants("straggler")), clock_shift_ns_(clock_shift_ns),
        left_out_pids_(left_out_pids) {}

  bool OnEvent(const TraceEvent& event) override {
    const Json& json = event.json;
    if (!has_header_) {
      const Json* katrace = HeaderObjectOf(json);
      std::vector<std::string> problems;
      if (katrace == nullptr || !ParseHeader(*katrace, &header_, &problems)) {
        problem_ = katrace == nullptr
                       ? "traceEvents[0] is not the katrace header; not a katrace trace?"
                       : problems.front();
        return false;
      }
      has_header_ = true;
      state_->ranks.insert(header_.rank);
      state_->hosts.insert(header_.host);
      // Every time of this file, on the timeline all files share: its clock base, moved with its
      // host's clock under --align-hosts.
      if (__builtin_add_overflow(header_.base_realtime_ns, clock_shift_ns_, &base_ns_)) base_ns_ = header_.base_realtime_ns;
    }
    // Every Perfetto process is a rank: a file may hold several (two ranks in one OS process, or
    // a merged trace), so ranks are counted by the pids their events are on.
    int64_t pid = header_.rank, comm_rank = -1;
    const Json* pid_value = Field(json, "pid");
    const bool has_pid = pid_value != nullptr && AsInt64(*pid_value, &pid);
    if (!left_out_pids_.empty() && left_out_pids_.count(pid) != 0) return true;  // an earlier input's
    ++state_->events;
    if (has_pid && pid != last_pid_) {
      state_->ranks.insert(pid);
      last_pid_ = pid;
    }
    if (StringField(json, "ph") != "X") return true;
    // A slice no timeline can place is left out of every table, and counted: the tables must not
    // look whole when they are not.
    int64_t dur_ns = 0, ts_ns = 0, start_ns = 0;
    if (std::string why = UnusableTimes(json, 'X'); !why.empty()) {
      unusable_times_.Add(event, why);
      return true;
    }
    UsToNs(*Field(json, "ts"), &ts_ns);
    UsToNs(*Field(json, "dur"), &dur_ns);
    if (__builtin_add_overflow(base_ns_, ts_ns, &start_ns)) {
      unusable_times_.Add(event, "ts is out of range once added to the clock base");
      return true;
    }
    const Json* args = Field(json, "args");
    if (args == nullptr || !args->is_object()) return true;
    const std::string cat = StringField(json, "cat");
    uint64_t comm = 0;
    const bool has_comm = ParseCommHash(StringField(*args, "comm"), &comm);
    if (const Json* v = Field(*args, "rank"); v != nullptr && AsInt64(*v, &comm_rank) && has_comm) {
      state_->comm_sizes.NoteRank(comm, comm_rank);
    }
    const bool incomplete = IsTrue(*args, "incomplete");
    if (incomplete) ++state_->incomplete_left_out;
    {
      // The same slice the plugin's summary saw, on a timeline all files share. Incomplete ones
      // too: the summary leaves them out, and with an incomplete KernelStep its halves.
      const std::string name = StringField(json, "name");
      ActivitySlice slice;
      slice.category = cat;
      slice.name = name;
      slice.start_ns = start_ns;
      slice.duration_ns = static_cast<uint64_t>(dur_ns);
      slice.incomplete = incomplete;
      slice.host_timed = IsTrue(*args, "host_timed");
      slice.abandoned = IsTrue(*args, "abandoned");
      slice.comm = has_comm ? comm : 0;
      slice.rank = comm_rank;
      if (const Json* v = Field(*args, "channel")) AsInt64(*v, &slice.channel);
      if (const Json* v = Field(*args, "id")) AsUint64(*v, &slice.id);
      if (const Json* v = Field(*args, "kernel_step")) AsUint64(*v, &slice.owner);
      state_->tables.AddSlice(slice);
    }
    if (cat == "Coll" || cat == "P2p") {
      OnCollective(json, *args, cat == "Coll", incomplete, pid, comm_rank, has_comm ? comm : 0);
    } else if (cat == "KernelStep") {
      OnKernelStep(*args, incomplete, pid, comm_rank, has_comm ? comm : 0, has_comm, start_ns);
    }
    return true;
  }

  void OnOtherData(const Json& other_data) override {
    const Json* katrace = Field(other_data, "katrace");
    const Json* communicators = katrace == nullptr ? nullptr : Field(*katrace, "communicators");
    if (communicators == nullptr || !communicators->is_array()) return;
    for (const Json& c : *communicators) {
      uint64_t comm = 0;
      int64_t nranks = 0;
      const Json* n = Field(c, "nranks");
      if (ParseCommHash(StringField(c, "comm"), &comm) && n != nullptr && AsInt64(*n, &nranks) &&
          nranks > 0) {
        state_->comm_sizes.SetFromFooter(comm, nranks);
      }
    }
  }

  void OnFormat(TraceFileFormat format) override { unusable_times_.SetFormat(format); }

  const std::string& problem() const { return problem_; }
  const UnusableTimesTally& unusable_times() const { return unusable_times_; }

 private:
  void OnCollective(const Json& json, const Json& args, bool is_coll, bool incomplete,
                    int64_t pid, int64_t comm_rank, uint64_t comm) {
    const std::string func = StringField(args, "func");
    uint64_t bytes = 0, id = 0;
    if (const Json* v = Field(args, "bytes")) AsUint64(*v, &bytes);
    if (const Json* v = Field(args, "peer"); v != nullptr && comm != 0) {
      int64_t peer = 0;
      if (AsInt64(*v, &peer)) state_->comm_sizes.NoteRank(comm, peer);
    }
    int64_t gpu_start = 0, gpu_end = 0, ts = 0;
    const Json* start_value = Field(args, "gpu_start");
    const Json* end_value = Field(args, "gpu_end");
    const bool has_extent = start_value != nullptr && end_value != nullptr &&
                            UsToNs(*start_value, &gpu_start) && UsToNs(*end_value, &gpu_end) &&
                            gpu_end >= gpu_start;
    if (has_extent && !incomplete) {
      const uint64_t gpu_ns = static_cast<uint64_t>(gpu_end - gpu_start);
      state_->tables.AddCollective(func, bytes, is_coll ? StringField(args, "algo") : "",
                                   is_coll ? StringField(args, "proto") : "",
                                   base_ns_ + gpu_start, gpu_ns);
      state_->bandwidth.Add(func, bytes, comm, gpu_ns);
    }
    int64_t seq = 0;
    const Json* seq_value = Field(args, "seq");
    const Json* ts_value = Field(json, "ts");
    if (is_coll && wants_arrivals_ && seq_value != nullptr && AsInt64(*seq_value, &seq) &&
        ts_value != nullptr && UsToNs(*ts_value, &ts) && (!options_.gpu_arrival || has_extent)) {
      const int64_t arrival = base_ns_ + (options_.gpu_arrival ? gpu_start : ts);
      state_->stragglers.AddArrival(comm, func, seq, pid, comm_rank, arrival);
    }
    if (const Json* v = Field(args, "id"); v != nullptr && AsUint64(*v, &id)) {
      state_->links.ParentDone(id);
    }
  }

  void OnKernelStep(const Json& args, bool incomplete, int64_t pid, int64_t comm_rank,
                    uint64_t comm, bool has_comm, int64_t start_ns) {
    KernelStepTimes step;
    step.start_ns = start_ns;
    uint64_t start = 0, ready = 0, stop = 0, parent = 0;
    const Json* channel = Field(args, "channel");
    const Json* peer = Field(args, "peer");
    const Json* start_value = Field(args, "gpu_start_ns");
    const Json* ready_value = Field(args, "gpu_ready_ns");
    const Json* stop_value = Field(args, "gpu_stop_ns");
    if (channel == nullptr || peer == nullptr || ready_value == nullptr ||
        !AsInt64(*channel, &step.channel) || !AsInt64(*peer, &step.peer) ||
        !AsUint64(*ready_value, &ready)) {
      return;
    }
    step.send = IsTrue(args, "send");
    if (has_comm) state_->comm_sizes.NoteRank(comm, step.peer);
    if (incomplete) return;
    if (start_value != nullptr && AsUint64(*start_value, &start) && start != 0 && ready >= start) {
      step.has_wait = true;
      step.wait_ns = ready - start;
    }
    if (!IsTrue(args, "abandoned") && stop_value != nullptr && AsUint64(*stop_value, &stop) &&
        stop >= ready) {
      step.has_transfer = true;
      step.transfer_ns = stop - ready;
    }
    state_->tables.AddKernelStep(step);
    if (step.has_transfer) {
      if (const Json* v = Field(args, "parent")) AsUint64(*v, &parent);
      state_->links.AddStep(pid, comm, comm_rank, parent, step.send, step.channel, step.peer,
                            step.transfer_ns);
    }
  }

  const StatsOptions& options_;
  StatsState* state_;
  // Only the straggler report reads arrivals: the other reports need no sort, nor its spill.
  const bool wants_arrivals_;
  const int64_t clock_shift_ns_;
  const std::set<int64_t>& left_out_pids_;  // ranks an earlier input holds (RanksHeldElsewhere)
  TraceHeader header_;
  int64_t base_ns_ = 0;  // header_.base_realtime_ns + clock_shift_ns_
  bool has_header_ = false;
  int64_t last_pid_ = INT64_MIN;  // saves a set lookup per event: pids come in long runs
  std::string problem_;
  UnusableTimesTally unusable_times_;
};

}  // namespace

bool CollectStats(const std::string& path, const StatsOptions& options, int64_t clock_shift_ns,
                  const std::set<int64_t>& left_out_pids, StatsState* state) {
  StatsCollector collector(options, clock_shift_ns, left_out_pids, state);
  ReadOptions read_options;
  read_options.tool = "katrace-stats";
  read_options.progress_min_bytes = options.progress_min_bytes;
  const ReadResult read = ReadTrace(path, &collector, read_options);
  state->links.EndFile();
  // What the reader or the collector left out of a file that otherwise reads whole: said once
  // per file, which then counts as one with problems.
  std::string left_out;
  if (read.problems > 0) {
    left_out = Plural(read.problems, "problem") + " in the protobuf trace, the first at " +
               read.first_problem;
  }
  if (collector.unusable_times().count() > 0) {
    left_out += (left_out.empty() ? "" : "; ") + collector.unusable_times().Summary();
    state->unusable_times_left_out += collector.unusable_times().count();
  }
  if (!left_out.empty()) {
    std::fprintf(stderr, "katrace-stats: %s: warning: %s (katrace-check lists them)\n",
                 path.c_str(), left_out.c_str());
  }
  std::string problem;
  if (read.status == ReadStatus::kStopped) {
    problem = collector.problem() + "; left out";
  } else if (read.status == ReadStatus::kOk && read.events == 0) {
    problem = "no events; left out";
  } else if (!read.ok()) {
    problem = read.message;
    if (read.events == 1) problem += "; its first event counts";
    if (read.events > 1) problem += "; its first " + std::to_string(read.events) + " events count";
  }
  if (problem.empty() && left_out.empty()) {
    ++state->files_read;
    return true;
  }
  ++state->files_failed;
  if (!problem.empty()) {
    std::fprintf(stderr, "katrace-stats: %s: %s\n", path.c_str(), problem.c_str());
  }
  return false;
}

}  // namespace katrace::tools
