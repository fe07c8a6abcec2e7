#include "tools/sim/host_callback_thread.h"

#include <pthread.h>

#include <cstdio>

#include "tools/sim/nccl_logger.h"

namespace katrace::sim {

HostCallbackThread::~HostCallbackThread() {
  if (thread_.joinable()) StopAndJoin();
}

void HostCallbackThread::Start() { thread_ = std::thread(&HostCallbackThread::Run, this); }

void HostCallbackThread::Enqueue(std::function<void()> callback) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return queue_.size() < kMaxQueued; });
  queue_.push_back(std::move(callback));
  changed_.notify_all();
}

void HostCallbackThread::Drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return queue_.empty() && !running_callback_; });
}

void HostCallbackThread::StopAndJoin() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = true;
    changed_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void HostCallbackThread::Run() {
  char name[16];
  std::snprintf(name, sizeof(name), "sim-hostcb-%d", rank_);
  pthread_setname_np(pthread_self(), name);
  SetLogThreadRank(rank_);
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return !queue_.empty() || stop_requested_; });
    if (queue_.empty()) return;
    std::function<void()> callback = std::move(queue_.front());
    queue_.pop_front();
    running_callback_ = true;
    changed_.notify_all();
    lock.unlock();
    callback();
    lock.lock();
    running_callback_ = false;
    changed_.notify_all();
  }
}

}  // namespace katrace::sim
