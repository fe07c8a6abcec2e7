// A slice-pipelined ring exchange on one GPU, shaped like NCCL's simple-prims slice loop: each CTA
// is one (rank, channel); ranks pass slices to the next rank through a FIFO in global memory with
// head (credit) and tail (data) counters, and stamp KernelSteps for their send and receive roles.
// Launched from demo_ring.cu.
#ifndef KATRACE_DEVICE_DEMO_RING_KERNEL_CUH_
#define KATRACE_DEVICE_DEMO_RING_KERNEL_CUH_

#include <cuda_runtime.h>
#include <stdint.h>

#include "katrace/step_ring.h"

namespace katrace {

// FIFO slots per connection, as NCCL_STEPS.
constexpr int kDemoFifoSlots = 8;
// Thread of the receive role (waits for data, posts credit) and of the send role (waits for
// credit, posts data); each is lane 0 of its own warp.
constexpr int kDemoRecvThread = 0;
constexpr int kDemoSendThread = 32;
constexpr int kDemoMinThreads = 64;

struct DemoRingParams {
  int num_ranks;
  int num_channels;
  uint32_t num_slices;   // per rank and channel in one launch
  uint32_t slice_elems;  // 16-byte elements per slice
  uint64_t slice_base;   // FIFO counters continue across launches
  uint32_t work_tag;
  uint32_t sample_every;
  const uint4* src;     // [rank][channel][num_slices][slice_elems]
  uint4* dst;           // same shape: what the previous rank sent
  uint4* fifo;          // [rank][channel][kDemoFifoSlots][slice_elems]: the rank's receive FIFO
  uint64_t* fifo_tail;  // [rank][channel]: slices the previous rank has posted into the FIFO
  uint64_t* fifo_head;  // [rank][channel]: slices the rank has consumed (credit)
  // Ring of (rank 0, channel 0), device pointers; ring r * num_channels + c follows at
  // StepRingBytes strides, and its reservation counter at next_seq + r * num_channels + c.
  StepRingView rings;
  uint64_t timeout_ns;  // a wait longer than this aborts the launch (never hang a borrowed GPU)
  int* timed_out;       // set to 1 when any wait timed out
};

// Grid: num_ranks * num_channels CTAs, all of which must be resident at once.
cudaError_t LaunchDemoRing(const DemoRingParams& params, bool stamping, int threads_per_block,
                           cudaStream_t stream);

}  // namespace katrace

#endif  // KATRACE_DEVICE_DEMO_RING_KERNEL_CUH_
