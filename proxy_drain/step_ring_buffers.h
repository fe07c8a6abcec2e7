// Host memory for KernelStep rings on the CPU path (emulated writers, tests, benchmarks): one
// zeroed ring pair per channel plus each channel's reservation counter. A GPU writer needs
// host-mapped memory instead (device/ allocates it with cudaHostAlloc); the views look the same.
#ifndef KATRACE_PROXY_DRAIN_STEP_RING_BUFFERS_H_
#define KATRACE_PROXY_DRAIN_STEP_RING_BUFFERS_H_

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <vector>

#include "katrace/step_ring.h"

namespace katrace {

class StepRingBuffers {
 public:
  StepRingBuffers(int num_channels, uint32_t depth_log2);

  StepRingView view(int channel) const;
  std::vector<StepRingView> views() const;
  int num_channels() const { return num_channels_; }
  uint32_t depth_log2() const { return depth_log2_; }

 private:
  // A cache line per counter: writers of different channels never share one.
  struct alignas(64) Counter {
    uint64_t next_seq;
  };
  struct FreeDeleter {
    void operator()(void* memory) const;
  };

  int num_channels_;
  uint32_t depth_log2_;
  std::unique_ptr<unsigned char, FreeDeleter> rings_;
  std::unique_ptr<Counter[]> counters_;
};

}  // namespace katrace

#endif  // KATRACE_PROXY_DRAIN_STEP_RING_BUFFERS_H_
