// Host driver of the demo ring kernel (demo_ring_kernel.cuh): GPU buffers, host-mapped KernelStep
// rings (cudaHostAlloc mapped, one ring pair per rank and channel), launches, timing and a data
// check. Free of CUDA types so that g++ code (tests, gpu_bench) can use it.
//
// Thread safety: one thread per DemoRing.
#ifndef KATRACE_DEVICE_DEMO_RING_H_
#define KATRACE_DEVICE_DEMO_RING_H_

#include <stdint.h>

#include <memory>
#include <string>

#include "katrace/step_ring.h"

namespace katrace {

struct DemoRingOptions {
  int num_ranks = 4;
  int num_channels = 4;
  uint32_t slice_bytes = 128 << 10;  // multiple of 16
  uint32_t slices_per_launch = 64;
  int threads_per_block = 256;
  uint32_t sample_every = 1;
  uint32_t ring_depth_log2 = kStepRingDefaultDepthLog2;
  uint64_t timeout_ns = 5000000000ull;
};

class DemoRing {
 public:
  // Whether device 0 can run the demo; |why| says why not (no driver, no device, ...).
  static bool GpuAvailable(std::string* why);
  static std::string GpuName();

  explicit DemoRing(const DemoRingOptions& options);
  ~DemoRing();
  DemoRing(const DemoRing&) = delete;
  DemoRing& operator=(const DemoRing&) = delete;

  bool Init(std::string* error);
  // One launch (one work, tag = launch index); clears dst first and waits for the kernel.
  bool Run(bool stamping, std::string* error);
  // Mean GPU time per launch over |launches| back-to-back launches.
  bool TimeLaunches(bool stamping, int launches, double* us_per_launch, std::string* error);
  // Every rank's dst holds exactly what its previous rank sent in the last Run.
  bool VerifyLastRun(std::string* error);

  // Host view of the ring of (rank, channel); next_seq is device memory, not for the host.
  StepRingView HostRing(int rank, int channel) const;
  // Work tag of the most recent launch (Run or TimeLaunches): the launch index.
  uint32_t last_work_tag() const;
  const DemoRingOptions& options() const { return options_; }

 private:
  struct Buffers;
  const DemoRingOptions options_;
  std::unique_ptr<Buffers> buffers_;
  uint32_t num_launches_ = 0;
};

}  // namespace katrace

#endif  // KATRACE_DEVICE_DEMO_RING_H_
