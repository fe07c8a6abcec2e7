#include "plugin/export/block_pipeline.h"

namespace katrace {
namespace exporting {

BlockPipeline::BlockPipeline(const SpoolReader& file, std::vector<BlockRef> schedule, int workers, size_t window)
    : file_(file), schedule_(std::move(schedule)), window_(window < 1 ? 1 : window) {
  state_.assign(schedule_.size(), SlotState::kPending);
  done_.resize(schedule_.size());
  for (int w = 0; w < workers; ++w) threads_.emplace_back([this] { Work(); });
}

BlockPipeline::~BlockPipeline() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

std::unique_ptr<DecodedBlock> BlockPipeline::NewBlock() {
  if (free_.empty()) return std::make_unique<DecodedBlock>();
  std::unique_ptr<DecodedBlock> b = std::move(free_.back());
  free_.pop_back();
  return b;
}

void BlockPipeline::Decode(size_t i, DecodedBlock* out) {
  out->reason.clear();
  // The first pass checked every CRC; a block that changed since then fails to decode here.
  out->ok = file_.LoadBlock(schedule_[i], false, &out->scratch, &out->raw, &out->reason);
}

void BlockPipeline::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] {
      while (next_ < state_.size() && state_[next_] != SlotState::kPending) ++next_;
      return stop_ || (next_ < state_.size() && next_ < low_taken_ + window_);
    });
    if (stop_) return;
    size_t i = next_++;
    state_[i] = SlotState::kRunning;
    std::unique_ptr<DecodedBlock> b = NewBlock();
    lock.unlock();
    Decode(i, b.get());
    lock.lock();
    done_[i] = std::move(b);
    state_[i] = SlotState::kReady;
    ready_cv_.notify_all();
  }
}

std::unique_ptr<DecodedBlock> BlockPipeline::Take(size_t i) {
  std::unique_lock<std::mutex> lock(mu_);
  if (i >= state_.size()) return nullptr;
  if (state_[i] == SlotState::kPending) {
    state_[i] = SlotState::kRunning;
    std::unique_ptr<DecodedBlock> b = NewBlock();
    lock.unlock();
    Decode(i, b.get());
    lock.lock();
    done_[i] = std::move(b);
    state_[i] = SlotState::kReady;
  }
  ready_cv_.wait(lock, [&] { return state_[i] == SlotState::kReady; });
  state_[i] = SlotState::kTaken;
  std::unique_ptr<DecodedBlock> b = std::move(done_[i]);
  while (low_taken_ < state_.size() && state_[low_taken_] == SlotState::kTaken) ++low_taken_;
  lock.unlock();
  work_cv_.notify_all();
  return b;
}

void BlockPipeline::Recycle(std::unique_ptr<DecodedBlock> block) {
  if (block == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.size() < window_ + 4) free_.push_back(std::move(block));
}

}  // namespace exporting
}  // namespace katrace
