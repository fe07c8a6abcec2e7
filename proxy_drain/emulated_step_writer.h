// A CPU stand-in for the GPU side of KernelStep: one thread per role (direction, peer) of each
// channel runs the device's StepStamper on a realtime clock, slice by slice, through the works of
// its channel. By default the roles of a channel meet at a barrier after every slice, like simple
// prims' threads, so no writer laps another. Used by tests, benchmarks and the simulator's CPU
// path.
//
// Thread safety: Start and Join from one controlling thread; the writer threads touch only the
// rings and their own state.
#ifndef KATRACE_PROXY_DRAIN_EMULATED_STEP_WRITER_H_
#define KATRACE_PROXY_DRAIN_EMULATED_STEP_WRITER_H_

#include <stdint.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "katrace/step_ring.h"

namespace katrace {

struct EmulatedRole {
  bool is_send;
  int peer;
};

struct EmulatedWork {
  uint32_t work_tag;
  uint32_t num_steps;  // slices per role
  uint32_t size_bytes;
};

struct EmulatedChannel {
  StepRingView ring;
  std::vector<EmulatedRole> roles;  // at most kStepMaxWritersPerRing
  std::vector<EmulatedWork> works;  // run in order
};

constexpr uint64_t kEmulatedMaxAheadNs = 200000;

struct EmulatedStepWriterOptions {
  uint32_t sample_every = 1;
  uint64_t wait_ns = 0;      // busy time between WaitStart and TransferStart
  uint64_t transfer_ns = 0;  // busy time between TransferStart and SliceEnd
  // Pace: a role writes one slice per period on average (0: as fast as it can). A role ahead of
  // schedule by more than kEmulatedMaxAheadNs sleeps, so paced writers come in short bursts and
  // leave the CPU to the drain in between.
  uint64_t slice_period_ns = 0;
  // Roles of a channel meet at a barrier after every slice, as GPU threads do, which keeps the
  // ring invariant of step_ring.h. Off: roles run independently (benchmarks at high rates); a role
  // would then have to stall for 16 laps of the ring to break the invariant.
  bool lockstep = true;
  // Test hook: the stop of every n-th kept step of a role is never written (0: none).
  uint32_t drop_stop_every = 0;
};

class EmulatedStepWriter {
 public:
  EmulatedStepWriter(std::vector<EmulatedChannel> channels,
                     const EmulatedStepWriterOptions& options);
  ~EmulatedStepWriter();  // joins
  EmulatedStepWriter(const EmulatedStepWriter&) = delete;
  EmulatedStepWriter& operator=(const EmulatedStepWriter&) = delete;

  void Start();
  void Join();
  bool Done() const { return num_running_.load(std::memory_order_acquire) == 0; }
  // Start records written (kept steps), valid after Join.
  uint64_t num_starts_written() const { return num_starts_.load(std::memory_order_relaxed); }
  uint64_t num_stops_written() const { return num_stops_.load(std::memory_order_relaxed); }

 private:
  class SliceBarrier;
  void RunRole(size_t channel_index, size_t role_index);

  std::vector<EmulatedChannel> channels_;
  EmulatedStepWriterOptions options_;
  std::vector<std::unique_ptr<SliceBarrier>> barriers_;  // one per channel
  std::vector<std::thread> threads_;
  std::atomic<int> num_running_{0};
  std::atomic<uint64_t> num_starts_{0};
  std::atomic<uint64_t> num_stops_{0};
};

}  // namespace katrace

#endif  // KATRACE_PROXY_DRAIN_EMULATED_STEP_WRITER_H_
