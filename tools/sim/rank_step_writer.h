// A rank's emulated GPU for KernelSteps on the CPU path: one host thread that runs the rank's
// launched kernels in order, as one CUDA stream would, and writes each channel's slices into that
// channel's ring through the device's StepStamper (include/katrace) on the run's GPU timeline (gpu_clock.h), as
// simple prims would: per slice every role (send to one peer, recv from another) stamps wait
// start, transfer start and slice end.
//
// The writer is the GPU: a kernel runs when the writer runs it. Its channel windows are the
// planned ones (PlanLauncher's emulated stream: bandwidth-sized, a tick or two of skew per
// channel) shifted to when the writer really began, never before the previous kernel ended, and
// stretched when the slices took longer; those become the KernelCh stamps, so every KernelStep
// lies inside its KernelCh. Slices are spread over the window when the writer is far enough
// ahead to sleep; otherwise they run back to back.
// One writer per ring, so the ring's writer limit always holds.
//
// Thread safety: Enqueue from the launching thread; TakeUpdates from one other thread (the
// proxy); Start/StopAndJoin from the owner; counters() after StopAndJoin.
#ifndef KATRACE_TOOLS_SIM_RANK_STEP_WRITER_H_
#define KATRACE_TOOLS_SIM_RANK_STEP_WRITER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "katrace/step_ring.h"
#include "tools/sim/kernel_step_stats.h"
#include "tools/sim/step_work.h"

namespace katrace::sim {

struct RankStepWriterOptions {
  int rank = 0;
  uint32_t sample_every = 1;  // must match the drain's
  bool bench = false;         // never wait for emulated GPU time
};

// What the writer tells the proxy about one (channel, work): first that it began (the window's
// start is final), then that it finished (every record written; the stop is final).
struct StepWorkUpdate {
  int channel = 0;
  uint64_t work_counter = 0;
  GpuWindow gpu;
  bool finished = false;
  bool has_send = false;  // roles the drain has registered, to retire
  bool has_recv = false;
};

class RankStepWriter {
 public:
  // |rings|[c] is channel c's ring.
  RankStepWriter(std::vector<StepRingView> rings, const RankStepWriterOptions& options);
  ~RankStepWriter();
  RankStepWriter(const RankStepWriter&) = delete;
  RankStepWriter& operator=(const RankStepWriter&) = delete;

  void Start();
  void Enqueue(std::vector<StepWork> kernel);
  // Appends the updates since the last call, in order; false when there were none.
  bool TakeUpdates(std::vector<StepWorkUpdate>* out);
  // Runs what is queued, then stops.
  void StopAndJoin();

  const KernelStepStats& counters() const { return counters_; }

 private:
  void Run();
  void RunKernel(const std::vector<StepWork>& kernel);
  void Publish(const std::vector<StepWork>& kernel, const std::vector<GpuWindow>& windows,
               bool finished);

  const std::vector<StepRingView> rings_;
  const RankStepWriterOptions options_;
  uint64_t device_free_ns_ = 0;  // when the previous kernel ended (writer thread)
  KernelStepStats counters_;     // writer thread only, until joined

  std::mutex mutex_;
  std::condition_variable posted_;
  std::deque<std::vector<StepWork>> queue_;  // guarded by mutex_
  std::vector<StepWorkUpdate> updates_;      // guarded by mutex_
  bool stop_requested_ = false;              // guarded by mutex_
  // Lets the proxy's poll skip the mutex while nothing happened; set and cleared under mutex_,
  // read relaxed outside it (a stale false only delays an update to the next poll).
  std::atomic<bool> has_updates_{false};
  std::thread thread_;
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_RANK_STEP_WRITER_H_
