// Writes a synthetic katrace trace (one rank, or several of one process) in the documented format
// (docs/trace-format.md): AllReduce-style collectives with host API/enqueue slices, proxy ops,
// per-channel KernelCh, KernelSteps with wait/transfer halves, CollGpu extents and flows. Unlike
// the plugin, which writes slices in start order (a parent before its children), it writes each
// collective in completion order (children before their Coll): the tools must not depend on the
// order of a file's slices, and this is the order the plugin's traces never test. Ranks of one synthetic job share a timeline, so a
// merge must line the same collective up across ranks. Test support for the trace tools' suites
// (big inputs for throughput runs too); the durations are fixed so tests can compute every
// summary by hand (see SyntheticTiming).
#ifndef KATRACE_TEST_SUPPORT_SYNTHETIC_TRACE_H_
#define KATRACE_TEST_SUPPORT_SYNTHETIC_TRACE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace katrace_test {

struct SyntheticTiming {
  static constexpr int64_t kCollApiNs = 5000;
  static constexpr int64_t kCollStartNs = 1000;  // after CollApi start
  static constexpr int64_t kCollNs = 3000;
  static constexpr int64_t kLaunchStartNs = 2000;
  static constexpr int64_t kLaunchNs = 500;
  static constexpr int64_t kStepWaitNs = 500;
  static constexpr int64_t kStepTransferNs = 1000;
  static constexpr int64_t kGpuAfterLastArrivalNs = 10000;
};

struct SyntheticRankOptions {
  int64_t rank = 0;  // in its communicator (the events' rank arg)
  int64_t nranks = 1;
  // The rank's Perfetto process (its global rank); -1: the same as |rank|. Set, the header lists
  // it in `ranks`, as the plugin's traces do.
  int64_t pid = -1;
  std::string host = "node0";
  int64_t os_pid = 4242;
  // This rank's clock base; the job's t = 0 is |job_origin_realtime_ns| on every rank.
  int64_t base_realtime_ns = 1700000000000000000;
  int64_t base_monotonic_ns = 5000000000;
  int64_t job_origin_realtime_ns = 1700000000001000000;
  uint64_t comm_hash = 0x9a3c0f1e12345678;
  int num_colls = 4;
  int channels = 2;
  int steps = 2;  // KernelSteps per channel and direction
  int64_t period_ns = 200000;
  std::string func = "AllReduce";
  std::string algo = "Ring";
  std::string proto = "Simple";
  uint64_t bytes = 1 << 20;
  // Host arrival of this rank after the job's collective start, and the largest of any rank.
  int64_t arrival_delay_ns = 0;
  int64_t max_arrival_delay_ns = 0;
  // A channel whose transfers take |slow_channel_extra_ns| longer (-1: none).
  int slow_channel = -1;
  int64_t slow_channel_extra_ns = 0;
  int64_t gpu_offset_ns = 1000000;
  bool with_proxy = true;
};

// Number of events WriteSyntheticTrace emits for |options| (for throughput figures).
uint64_t SyntheticEventCount(const SyntheticRankOptions& options);
// Streams the trace to |sink| in pieces.
void WriteSyntheticTrace(const SyntheticRankOptions& options,
                         const std::function<void(std::string_view)>& sink);
// One file holding several ranks of one OS process (several GPUs per process, or a simulator), as
// the plugin writes it: each rank its own pid, the header (the first rank's host, OS pid and clock
// base) listing them all in `ranks`, the footer's communicators naming each one's pid.
void WriteSyntheticProcessTrace(const std::vector<SyntheticRankOptions>& ranks,
                                const std::function<void(std::string_view)>& sink);
bool WriteSyntheticProcessTraceFile(const std::string& path,
                                    const std::vector<SyntheticRankOptions>& ranks,
                                    std::string* error);
// The whole trace as text (small traces only).
std::string SyntheticTraceText(const SyntheticRankOptions& options);
// Writes to |path| (gzip when it ends in .gz) through common/output_file.h.
bool WriteSyntheticTraceFile(const std::string& path, const SyntheticRankOptions& options,
                             std::string* error);

}  // namespace katrace_test

#endif  // KATRACE_TEST_SUPPORT_SYNTHETIC_TRACE_H_
