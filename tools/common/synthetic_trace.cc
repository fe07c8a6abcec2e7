// Synthetic trace writer (see synthetic_trace.h). Track ids: 100 host, 200 GPU comm, 300+c GPU
// channel, 400+2c+d KernelStep (d = 0 send, 1 recv), 500+2c+d proxy; tid 0 for counters.
#include "tools/common/synthetic_trace.h"

#include <algorithm>
#include <map>

#include "katrace/drain_counters.h"
#include "tools/common/json_fields.h"
#include "tools/common/output_file.h"

namespace katrace::tools {
namespace {

using T = SyntheticTiming;

std::string Hex16(uint64_t v) {
  static const char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) out[i] = kHex[v & 15];
  return out;
}

std::string Num(int64_t v) { return std::to_string(v); }

class Writer {
 public:
  Writer(const SyntheticRankOptions& o, const std::function<void(std::string_view)>& sink)
      : o_(o), sink_(sink), comm_(Hex16(o.comm_hash)) {}

  void Run() {
    sink_("{\"traceEvents\":[\n");
    Header();
    for (int k = 0; k < o_.num_colls; ++k) Collective(k);
    const std::string end_ts = NsToUsText(last_ts_ns_);
    Line("{\"name\":\"katrace trace end\",\"ph\":\"i\",\"s\":\"g\",\"pid\":" + Num(o_.rank) +
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
          "\"gpu_offset_ns\":" + Num(o_.gpu_offset_ns) +
          ",\"gpu_offset_error_ns\":250,\"gpu_offset_samples\":" + Num(o_.num_colls) +
          ",\"drain\":" + DrainObject() + ","
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

  std::string HeaderKeys() const {
    return "\"format\":\"katrace-trace\",\"version\":1,\"rank\":" + Num(o_.rank) +
           ",\"host\":\"" + o_.host + "\",\"os_pid\":" + Num(o_.os_pid) +
           ",\"base_realtime_ns\":" + Num(o_.base_realtime_ns) +
           ",\"base_monotonic_ns\":" + Num(o_.base_monotonic_ns);
  }

  void Line(const std::string& event) {
    if (!first_line_) sink_(",\n");
    first_line_ = false;
    sink_(event);
  }

  void Meta(const char* what, int tid, const std::string& args) {
    Line(std::string("{\"name\":\"") + what + "\",\"ph\":\"M\",\"pid\":" + Num(o_.rank) +
         ",\"tid\":" + Num(tid) + ",\"args\":" + args + "}");
  }

  void Track(int tid, const std::string& name) {
    Meta("thread_name", tid, "{\"name\":\"" + name + "\"}");
    Meta("thread_sort_index", tid, "{\"sort_index\":" + Num(tid) + "}");
  }

  std::string Peer(int dir) const {
    const int64_t n = std::max<int64_t>(1, o_.nranks);
    return Num(dir == 0 ? (o_.rank + 1) % n : (o_.rank + n - 1) % n);
  }

  void Header() {
    Meta("process_name", 0,
         "{\"name\":\"rank " + Num(o_.rank) + " (" + o_.host + ", pid " + Num(o_.os_pid) +
             ")\",\"katrace\":{" + HeaderKeys() + "}}");
    Track(100, "host " + Num(o_.os_pid + 1));
    Track(200, "GPU comm " + comm_);
    for (int c = 0; c < o_.channels; ++c) {
      Track(300 + c, "GPU comm " + comm_ + " ch " + Num(c));
      for (int d = 0; d < 2; ++d) {
        const std::string dir = d == 0 ? " send peer " : " recv peer ";
        Track(400 + 2 * c + d, "GPU comm " + comm_ + " ch " + Num(c) + dir + Peer(d));
        if (o_.with_proxy) {
          Track(500 + 2 * c + d, "proxy comm " + comm_ + " ch " + Num(c) + dir + Peer(d));
        }
      }
    }
    Line("{\"name\":\"katrace drops\",\"ph\":\"C\",\"pid\":" + Num(o_.rank) +
         ",\"tid\":0,\"ts\":0.000,\"args\":{\"Coll\":0,\"KernelStep\":0}}");
  }

  // Trace ns of a job-timeline instant on this rank.
  int64_t TraceNs(int64_t job_ns) const {
    return o_.job_origin_realtime_ns + job_ns - o_.base_realtime_ns;
  }
  int64_t GpuRawNs(int64_t trace_ns) const {
    return o_.base_monotonic_ns + trace_ns - o_.gpu_offset_ns;
  }

  void Slice(const std::string& cat, const std::string& name, int tid, int64_t ts_ns,
             int64_t dur_ns, uint64_t id, const std::string& more_args) {
    ++counts_[cat];
    last_ts_ns_ = std::max(last_ts_ns_, ts_ns + dur_ns);
    Line("{\"name\":\"" + name + "\",\"cat\":\"" + cat + "\",\"ph\":\"X\",\"pid\":" +
         Num(o_.rank) + ",\"tid\":" + Num(tid) + ",\"ts\":" + NsToUsText(ts_ns) +
         ",\"dur\":" + NsToUsText(dur_ns) + ",\"args\":{\"id\":" + Num(id) + more_args +
         ",\"comm\":\"" + comm_ + "\",\"rank\":" + Num(o_.rank) + "}}");
  }

  void Flow(char ph, int tid, int64_t ts_ns, uint64_t id) {
    Line(std::string("{\"name\":\"") + o_.func + "\",\"cat\":\"flow\",\"ph\":\"" + ph +
         "\",\"id\":" + Num(id) + ",\"pid\":" + Num(o_.rank) + ",\"tid\":" + Num(tid) +
         ",\"ts\":" + NsToUsText(ts_ns) + (ph == 'f' ? ",\"bp\":\"e\"}" : "}"));
  }

  int64_t TransferNs(int c) const {
    return T::kStepTransferNs + (c == o_.slow_channel ? o_.slow_channel_extra_ns : 0);
  }

  void Collective(int k) {
    const int64_t job_start = static_cast<int64_t>(k) * o_.period_ns;
    const int64_t host = TraceNs(job_start + o_.arrival_delay_ns);
    const int64_t gpu_start =
        TraceNs(job_start + o_.max_arrival_delay_ns + T::kGpuAfterLastArrivalNs);
    int64_t gpu_end = gpu_start;
    for (int c = 0; c < o_.channels; ++c) {
      gpu_end = std::max(gpu_end, gpu_start + o_.steps * (T::kStepWaitNs + TransferNs(c)));
    }
    const uint64_t coll_id = next_id_++;
    const std::string fn = "\"func\":\"" + o_.func + "\"";
    Slice("CollApi", o_.func, 100, host, T::kCollApiNs, next_id_++,
          "," + fn + ",\"count\":" + Num(o_.bytes / 4) +
              ",\"datatype\":\"ncclFloat32\",\"root\":0,\"graph_captured\":false");
    Slice("KernelLaunch", "KernelLaunch", 100, host + T::kLaunchStartNs, T::kLaunchNs,
          next_id_++, "");
    const std::string parent = ",\"parent\":" + Num(coll_id);
    for (int c = 0; c < o_.channels; ++c) {
      const int64_t step_ns = T::kStepWaitNs + TransferNs(c);
      for (int d = 0; d < 2; ++d) {
        for (int s = 0; s < o_.steps; ++s) {
          const int64_t start = gpu_start + s * step_ns;
          const uint64_t step_id = next_id_++;
          const int tid = 400 + 2 * c + d;
          Slice("KernelStep", d == 0 ? "Send" : "Recv", tid, start, step_ns, step_id,
                parent + ",\"channel\":" + Num(c) + ",\"send\":" + (d == 0 ? "true" : "false") +
                    ",\"peer\":" + Peer(d) + ",\"step\":" + Num(s) + ",\"size\":65536" +
                    ",\"gpu_start_ns\":" + Num(GpuRawNs(start)) + ",\"gpu_ready_ns\":" +
                    Num(GpuRawNs(start + T::kStepWaitNs)) + ",\"gpu_stop_ns\":" +
                    Num(GpuRawNs(start + step_ns)) + ",\"abandoned\":false");
          const std::string half_parent = ",\"parent\":" + Num(step_id);
          Slice("KernelStepWait", "wait", tid, start, T::kStepWaitNs, next_id_++, half_parent);
          Slice("KernelStepTransfer", "transfer", tid, start + T::kStepWaitNs, TransferNs(c),
                next_id_++, half_parent);
        }
        if (o_.with_proxy) {
          Slice("ProxyOp", d == 0 ? "ProxySend" : "ProxyRecv", 500 + 2 * c + d, gpu_start,
                o_.steps * step_ns, next_id_++,
                parent + ",\"channel\":" + Num(c) + ",\"peer\":" + Peer(d) + ",\"steps\":" +
                    Num(o_.steps) + ",\"chunk_size\":65536,\"send\":" +
                    (d == 0 ? "true" : "false"));
        }
      }
      const int64_t ch_end = gpu_start + o_.steps * step_ns;
      Slice("KernelCh", "KernelCh", 300 + c, gpu_start, ch_end - gpu_start, next_id_++,
            parent + ",\"channel\":" + Num(c) + ",\"gpu_start_ns\":" + Num(GpuRawNs(gpu_start)) +
                ",\"gpu_stop_ns\":" + Num(GpuRawNs(ch_end)));
    }
    Slice("CollGpu", o_.func, 200, gpu_start, gpu_end - gpu_start, next_id_++,
          parent + "," + fn + ",\"coll\":" + Num(coll_id));
    Flow('f', 200, gpu_start, coll_id);
    Slice("Coll", o_.func, 100, host + T::kCollStartNs, T::kCollNs, coll_id,
          "," + fn + ",\"seq\":" + Num(k) + ",\"count\":" + Num(o_.bytes / 4) +
              ",\"datatype\":\"ncclFloat32\",\"bytes\":" + Num(o_.bytes) +
              ",\"root\":0,\"algo\":\"" + o_.algo + "\",\"proto\":\"" + o_.proto +
              "\",\"channels\":" + Num(o_.channels) + ",\"warps\":8,\"gpu_start\":" +
              NsToUsText(gpu_start) + ",\"gpu_end\":" + NsToUsText(gpu_end));
    Flow('s', 100, host + T::kCollStartNs, coll_id);
  }

  const SyntheticRankOptions& o_;
  const std::function<void(std::string_view)>& sink_;
  const std::string comm_;
  std::map<std::string, uint64_t> counts_;
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
  Writer(options, sink).Run();
}

std::string SyntheticTraceText(const SyntheticRankOptions& options) {
  std::string out;
  WriteSyntheticTrace(options, [&out](std::string_view piece) { out.append(piece); });
  return out;
}

bool WriteSyntheticTraceFile(const std::string& path, const SyntheticRankOptions& options,
                             std::string* error) {
  OutputFile file;
  if (!file.Open(path, HasGzipSuffix(path), error)) return false;
  WriteSyntheticTrace(options, [&file](std::string_view piece) { file.Write(piece); });
  return file.Commit(error);
}

}  // namespace katrace::tools
