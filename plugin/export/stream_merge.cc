#include "plugin/export/stream_merge.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace katrace {
namespace exporting {
namespace {

using spool::RecordType;

uint8_t TypeRank(RecordType t) {
  switch (t) {
    case RecordType::kComm:
    case RecordType::kClock: return 1;
    case RecordType::kStart: return 2;
    case RecordType::kState: return 3;
    case RecordType::kStop: return 4;
    case RecordType::kCommEnd: return 5;
    default: return 6;
  }
}

// Blocks decoded ahead of the merge per worker: enough to keep them busy, few enough to bound
// memory (each block is at most 4 MiB decoded).
constexpr size_t kWindowPerWorker = 4;

}  // namespace

StreamMerge::StreamMerge(const SpoolReader& file, const SpoolIndex& index, int workers, ExportProgress* progress)
    : progress_(progress) {
  // The schedule: blocks in the order the merge reaches them.
  std::vector<size_t> order(index.blocks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const IndexedBlock& x = index.blocks[a];
    const IndexedBlock& y = index.blocks[b];
    if (x.first_key != y.first_key) return x.first_key < y.first_key;
    return x.ref.stream < y.ref.stream;
  });
  std::vector<size_t> position(order.size());
  for (size_t p = 0; p < order.size(); ++p) {
    position[order[p]] = p;
    schedule_refs_.push_back(index.blocks[order[p]].ref);
    schedule_keys_.push_back(index.blocks[order[p]].first_key);
  }
  std::map<uint32_t, Stream*> by_id;
  for (size_t b = 0; b < index.blocks.size(); ++b) {
    uint32_t id = index.blocks[b].ref.stream;
    Stream*& s = by_id[id];
    if (s == nullptr) {
      streams_.push_back(std::make_unique<Stream>());
      s = streams_.back().get();
      s->id = id;
    }
    s->blocks.push_back(position[b]);
  }
  pipeline_ = std::make_unique<BlockPipeline>(file, schedule_refs_, workers,
                                              kWindowPerWorker * static_cast<size_t>(std::max(1, workers)));
  for (auto& s : streams_) {
    s->needs_load = true;
    s->head.key = schedule_keys_[s->blocks[0]];
    s->rank = 0;
    Push(s.get());
  }
}

StreamMerge::~StreamMerge() = default;

void StreamMerge::Push(Stream* s) {
  heap_.push_back(s);
  std::push_heap(heap_.begin(), heap_.end(), [this](const Stream* a, const Stream* b) { return Less(b, a); });
}

StreamMerge::Stream* StreamMerge::Pop() {
  std::pop_heap(heap_.begin(), heap_.end(), [this](const Stream* a, const Stream* b) { return Less(b, a); });
  Stream* s = heap_.back();
  heap_.pop_back();
  return s;
}

void StreamMerge::ReplaceTop(Stream* s) {
  const size_t n = heap_.size();
  size_t i = 0;
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && Less(heap_[child + 1], heap_[child])) ++child;
    if (!Less(heap_[child], s)) break;
    heap_[i] = heap_[child];
    i = child;
  }
  heap_[i] = s;
}

bool StreamMerge::Advance(Stream* s) {
  for (;;) {
    if (s->block != nullptr) {
      spool::RecordHeader h;
      const uint8_t* body;
      size_t n;
      if (s->cursor.Next(&h, &body, &n)) {
        uint64_t ticks = 0;
        if (RecordTicks(h, body, n, &ticks) && ticks > s->carry) s->carry = ticks;
        s->head = MergedRecord{h, body, n, s->carry, s->id, s->os_tid};
        s->rank = TypeRank(h.type);
        s->needs_load = false;
        return true;
      }
      // The block is used up; the record handed out last may still point into it.
      if (retired_ != nullptr) pipeline_->Recycle(std::move(retired_));
      retired_ = std::move(s->block);
    }
    if (s->next_block >= s->blocks.size()) return false;
    if (!s->needs_load) {
      // Queue the stream under its next block's key; it is loaded when it comes up.
      s->needs_load = true;
      s->head.key = std::max(s->carry, schedule_keys_[s->blocks[s->next_block]]);
      s->rank = 0;
      return true;
    }
    size_t pos = s->blocks[s->next_block++];
    s->block = pipeline_->Take(pos);
    progress_->Add(1, schedule_refs_[pos].end() - schedule_refs_[pos].offset);
    if (s->block == nullptr || !s->block->ok) {
      ++failed_blocks_;
      s->block.reset();
      continue;
    }
    s->os_tid = schedule_refs_[pos].os_tid;
    s->cursor = RecordCursor(s->block->raw.data(), s->block->raw.size());
    s->needs_load = false;
  }
}

bool StreamMerge::Next(MergedRecord* out) {
  for (;;) {
    // Keep the current stream while it is still the smallest: no heap work in the common run of
    // records from one stream.
    if (current_ == nullptr) {
      if (heap_.empty()) return false;
      current_ = Pop();
    } else if (!heap_.empty() && Less(heap_.front(), current_)) {
      // The smallest waiting stream takes over and the current one takes its place at the top:
      // one sift instead of a push and a pop (the streams' order is total, so the same stream
      // comes up either way).
      Stream* next = heap_.front();
      ReplaceTop(current_);
      current_ = next;
    }
    Stream* s = current_;
    if (s->needs_load) {
      if (!Advance(s)) current_ = nullptr;
      continue;
    }
    *out = s->head;
    if (!Advance(s)) current_ = nullptr;
    return true;
  }
}

}  // namespace exporting
}  // namespace katrace
