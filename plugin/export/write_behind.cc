#include "plugin/export/write_behind.h"

#include <utility>

namespace katrace {
namespace exporting {

WriteBehind::WriteBehind(OutputSink* sink, bool threaded) : sink_(sink) {
  if (threaded) thread_ = std::thread([this] { Loop(); });
}

WriteBehind::~WriteBehind() { Finish(); }

void WriteBehind::Hand(std::unique_ptr<JsonOut>* full) {
  if ((*full)->size() == 0) return;
  if (!thread_.joinable()) {
    sink_->Write((*full)->data(), (*full)->size());
    (*full)->clear();
    return;
  }
  std::unique_ptr<JsonOut> empty;
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !spare_.empty() || created_ < kBuffers; });
    if (!spare_.empty()) {
      empty = std::move(spare_.back());
      spare_.pop_back();
    } else {
      ++created_;
    }
    queued_.push_back(std::move(*full));
  }
  cv_.notify_all();
  // A new buffer is allocated outside the lock, at most kBuffers - 1 times per export.
  *full = empty ? std::move(empty) : std::make_unique<JsonOut>();
}

void WriteBehind::Finish() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void WriteBehind::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return !queued_.empty() || closing_; });
    if (queued_.empty()) return;  // closing, and everything is written
    std::unique_ptr<JsonOut> b = std::move(queued_.front());
    queued_.pop_front();
    lock.unlock();
    sink_->Write(b->data(), b->size());
    b->clear();
    lock.lock();
    spare_.push_back(std::move(b));
    cv_.notify_all();
  }
}

}  // namespace exporting
}  // namespace katrace
