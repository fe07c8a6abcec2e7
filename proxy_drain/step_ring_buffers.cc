// Host ring memory for the CPU path; see step_ring_buffers.h.
#include "proxy_drain/step_ring_buffers.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

namespace katrace {

void StepRingBuffers::Unmapper::operator()(unsigned char* memory) const {
  if (memory != nullptr) munmap(memory, bytes);
}

StepRingBuffers::StepRingBuffers(int num_channels, uint32_t depth_log2)
    : depth_log2_(depth_log2 < kStepRingMinDepthLog2   ? kStepRingMinDepthLog2
                  : depth_log2 > kStepRingMaxDepthLog2 ? kStepRingMaxDepthLog2
                                                       : depth_log2) {
  if (num_channels <= 0) {
    error_ = "no KernelStep rings for " + std::to_string(num_channels) + " channels";
    return;
  }
  // At most 2^31 channels of 40 MiB: 2^57 bytes, no overflow. StepRingBytes is a multiple of 64,
  // as each ring's starts and the counters after the rings need; the mapping is page-aligned.
  const size_t ring_bytes = StepRingBytes(depth_log2_) * size_t(num_channels);
  const size_t bytes = ring_bytes + sizeof(Counter) * size_t(num_channels);
  // Anonymous memory reads as zeros (every slot "not written yet") without being touched.
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    error_ = "cannot map " + std::to_string(bytes) + " bytes of KernelStep rings for " +
             std::to_string(num_channels) + " channels: " + strerror(errno);
    return;
  }
  memory_ = std::unique_ptr<unsigned char, Unmapper>(static_cast<unsigned char*>(memory),
                                                     Unmapper{bytes});
  counters_ = reinterpret_cast<Counter*>(memory_.get() + ring_bytes);
  num_channels_ = num_channels;
}

StepRingView StepRingBuffers::view(int channel) const {
  return MakeStepRingView(memory_.get() + StepRingBytes(depth_log2_) * size_t(channel),
                          &counters_[channel].next_seq, depth_log2_);
}

std::vector<StepRingView> StepRingBuffers::views() const {
  std::vector<StepRingView> out;
  for (int c = 0; c < num_channels_; ++c) out.push_back(view(c));
  return out;
}

}  // namespace katrace
