// Emulated GPU step writers on CPU threads; see emulated_step_writer.h.
#include "proxy_drain/emulated_step_writer.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <utility>

#include "katrace/step_stamper.h"
#include "proxy_drain/realtime_step_clock.h"

namespace katrace {
namespace {

void BusyUntil(uint64_t deadline_ns) {
  while (RealtimeStepClock::NowNs() < deadline_ns) std::this_thread::yield();
}

// Once the role is more than kEmulatedMaxAheadNs ahead of schedule, sleeps until |deadline_ns|.
void Pace(uint64_t deadline_ns) {
  const uint64_t now = RealtimeStepClock::NowNs();
  if (deadline_ns > now + kEmulatedMaxAheadNs) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(deadline_ns - now));
  }
}

}  // namespace

// Generation barrier for the roles of one channel. Blocks rather than spins: emulated writers
// often outnumber cores, and a spinning waiter would starve the role it waits for.
class EmulatedStepWriter::SliceBarrier {
 public:
  explicit SliceBarrier(int parties) : parties_(parties) {}
  void ArriveAndWait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t generation = generation_;
    if (++arrived_ == parties_) {
      arrived_ = 0;
      ++generation_;
      lock.unlock();
      all_arrived_.notify_all();
      return;
    }
    all_arrived_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  const int parties_;
  std::mutex mutex_;
  std::condition_variable all_arrived_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
};

EmulatedStepWriter::EmulatedStepWriter(std::vector<EmulatedChannel> channels,
                                       const EmulatedStepWriterOptions& options)
    : channels_(std::move(channels)), options_(options) {
  for (const EmulatedChannel& channel : channels_) {
    barriers_.push_back(std::make_unique<SliceBarrier>(int(channel.roles.size())));
  }
}

EmulatedStepWriter::~EmulatedStepWriter() { Join(); }

void EmulatedStepWriter::Start() {
  for (size_t c = 0; c < channels_.size(); ++c) {
    for (size_t r = 0; r < channels_[c].roles.size(); ++r) {
      num_running_.fetch_add(1, std::memory_order_relaxed);
      threads_.emplace_back(&EmulatedStepWriter::RunRole, this, c, r);
    }
  }
}

void EmulatedStepWriter::Join() {
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

void EmulatedStepWriter::RunRole(size_t channel_index, size_t role_index) {
  const EmulatedChannel& channel = channels_[channel_index];
  const EmulatedRole& role = channel.roles[role_index];
  SliceBarrier& barrier = *barriers_[channel_index];
  uint64_t starts = 0;
  uint64_t stops = 0;
  uint64_t slice = 0;
  const uint64_t begin_ns = RealtimeStepClock::NowNs();
  for (const EmulatedWork& work : channel.works) {
    StepStamper<true, RealtimeStepClock> stamper(channel.ring, work.work_tag, role.peer,
                                                 role.is_send, options_.sample_every);
    for (uint32_t step = 0; step < work.num_steps; ++step, ++slice) {
      const bool kept = StepStamper<true, RealtimeStepClock>::Sampled(step, options_.sample_every);
      stamper.WaitStart(step);
      if (options_.wait_ns != 0) BusyUntil(RealtimeStepClock::NowNs() + options_.wait_ns);
      stamper.TransferStart(step, work.size_bytes);
      if (options_.transfer_ns != 0) BusyUntil(RealtimeStepClock::NowNs() + options_.transfer_ns);
      if (kept) ++starts;
      const bool drop_stop =
          kept && options_.drop_stop_every != 0 && starts % options_.drop_stop_every == 0;
      if (!drop_stop) {
        stamper.SliceEnd();
        if (kept) ++stops;
      }
      if (options_.lockstep) barrier.ArriveAndWait();
      if (options_.slice_period_ns != 0) Pace(begin_ns + (slice + 1) * options_.slice_period_ns);
    }
  }
  num_starts_.fetch_add(starts, std::memory_order_relaxed);
  num_stops_.fetch_add(stops, std::memory_order_relaxed);
  num_running_.fetch_sub(1, std::memory_order_release);
}

}  // namespace katrace
