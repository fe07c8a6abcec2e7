// A rank's emulated KernelStep writer thread; see rank_step_writer.h.
#include "tools/sim/rank_step_writer.h"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "katrace/step_stamper.h"
#include "tools/sim/windowed_step_clock.h"

namespace katrace::sim {
namespace {

using Stamper = StepStamper<true, WindowedStepClock>;

// A sleep overshoots by 15-60 µs on a loaded host, so the writer sleeps until this long before a
// deadline. Within a kernel it then runs on, a little ahead of plan (the clock's floor keeps its
// stamps inside the window), so kernels shorter than this run their slices in one burst; only a
// kernel's beginning is waited for exactly, yielding the CPU in between.
constexpr uint64_t kSleepOvershootNs = 60000;
// Reaching (or waking for) a kernel later than this after it could begin counts as the host
// running the writer late: the kernel begins then, and its windows move with it.
constexpr uint64_t kLateToleranceNs = 10000;

enum Phase { kWaitStart, kTransferStart, kSliceEnd, kNumPhases };

void SleepUntilNear(uint64_t deadline_ns) {
  uint64_t now = WindowedStepClock::GpuNs();
  if (deadline_ns <= now + kSleepOvershootNs) return;
  uint64_t wait_ns = deadline_ns - kSleepOvershootNs - now;
  timespec pause{static_cast<time_t>(wait_ns / 1000000000ull),
                 static_cast<long>(wait_ns % 1000000000ull)};
  nanosleep(&pause, nullptr);
}

// Sleeps, then yields, then spins: a yield may cost a whole time slice on a busy host, which is
// worth it only while the deadline is still far.
void WaitUntil(uint64_t deadline_ns) {
  constexpr uint64_t kSpinNs = 5000;
  SleepUntilNear(deadline_ns);
  for (uint64_t now = WindowedStepClock::GpuNs(); now < deadline_ns;
       now = WindowedStepClock::GpuNs()) {
    if (deadline_ns - now > kSpinNs) sched_yield();
  }
}

struct RoleState {
  const StepRole* role;
  size_t work_index;
  Stamper stamper;
  uint64_t floor_ns;  // the clock's floor: KernelCh start, then the latest stamp
  uint64_t slot_ns;   // the planned window split evenly over the role's slices
};

// Where a slice's phase falls when the writer keeps pace: the first quarter of a slot waits for
// credit or data, the rest transfers.
uint64_t PlannedNs(const RoleState& state, const GpuWindow& window, uint32_t step, int phase) {
  uint64_t slot_start = window.start_ns + state.slot_ns * step;
  switch (phase) {
    case kWaitStart:
      return slot_start;
    case kTransferStart:
      return slot_start + state.slot_ns / 4;
    default:
      return slot_start + state.slot_ns;
  }
}

}  // namespace

RankStepWriter::RankStepWriter(std::vector<StepRingView> rings,
                               const RankStepWriterOptions& options)
    : rings_(std::move(rings)), options_(options) {}

RankStepWriter::~RankStepWriter() { StopAndJoin(); }

void RankStepWriter::Start() { thread_ = std::thread(&RankStepWriter::Run, this); }

void RankStepWriter::Enqueue(std::vector<StepWork> kernel) {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(std::move(kernel));
  posted_.notify_one();
}

bool RankStepWriter::TakeUpdates(std::vector<StepWorkUpdate>* out) {
  if (!has_updates_.load(std::memory_order_relaxed)) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  out->insert(out->end(), updates_.begin(), updates_.end());
  updates_.clear();
  has_updates_.store(false, std::memory_order_relaxed);
  return !out->empty();
}

void RankStepWriter::StopAndJoin() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = true;
    posted_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

void RankStepWriter::Run() {
  char name[16];
  std::snprintf(name, sizeof(name), "sim-steps-%d", options_.rank);
  pthread_setname_np(pthread_self(), name);
  // As the proxy thread: the default 50 µs timer slack would blur the windows we sleep towards.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  while (true) {
    std::vector<StepWork> kernel;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      posted_.wait(lock, [&] { return !queue_.empty() || stop_requested_; });
      if (queue_.empty()) return;
      kernel = std::move(queue_.front());
      queue_.pop_front();
    }
    RunKernel(kernel);
  }
}

void RankStepWriter::RunKernel(const std::vector<StepWork>& kernel) {
  if (kernel.empty()) return;
  // The kernel begins at its planned start, or when the previous kernel on the stream ended if
  // that is later; or later still when the host ran the writer late.
  uint64_t planned_begin = UINT64_MAX;
  for (const StepWork& work : kernel) planned_begin = std::min(planned_begin, work.gpu.start_ns);
  uint64_t begin = std::max(planned_begin, device_free_ns_);
  if (!options_.bench) WaitUntil(begin);
  const uint64_t now = WindowedStepClock::GpuNs();
  if (now > begin + kLateToleranceNs) {
    ++counters_.late_kernels;
    counters_.late_ns += now - begin;
    begin = now;
  }
  const uint64_t shift = begin - planned_begin;
  std::vector<GpuWindow> windows;
  windows.reserve(kernel.size());
  for (const StepWork& work : kernel) {
    windows.push_back(
        {work.gpu.start_ns + shift, std::max(work.gpu.stop_ns, work.gpu.start_ns) + shift});
  }
  Publish(kernel, windows, /*finished=*/false);

  const uint32_t sample_every = std::max<uint32_t>(options_.sample_every, 1);
  std::vector<RoleState> roles;
  uint32_t max_steps = 0;
  for (size_t w = 0; w < kernel.size(); ++w) {
    const StepWork& work = kernel[w];
    if (work.roles.empty()) continue;
    ++counters_.works;
    // A channel without a ring (its memory could not be mapped: KernelStepRank said so) runs
    // its window unstamped.
    if (work.channel < 0 || static_cast<size_t>(work.channel) >= rings_.size()) continue;
    for (const StepRole& role : work.roles) {
      if (role.num_steps == 0) continue;
      roles.push_back(RoleState{
          &role, w,
          Stamper(rings_[static_cast<size_t>(work.channel)],
                  static_cast<uint32_t>(work.work_counter), role.peer, role.is_send, sample_every),
          windows[w].start_ns, (windows[w].stop_ns - windows[w].start_ns) / role.num_steps});
      max_steps = std::max(max_steps, role.num_steps);
      // In 64 bits: num_steps + sample_every - 1 may pass 2^32.
      const uint64_t kept = (uint64_t{role.num_steps} + sample_every - 1) / sample_every;
      counters_.steps += role.num_steps;
      counters_.starts_written += kept;
      counters_.stops_written += kept;
      counters_.sampled_out += (kept - 1) * (sample_every - 1);
      counters_.sampled_tail += role.num_steps - 1 - (kept - 1) * sample_every;
    }
  }
  // Slice by slice, every role in step, as the threads of a simple-prims block meet at a barrier
  // after each slice.
  for (uint32_t step = 0; step < max_steps; ++step) {
    for (int phase = kWaitStart; phase < kNumPhases; ++phase) {
      if (!options_.bench) {
        uint64_t planned = UINT64_MAX;
        for (const RoleState& state : roles) {
          if (step >= state.role->num_steps) continue;
          planned = std::min(planned, PlannedNs(state, windows[state.work_index], step, phase));
        }
        SleepUntilNear(planned);
      }
      for (RoleState& state : roles) {
        if (step >= state.role->num_steps) continue;
        // Channels start a tick or two apart: each waits for its own start, or all of its
        // stamps would sit on it.
        if (step == 0 && phase == kWaitStart && !options_.bench) {
          WaitUntil(windows[state.work_index].start_ns);
        }
        WindowedStepClock::Scope clock(&state.floor_ns);
        switch (phase) {
          case kWaitStart:
            state.stamper.WaitStart(step);
            break;
          case kTransferStart:
            state.stamper.TransferStart(step, step + 1 == state.role->num_steps
                                                  ? state.role->last_step_bytes
                                                  : state.role->step_bytes);
            break;
          default:
            state.stamper.SliceEnd();
            break;
        }
      }
    }
  }
  // A channel whose slices ran past its window keeps running until its last one ended. Works that
  // share a channel in one kernel (AlltoAll peers) share its window, as in the planned stream,
  // so their KernelChs stay equal and nest.
  std::vector<uint64_t> channel_stop(rings_.size(), 0);
  for (const RoleState& state : roles) {
    uint64_t& stop = channel_stop[static_cast<size_t>(kernel[state.work_index].channel)];
    stop = std::max(stop, state.floor_ns);
  }
  for (size_t w = 0; w < kernel.size(); ++w) {
    const size_t channel = static_cast<size_t>(kernel[w].channel);
    const uint64_t stop = channel < channel_stop.size() ? channel_stop[channel] : 0;
    if (stop > windows[w].stop_ns) {
      windows[w].stop_ns = stop;
      ++counters_.stretched_works;
    }
    device_free_ns_ = std::max(device_free_ns_, windows[w].stop_ns);
  }
  Publish(kernel, windows, /*finished=*/true);
}

void RankStepWriter::Publish(const std::vector<StepWork>& kernel,
                             const std::vector<GpuWindow>& windows, bool finished) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t w = 0; w < kernel.size(); ++w) {
    StepWorkUpdate update;
    update.channel = kernel[w].channel;
    update.work_counter = kernel[w].work_counter;
    update.gpu = windows[w];
    update.finished = finished;
    for (const StepRole& role : kernel[w].roles) {
      (role.is_send ? update.has_send : update.has_recv) = true;
    }
    updates_.push_back(update);
  }
  has_updates_.store(true, std::memory_order_relaxed);
}

}  // namespace katrace::sim
