// Host memory for KernelStep rings on the CPU path (emulated writers, tests, benchmarks): one
// zeroed ring pair per channel plus each channel's reservation counter. A GPU writer needs
// host-mapped memory instead (device/ allocates it with cudaHostAlloc); the views look the same.
//
// The memory is one anonymous mapping, zero pages until written: rings are sized for the worst
// burst, and a run that never fills them (most do not) pays only for what its writers touched.
// When it cannot be mapped (a zero or negative count, or more than the machine maps) there are
// no channels: num_channels() is 0, views() is empty, and error() says why.
#ifndef KATRACE_PROXY_DRAIN_STEP_RING_BUFFERS_H_
#define KATRACE_PROXY_DRAIN_STEP_RING_BUFFERS_H_

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <string>
#include <vector>

#include "katrace/step_ring.h"

namespace katrace {

class StepRingBuffers {
 public:
  // |depth_log2| is clamped to the ring's limits.
  StepRingBuffers(int num_channels, uint32_t depth_log2);

  // |channel| in [0, num_channels()).
  StepRingView view(int channel) const;
  std::vector<StepRingView> views() const;
  int num_channels() const { return num_channels_; }
  uint32_t depth_log2() const { return depth_log2_; }
  // Empty, or why the requested channels have no rings.
  const std::string& error() const { return error_; }

 private:
  // A cache line per counter: writers of different channels never share one.
  struct alignas(64) Counter {
    uint64_t next_seq;
  };
  struct Unmapper {
    size_t bytes;  // no initializer: it would keep the deleter from being default-constructible here
    void operator()(unsigned char* memory) const;
  };

  int num_channels_ = 0;
  uint32_t depth_log2_;
  std::string error_;
  // The rings of every channel back to back, then the counters.
  std::unique_ptr<unsigned char, Unmapper> memory_{nullptr, Unmapper{0}};
  Counter* counters_ = nullptr;
};

}  // namespace katrace

#endif  // KATRACE_PROXY_DRAIN_STEP_RING_BUFFERS_H_
