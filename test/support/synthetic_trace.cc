// Synthetic trace writer (see synthetic_trace.h). Track ids: 100 host, 200 GPU comm, 300+c GPU
// channel, 400+2c+d KernelStep (d = 0 send, 1 recv), 500+2c+d proxy; tid 0 for counters. In a
// file of several ranks the i-th rank's track ids are offset by 1000 i and its record ids by
// 10^9 i, so both stay unique in the file, as the plugin keeps them.
#include "test/support/synthetic_trace.h"

#include <algorithm>
#include <map>
#include <vector>

#include "common/ends_with.h"
#include "common/hex16.h"
#include "common/output_file.h"
#include "katrace/drain_counters.h"
#include "tools/common/json_fields.h"

namespace katrace_test {
namespace {

using katrace::DrainCounterField;
using katrace::DrainCounters;
using katrace::EndsWith;
using katrace::Hex16;
using katrace::OutputFile;
using katrace::kDrainCounterFields;
using katrace::tools::NsToUsText;
using T = SyntheticTiming;

std::string Num(int64_t v) { return std::to_string(v); }

class Writer {
 public:
  Writer(const std::vector<SyntheticRankOptions>& ranks,
         const std::function<void(std::string_view)>& sink)
      : ranks_(ranks), sink_(sink), next_ids_(ranks.size()) {
    for (size_t i = 0; i < ranks.size(); ++i) next_ids_[i] = 1 + i * uint64_t{1000000000};
  }

  void Run() {
    sink_("{\"traceEvents\":[\n");
    for (size_t i = 0; i < ranks_.size(); ++i) {
      Select(i);
      Header(i == 0);
    }
    // The ranks' collectives interleave, as one process's completions do.
    for (int k = 0; k < ranks_.front().num_colls; ++k) {
      for (size_t i = 0; i < ranks_.size(); ++i) {
        Select(i);
        Collective(k);
      }
    }
    Select(0);
    const std::string end_ts = NsToUsText(last_ts_ns_);
    Line("{\"name\":\"katrace trace end\",\"ph\":\"i\",\"s\":\"g\",\"pid\":" + Num(Pid()) +
         ",\"tid\":0,\"ts\":" + end_ts + ",\"args\":{\"drops\":0,\"incomplete\":0}}");
    sink_("\n],\n\"otherData\":{\"katrace\":{" + HeaderKeys() + ",\"events\":{");
    bool first = true;
    for (const auto& [kind, n] : counts_) {
      sink_((first ? "\"" : ",\"") + kind + "\":" + Num(n));
      first = false;
    }
    sink_("},\"drops\":{\"Coll\":0,\"KernelCh\":0,\"KernelStep\":0},\"incomplete\":0,"
          "\"late_children\":0,\"overflow_moves\":0,\"waits\":0,\"io_errors\":0,"
          "\"strings_unnamed\":0,"
          "\"gpu_offset_ns\":" + Num(o_->gpu_offset_ns) +
          ",\"gpu_offset_error_ns\":250,\"gpu_offset_samples\":" + Num(o_->num_colls) +
          ",\"drain\":" + DrainObject() + "," + CommunicatorList() +
          "\"spool\":{\"blocks\":1,\"bytes\":4096,\"clean_end\":true,\"cut_offset\":0}}}}\n");
  }

 private:
  // Every KernelStep was read and emitted: seen is their count, the other counters are 0.
  std::string DrainObject() {
    DrainCounters drain;
    drain.seen = counts_["KernelStep"];
    std::string out;
    for (const DrainCounterField& f : kDrainCounterFields) {
      out += (out.empty() ? "{\"" : ",\"") + std::string(f.name) + "\":" + std::to_string(drain.*f.member);
    }
    return out + "}";
  }

  // Rank |i|'s events from here on.
  void Select(size_t i) {
    if (o_ != nullptr) next_ids_[current_] = next_id_;
    current_ = i;
    o_ = &ranks_[i];
    comm_ = Hex16(o_->comm_hash);
    tid_base_ = static_cast<int>(i) * 1000;
    next_id_ = next_ids_[i];
  }

  int64_t Pid() const { return o_->pid >= 0 ? o_->pid : o_->rank; }

  // Every rank's process_name carries the header with its own pid as the rank; the process
  // (host, OS pid, clock base) is the first rank's, and a file of several ranks lists them all.
  // The footer repeats the first rank's.
  std::string HeaderKeys() const {
    const SyntheticRankOptions& first = ranks_.front();
    std::string keys = "\"format\":\"katrace-trace\",\"version\":1,\"rank\":" +
                       Num(Pid()) + ",\"host\":\"" +
                       first.host + "\",\"os_pid\":" + Num(first.os_pid) +
                       ",\"base_realtime_ns\":" + Num(first.base_realtime_ns) +
                       ",\"base_monotonic_ns\":" + Num(first.base_monotonic_ns);
    if (ranks_.size() > 1 || first.pid >= 0) {
      keys += ",\"ranks\":[";
      for (size_t i = 0; i < ranks_.size(); ++i) {
        const SyntheticRankOptions& r = ranks_[i];
        keys += (i ? ",{\"pid\":" : "{\"pid\":") + Num(r.pid >= 0 ? r.pid : r.rank) +
                ",\"world_rank\":" + Num(r.pid >= 0 ? r.pid : r.rank) +
                ",\"launcher_rank\":-1,\"cuda_device\":" + Num(static_cast<int64_t>(i)) + "}";
      }
      keys += "]";
    }
    return keys;
  }

  // Each rank's communicator, with its size (what bus bandwidth and the straggler report read).
  std::string CommunicatorList() const {
    std::string out = "\"communicators\":[";
    for (size_t i = 0; i < ranks_.size(); ++i) {
      const SyntheticRankOptions& r = ranks_[i];
      out += (i ? ",{\"comm\":\"" : "{\"comm\":\"") + Hex16(r.comm_hash) + "\",\"rank\":" +
             Num(r.rank) + ",\"nranks\":" + Num(r.nranks) + ",\"pid\":" +
             Num(r.pid >= 0 ? r.pid : r.rank) + "}";
    }
    return out + "],";
  }

  void Line(const std::string& event) {
    if (!first_line_) sink_(",\n");
    first_line_ = false;
    sink_(event);
  }

  void Meta(const char* what, int tid, const std::string& args) {
    Line(std::string("{\"name\":\"") + what + "\",\"ph\":\"M\",\"pid\":" + Num(Pid()) +
         ",\"tid\":" + Num(tid == 0 ? 0 : tid_base_ + tid) + ",\"args\":" + args + "}");
  }

  void Track(int tid, const std::string& name) {
    Meta("thread_name", tid, "{\"name\":\"" + name + "\"}");
    Meta("thread_sort_index", tid, "{\"sort_index\":" + Num(tid) + "}");
  }

  std::string Peer(int dir) const {
    const int64_t n = std::max<int64_t>(1, o_->nranks);
    return Num(dir == 0 ? (o_->rank + 1) % n : (o_->rank + n - 1) % n);
  }

  void Header(bool first) {
    Meta("process_name", 0,
         "{\"name\":\"rank " + Num(Pid()) + " (" + o_->host + ", pid " + Num(o_->os_pid) + ")\"" +
             ",\"katrace\":{" + HeaderKeys() + "}}");
    Track(100, "host " + Num(o_->os_pid + 1 + static_cast<int64_t>(current_)));
    Track(200, "GPU comm " + comm_);
    for (int c = 0; c < o_->channels; ++c) {
      Track(300 + c, "GPU comm " + comm_ + " ch " + Num(c));
      for (int d = 0; d < 2; ++d) {
        const std::string dir = d == 0 ? " send peer " : " recv peer ";
        Track(400 + 2 * c + d, "GPU comm " + comm_ + " ch " + Num(c) + dir + Peer(d));
        if (o_->with_proxy) {
          Track(500 + 2 * c + d, "proxy comm " + comm_ + " ch " + Num(c) + dir + Peer(d));
        }
      }
    }
    if (first) {
      Line("{\"name\":\"katrace drops\",\"ph\":\"C\",\"pid\":" + Num(Pid()) +
           ",\"tid\":0,\"ts\":0.000,\"args\":{\"Coll\":0,\"KernelStep\":0}}");
    }
  }

  // Trace ns of a job-timeline instant on this rank.
  int64_t TraceNs(int64_t job_ns) const {
    return o_->job_origin_realtime_ns + job_ns - ranks_.front().base_realtime_ns;
  }
  int64_t GpuRawNs(int64_t trace_ns) const {
    return ranks_.front().base_monotonic_ns + trace_ns - o_->gpu_offset_ns;
  }

  void Slice(const std::string& cat, const std::string& name, int tid, int64_t ts_ns,
             int64_t dur_ns, uint64_t id, const std::string& more_args) {
    ++counts_[cat];
    last_ts_ns_ = std::max(last_ts_ns_, ts_ns + dur_ns);
    Line("{\"name\":\"" + name + "\",\"cat\":\"" + cat + "\",\"ph\":\"X\",\"pid\":" +
         Num(Pid()) + ",\"tid\":" + Num(tid_base_ + tid) + ",\"ts\":" + NsToUsText(ts_ns) +
         ",\"dur\":" + NsToUsText(dur_ns) + ",\"args\":{\"id\":" + Num(id) + more_args +
         ",\"comm\":\"" + comm_ + "\",\"rank\":" + Num(o_->rank) + "}}");
  }

  void Flow(char ph, int tid, int64_t ts_ns, uint64_t id) {
    Line(std::string("{\"name\":\"") + o_->func + "\",\"cat\":\"flow\",\"ph\":\"" + ph +
         "\",\"id\":" + Num(id) + ",\"pid\":" + Num(Pid()) + ",\"tid\":" + Num(tid_base_ + tid) +
         ",\"ts\":" + NsToUsText(ts_ns) + (ph == 'f' ? ",\"bp\":\"e\"}" : "}"));
  }

  int64_t TransferNs(int c) const {
    return T::kStepTransferNs + (c == o_->slow_channel ? o_->slow_channel_extra_ns : 0);
  }

  void Collective(int k) {
    const int64_t job_start = static_cast<int64_t>(k) * o_->period_ns;
    const int64_t host = TraceNs(job_start + o_->arrival_delay_ns);
    const int64_t gpu_start =
        TraceNs(job_start + o_->max_arrival_delay_ns + T::kGpuAfterLastArrivalNs);
    int64_t gpu_end = gpu_start;
    for (int c = 0; c < o_->channels; ++c) {
      gpu_end = std::max(gpu_end, gpu_start + o_->steps * (T::kStepWaitNs + TransferNs(c)));
    }
    const uint64_t coll_id = next_id_++;
    const std::string fn = "\"func\":\"" + o_->func + "\"";
    Slice("CollApi", o_->func, 100, host, T::kCollApiNs, next_id_++,
          "," + fn + ",\"count\":" + Num(o_->bytes / 4) +
              ",\"datatype\":\"ncclFloat32\",\"root\":0,\"graph_captured\":false");
    Slice("KernelLaunch", "KernelLaunch", 100, host + T::kLaunchStartNs, T::kLaunchNs,
          next_id_++, "");
    const std::string parent = ",\"parent\":" + Num(coll_id);
    for (int c = 0; c < o_->channels; ++c) {
      const int64_t step_ns = T::kStepWaitNs + TransferNs(c);
      for (int d = 0; d < 2; ++d) {
        for (int s = 0; s < o_->steps; ++s) {
          const int64_t start = gpu_start + s * step_ns;
          const uint64_t step_id = next_id_++;
          const int tid = 400 + 2 * c + d;
          Slice("KernelStep", d == 0 ? "Send" : "Recv", tid, start, step_ns, step_id,
                parent + ",\"channel\":" + Num(c) + ",\"send\":" + (d == 0 ? "true" : "false") +
                    ",\"peer\":" + Peer(d) + ",\"step\":" + Num(s) + ",\"size\":65536" +
                    ",\"gpu_start_ns\":" + Num(GpuRawNs(start)) + ",\"gpu_ready_ns\":" +
                    Num(GpuRawNs(start + T::kStepWaitNs)) + ",\"gpu_stop_ns\":" +
                    Num(GpuRawNs(start + step_ns)) + ",\"abandoned\":false");
          const std::string half_parent = ",\"parent\":" + Num(step_id) + ",\"kernel_step\":" + Num(step_id);
          Slice("KernelStepWait", "wait", tid, start, T::kStepWaitNs, next_id_++, half_parent);
          Slice("KernelStepTransfer", "transfer", tid, start + T::kStepWaitNs, TransferNs(c),
                next_id_++, half_parent);
        }
        if (o_->with_proxy) {
          Slice("ProxyOp", d == 0 ? "ProxySend" : "ProxyRecv", 500 + 2 * c + d, gpu_start,
                o_->steps * step_ns, next_id_++,
                parent + ",\"channel\":" + Num(c) + ",\"peer\":" + Peer(d) + ",\"steps\":" +
                    Num(o_->steps) + ",\"chunk_size\":65536,\"send\":" +
                    (d == 0 ? "true" : "false"));
        }
      }
      const int64_t ch_end = gpu_start + o_->steps * step_ns;
      Slice("KernelCh", "KernelCh", 300 + c, gpu_start, ch_end - gpu_start, next_id_++,
            parent + ",\"channel\":" + Num(c) + ",\"gpu_start_ns\":" + Num(GpuRawNs(gpu_start)) +
                ",\"gpu_stop_ns\":" + Num(GpuRawNs(ch_end)));
    }
    Slice("CollGpu", o_->func, 200, gpu_start, gpu_end - gpu_start, next_id_++,
          parent + "," + fn + ",\"coll\":" + Num(coll_id));
    Flow('f', 200, gpu_start, coll_id);
    Slice("Coll", o_->func, 100, host + T::kCollStartNs, T::kCollNs, coll_id,
          "," + fn + ",\"seq\":" + Num(k) + ",\"count\":" + Num(o_->bytes / 4) +
              ",\"datatype\":\"ncclFloat32\",\"bytes\":" + Num(o_->bytes) +
              ",\"root\":0,\"algo\":\"" + o_->algo + "\",\"proto\":\"" + o_->proto +
              "\",\"channels\":" + Num(o_->channels) + ",\"warps\":8,\"gpu_start\":" +
              NsToUsText(gpu_start) + ",\"gpu_end\":" + NsToUsText(gpu_end));
    Flow('s', 100, host + T::kCollStartNs, coll_id);
  }

  const std::vector<SyntheticRankOptions>& ranks_;
  const std::function<void(std::string_view)>& sink_;
  const SyntheticRankOptions* o_ = nullptr;  // the rank being written
  size_t current_ = 0;
  std::string comm_;
  int tid_base_ = 0;
  std::map<std::string, uint64_t> counts_;
  std::vector<uint64_t> next_ids_;  // per rank
  uint64_t next_id_ = 1;
  int64_t last_ts_ns_ = 0;
  bool first_line_ = true;
};

}  // namespace

uint64_t SyntheticEventCount(const SyntheticRankOptions& o) {
  const uint64_t tracks = 1 + 1 + o.channels * (1 + 2 + (o.with_proxy ? 2 : 0));
  const uint64_t per_channel = 2 * (3 * o.steps + (o.with_proxy ? 1 : 0)) + 1;
  const uint64_t per_coll = 2 + o.channels * per_channel + 1 + 2 + 1;
  return 1 + 2 * tracks + 1 + o.num_colls * per_coll + 1;
}

void WriteSyntheticTrace(const SyntheticRankOptions& options,
                         const std::function<void(std::string_view)>& sink) {
  const std::vector<SyntheticRankOptions> ranks = {options};
  Writer(ranks, sink).Run();
}

void WriteSyntheticProcessTrace(const std::vector<SyntheticRankOptions>& ranks,
                                const std::function<void(std::string_view)>& sink) {
  if (!ranks.empty()) Writer(ranks, sink).Run();
}

bool WriteSyntheticProcessTraceFile(const std::string& path,
                                    const std::vector<SyntheticRankOptions>& ranks,
                                    std::string* error) {
  OutputFile file;
  if (!file.Open(path, EndsWith(path, ".gz"), error)) return false;
  WriteSyntheticProcessTrace(ranks, [&file](std::string_view piece) { file.Write(piece); });
  return file.Commit(error);
}

std::string SyntheticTraceText(const SyntheticRankOptions& options) {
  std::string out;
  WriteSyntheticTrace(options, [&out](std::string_view piece) { out.append(piece); });
  return out;
}

bool WriteSyntheticTraceFile(const std::string& path, const SyntheticRankOptions& options,
                             std::string* error) {
  OutputFile file;
  if (!file.Open(path, EndsWith(path, ".gz"), error)) return false;
  WriteSyntheticTrace(options, [&file](std::string_view piece) { file.Write(piece); });
  return file.Commit(error);
}

}  // namespace katrace_test
