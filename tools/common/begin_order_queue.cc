// BeginOrderQueue (see begin_order_queue.h).
#include "tools/common/begin_order_queue.h"

#include <algorithm>
#include <utility>

#include "tools/common/json_dismantle.h"

namespace katrace::tools {
namespace {

// What a DOM value costs beyond its strings: nlohmann's value, an object member's pair and the
// allocator's overhead, about.
constexpr uint64_t kValueBytes = 64;

// Runs for every event: get_ptr checks the type once and never throws, where get_ref after an
// is_ test checks it twice, on a path that can throw.
uint64_t ApproxBytes(const Json& value) {
  uint64_t bytes = kValueBytes;
  if (const auto* text = value.get_ptr<const std::string*>()) {
    bytes += text->size();
  } else if (const auto* object = value.get_ptr<const Json::object_t*>()) {
    for (const auto& [key, member] : *object) bytes += key.size() + ApproxBytes(member);
  } else if (const auto* array = value.get_ptr<const Json::array_t*>()) {
    for (const Json& element : *array) bytes += ApproxBytes(element);
  }
  return bytes;
}

}  // namespace

bool BeginOrderQueue::Deliver(HeldEvent* held) {
  held_bytes_ -= held->bytes;
  ++delivered_;
  if (!visitor_->OnEvent(held->event)) stopped_ = true;
  Dismantle(&held->event.json, kEventDismantleDepth);  // it is not used again
  return !stopped_;
}

bool BeginOrderQueue::DeliverFront() {
  while (!stopped_ && !entries_.empty() && !entries_.front().open) {
    HeldEvent held = std::move(entries_.front());
    entries_.pop_front();
    Deliver(&held);
  }
  if (stopped_) entries_.clear();
  return !stopped_;
}

bool BeginOrderQueue::Add(HeldEvent held) {
  if (stopped_) return false;
  held.event.index = next_position_++;
  held.bytes = ApproxBytes(held.event.json);
  held_bytes_ += held.bytes;
  if (entries_.empty() && !held.open) return Deliver(&held);
  entries_.push_back(std::move(held));
  if (entries_.size() >= compact_at_) return Compact();
  return true;
}

HeldEvent* BeginOrderQueue::Find(uint64_t position) {
  if (entries_.empty() || position < entries_.front().event.index) return nullptr;
  // Until a compaction delivers events from the middle, the held positions are consecutive and
  // the offset from the front is the place (a slice's end looks up its begin, for every slice);
  // past such a gap, a search finds it.
  const uint64_t offset = position - entries_.front().event.index;
  if (offset < entries_.size() && entries_[offset].event.index == position) {
    return &entries_[offset];
  }
  auto it = std::lower_bound(entries_.begin(), entries_.end(), position,
                             [](const HeldEvent& e, uint64_t p) { return e.event.index < p; });
  return it != entries_.end() && it->event.index == position ? &*it : nullptr;
}

bool BeginOrderQueue::Close(uint64_t position) {
  HeldEvent* held = Find(position);
  if (held == nullptr) return !stopped_;
  held->open = false;
  return DeliverFront();
}

bool BeginOrderQueue::Compact() {
  std::deque<HeldEvent> kept;
  bool open_ahead = false;
  int64_t latest_open_ts = INT64_MIN;
  for (HeldEvent& held : entries_) {
    if (stopped_) break;
    if (held.open) {
      open_ahead = true;
      latest_open_ts = std::max(latest_open_ts, held.ts_ns);
      kept.push_back(std::move(held));
    } else if (open_ahead && held.has_ts && held.ts_ns <= latest_open_ts) {
      kept.push_back(std::move(held));  // may start with an open slice: file order matters
    } else {
      Deliver(&held);
    }
  }
  entries_.swap(kept);
  if (stopped_) entries_.clear();
  compact_at_ = std::max(kMinCompact, 2 * entries_.size());
  return !stopped_;
}

bool BeginOrderQueue::Finish(const std::function<void(const HeldEvent&)>& on_open) {
  while (!stopped_ && !entries_.empty()) {
    HeldEvent held = std::move(entries_.front());
    entries_.pop_front();
    if (held.open) {
      held_bytes_ -= held.bytes;
      on_open(held);
    } else {
      Deliver(&held);
    }
  }
  entries_.clear();
  return !stopped_;
}

}  // namespace katrace::tools
