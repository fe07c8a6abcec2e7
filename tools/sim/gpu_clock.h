// Emulated GPU time. %globaltimer advances in ticks (about 1 µs, research §3.4) and is not the
// host's clock: it is seeded from realtime on most drivers, but may count from boot, sit a few ms
// off, or drift. GpuClockModel says which (--gpu-clock, --gpu-jitter); GpuTimeline turns the
// host's CLOCK_REALTIME into that GPU time, and the report prints the truth (offset at the origin,
// drift, jitter) so a test can tell where each stamp truly was. Everything in the sim that waits
// on GPU time (the emulated stream, the proxy's polls, the KernelStep writers) reads the same
// timeline, so the schedule is unchanged whatever the model; only the stamps move.
// EmulatedStream places kernels back to back on one rank's stream, as a CUDA stream would run
// them.
// Thread safety: GpuTimeline::Start runs before the rank threads start (thread creation orders
// it) and is read-only afterwards; GpuClock is immutable; an EmulatedStream belongs to the one
// thread that launches.
#ifndef KATRACE_TOOLS_SIM_GPU_CLOCK_H_
#define KATRACE_TOOLS_SIM_GPU_CLOCK_H_

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace katrace::sim {

enum class GpuClockKind { kRealtime, kBoot, kOffset, kDrift };

struct GpuClockModel {
  GpuClockKind kind = GpuClockKind::kRealtime;
  int64_t offset_ns = 0;   // kOffset: GPU time minus realtime
  double drift_ppm = 0;    // kDrift: the GPU clock gains this much per second of realtime
  uint64_t jitter_ns = 0;  // every stamp moves by up to this much, either way
  std::string spec = "realtime";  // as given on the command line
};

// gpu_ns = realtime_ns + offset_ns + drift_ppm·1e-6·(realtime_ns − origin_realtime_ns).
struct GpuTimelineTruth {
  GpuClockModel model;
  uint64_t origin_realtime_ns = 0;  // when the run's timeline started
  int64_t offset_ns = 0;            // GPU minus realtime at the origin (boot: minus the boot time)
  uint64_t seed = 0;                // of the jitter
};

class GpuTimeline {
 public:
  static uint64_t RealtimeNs() { return ClockNs(CLOCK_REALTIME); }

  // Fixes the timeline for one run: its origin is now.
  static void Start(const GpuClockModel& model, uint64_t seed) {
    GpuTimelineTruth& t = truth_;
    t.model = model;
    t.seed = seed;
    t.origin_realtime_ns = RealtimeNs();
    switch (model.kind) {
      case GpuClockKind::kRealtime:
      case GpuClockKind::kDrift:
        t.offset_ns = 0;
        break;
      case GpuClockKind::kBoot:
        // Counting from boot: realtime minus the realtime of the boot (CLOCK_BOOTTIME's epoch).
        t.offset_ns = static_cast<int64_t>(ClockNs(CLOCK_BOOTTIME)) - static_cast<int64_t>(t.origin_realtime_ns);
        break;
      case GpuClockKind::kOffset:
        t.offset_ns = model.offset_ns;
        break;
    }
  }

  static const GpuTimelineTruth& truth() { return truth_; }

  static uint64_t FromRealtime(uint64_t realtime_ns) {
    const GpuTimelineTruth& t = truth_;
    int64_t since = static_cast<int64_t>(realtime_ns - t.origin_realtime_ns);
    int64_t drift = t.model.drift_ppm == 0 ? 0 : std::llround(t.model.drift_ppm * 1e-6 * static_cast<double>(since));
    return realtime_ns + static_cast<uint64_t>(t.offset_ns + drift);
  }

  // The GPU time now (no jitter: the GPU's own schedule follows its clock exactly).
  static uint64_t NowNs() { return FromRealtime(RealtimeNs()); }

  // A stamp as written, with the model's per-stamp noise: a hash of the stamp, so the noise is
  // reproducible and needs no shared state.
  static uint64_t Stamp(uint64_t gpu_ns) {
    uint64_t j = truth_.model.jitter_ns;
    if (j == 0) return gpu_ns;
    uint64_t h = gpu_ns ^ (truth_.seed * 0x9E3779B97F4A7C15ull);
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    h ^= h >> 31;
    return gpu_ns - j + h % (2 * j + 1);
  }

 private:
  static uint64_t ClockNs(clockid_t id) {
    timespec now;
    clock_gettime(id, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
  }
  static inline GpuTimelineTruth truth_;
};

class GpuClock {
 public:
  explicit GpuClock(uint64_t tick_ns) : tick_ns_(tick_ns == 0 ? 1 : tick_ns) {}

  uint64_t NowNs() const { return Quantize(GpuTimeline::NowNs()); }
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
  // stream ends, whichever is later. The stamps carry the model's jitter; the stream's own
  // schedule does not.
  GpuWindow Launch(uint64_t duration_ns) {
    constexpr uint64_t kLaunchLatencyNs = 4000;
    uint64_t tick = clock_->tick_ns();
    uint64_t start = std::max(clock_->NowNs() + kLaunchLatencyNs, busy_until_ns_);
    start = clock_->Quantize(start + tick - 1);
    uint64_t stop = clock_->Quantize(start + std::max(duration_ns, tick) + tick - 1);
    busy_until_ns_ = stop;
    return {GpuTimeline::Stamp(start), GpuTimeline::Stamp(stop)};
  }

 private:
  const GpuClock* clock_;
  uint64_t busy_until_ns_ = 0;
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_GPU_CLOCK_H_
