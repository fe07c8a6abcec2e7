// Emulated GPU time. %globaltimer is Unix-epoch nanoseconds that advance in ticks (about 1 µs,
// research §3.4), so the emulation is CLOCK_REALTIME quantized down to a tick. EmulatedStream
// places kernels back to back on one rank's stream, as a CUDA stream would run them.
// Thread safety: GpuClock is immutable; an EmulatedStream belongs to the one thread that launches.
#ifndef KATRACE_TOOLS_SIM_GPU_CLOCK_H_
#define KATRACE_TOOLS_SIM_GPU_CLOCK_H_

#include <time.h>

#include <algorithm>
#include <cstdint>

namespace katrace::sim {

class GpuClock {
 public:
  explicit GpuClock(uint64_t tick_ns) : tick_ns_(tick_ns == 0 ? 1 : tick_ns) {}

  uint64_t NowNs() const {
    timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return Quantize(static_cast<uint64_t>(now.tv_sec) * 1000000000ull +
                    static_cast<uint64_t>(now.tv_nsec));
  }
  uint64_t Quantize(uint64_t ns) const { return ns - ns % tick_ns_; }
  uint64_t tick_ns() const { return tick_ns_; }

 private:
  uint64_t tick_ns_;
};

struct GpuWindow {
  uint64_t start_ns = 0;
  uint64_t stop_ns = 0;
};

class EmulatedStream {
 public:
  explicit EmulatedStream(const GpuClock* clock) : clock_(clock) {}

  // A kernel launched now starts after a launch latency, or when the previous kernel on the
  // stream ends, whichever is later.
  GpuWindow Launch(uint64_t duration_ns) {
    constexpr uint64_t kLaunchLatencyNs = 4000;
    uint64_t tick = clock_->tick_ns();
    uint64_t start = std::max(clock_->NowNs() + kLaunchLatencyNs, busy_until_ns_);
    start = clock_->Quantize(start + tick - 1);
    uint64_t stop = clock_->Quantize(start + std::max(duration_ns, tick) + tick - 1);
    busy_until_ns_ = stop;
    return {start, stop};
  }

 private:
  const GpuClock* clock_;
  uint64_t busy_until_ns_ = 0;
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_GPU_CLOCK_H_
