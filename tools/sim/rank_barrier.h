// A reusable barrier for the ranks' application threads (C++17 has no std::barrier): all ranks
// initialise before timing starts, and the --nccl-quirks mask toggle happens between operations.
// Thread safety: Wait from exactly |count| threads per round.
#ifndef KATRACE_TOOLS_SIM_RANK_BARRIER_H_
#define KATRACE_TOOLS_SIM_RANK_BARRIER_H_

#include <condition_variable>
#include <mutex>

namespace katrace::sim {

class RankBarrier {
 public:
  explicit RankBarrier(int count) : count_(count) {}

  void Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    unsigned long round = round_;
    if (++arrived_ == count_) {
      arrived_ = 0;
      ++round_;
      all_arrived_.notify_all();
      return;
    }
    all_arrived_.wait(lock, [&] { return round_ != round; });
  }

 private:
  const int count_;
  std::mutex mutex_;
  std::condition_variable all_arrived_;
  int arrived_ = 0;          // guarded by mutex_
  unsigned long round_ = 0;  // guarded by mutex_
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_RANK_BARRIER_H_
