// Hands assembled events (with their placed GPU times) from the thread that merges and assembles
// them to the thread that lays them out and encodes them, in batches, so the two halves of the
// export run on two cores.
// Bounded: at most kMaxBatches batches of kBatchEvents events exist at once (a full pipe blocks
// the producer), and their storage is recycled, so memory stays a few MiB whatever the length.
// Counter samples travel in the same batch with the position they had among the events, so the
// consumer sees exactly the sequence a single thread would.
#ifndef KATRACE_PLUGIN_EXPORT_EVENT_PIPE_H_
#define KATRACE_PLUGIN_EXPORT_EVENT_PIPE_H_

#include <stddef.h>
#include <stdint.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "katrace/spool_format.h"
#include "plugin/export/assembled_event.h"
#include "plugin/export/gpu_placement.h"

namespace katrace {
namespace exporting {

// A Counters record met during the merge, placed before events[before].
struct CounterSample {
  size_t before;
  uint64_t host_ns;
  spool::CountersBody counters;
};

struct EventBatch {
  std::vector<AssembledEvent> events;
  // spans[i]: events[i]'s GPU times, placed by the producer (the consumer's half is the longer).
  std::vector<GpuSpan> spans;
  std::vector<CounterSample> samples;
  uint64_t watermark_ns = 0;  // no later batch holds an event that starts before this
  void clear() {
    events.clear();
    spans.clear();
    samples.clear();
    watermark_ns = 0;
  }
};

class EventPipe {
 public:
  // Small batches, so what is in flight (~1 MiB) stays in cache between the two cores.
  static constexpr size_t kBatchEvents = 512;
  static constexpr size_t kMaxBatches = 8;

  // Producer: an empty batch to fill (blocks while every batch is in use).
  std::unique_ptr<EventBatch> Empty() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !free_.empty() || created_ < kMaxBatches || aborted_; });
    if (!free_.empty()) {
      std::unique_ptr<EventBatch> b = std::move(free_.back());
      free_.pop_back();
      return b;
    }
    ++created_;
    auto b = std::make_unique<EventBatch>();
    b->events.reserve(kBatchEvents);
    b->spans.reserve(kBatchEvents);
    return b;
  }
  // Producer: a filled batch, in order.
  void Send(std::unique_ptr<EventBatch> b) {
    std::lock_guard<std::mutex> lock(mu_);
    if (aborted_) {  // nobody reads any more: keep the storage for the next Empty
      b->clear();
      free_.push_back(std::move(b));
      cv_.notify_all();
      return;
    }
    full_.push_back(std::move(b));
    cv_.notify_all();
  }
  // Producer: nothing more follows.
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }
  // Consumer gave up (an exception): the producer no longer blocks, its batches are dropped.
  void Abort() {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_ = true;
    full_.clear();
    cv_.notify_all();
  }

  // Consumer: the next batch, or null once closed and drained.
  std::unique_ptr<EventBatch> Receive() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !full_.empty() || closed_; });
    if (full_.empty()) return nullptr;
    std::unique_ptr<EventBatch> b = std::move(full_.front());
    full_.pop_front();
    return b;
  }
  // Consumer: a batch it is done with.
  void Recycle(std::unique_ptr<EventBatch> b) {
    b->clear();
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(b));
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<EventBatch>> full_;
  std::vector<std::unique_ptr<EventBatch>> free_;
  size_t created_ = 0;
  bool closed_ = false;
  bool aborted_ = false;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_EVENT_PIPE_H_
