// Host ring memory for the CPU path; see step_ring_buffers.h.
#include "proxy_drain/step_ring_buffers.h"

#include <stdlib.h>
#include <string.h>

namespace katrace {

void StepRingBuffers::FreeDeleter::operator()(void* memory) const { free(memory); }

StepRingBuffers::StepRingBuffers(int num_channels, uint32_t depth_log2)
    : num_channels_(num_channels),
      depth_log2_(depth_log2 < kStepRingMinDepthLog2   ? kStepRingMinDepthLog2
                  : depth_log2 > kStepRingMaxDepthLog2 ? kStepRingMaxDepthLog2
                                                       : depth_log2),
      counters_(new Counter[size_t(num_channels)]()) {
  const size_t bytes = StepRingBytes(depth_log2_) * size_t(num_channels);
  // StepRingBytes is a multiple of 64, as aligned_alloc requires and each ring's starts need.
  rings_.reset(static_cast<unsigned char*>(aligned_alloc(64, bytes)));
  if (rings_ != nullptr) memset(rings_.get(), 0, bytes);
}

StepRingView StepRingBuffers::view(int channel) const {
  return MakeStepRingView(rings_.get() + StepRingBytes(depth_log2_) * size_t(channel),
                          &counters_[channel].next_seq, depth_log2_);
}

std::vector<StepRingView> StepRingBuffers::views() const {
  std::vector<StepRingView> out;
  for (int c = 0; c < num_channels_; ++c) out.push_back(view(c));
  return out;
}

}  // namespace katrace
