// Stands in for the CUDA host-callback thread that runs NCCL's hostStreamPlanCallback: in graph
// mode (and for every plan while a graph exists) Group/Coll/P2p events come from this thread, in
// stream order, once per replay.
// Thread safety: Enqueue/Drain/StopAndJoin from one owning thread; tasks run on this thread.
#ifndef KATRACE_TOOLS_SIM_HOST_CALLBACK_THREAD_H_
#define KATRACE_TOOLS_SIM_HOST_CALLBACK_THREAD_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace katrace::sim {

class HostCallbackThread {
 public:
  explicit HostCallbackThread(int rank) : rank_(rank) {}
  ~HostCallbackThread();
  HostCallbackThread(const HostCallbackThread&) = delete;
  HostCallbackThread& operator=(const HostCallbackThread&) = delete;

  void Start();
  // Blocks while the queue is full, like a stream whose host work has fallen behind.
  void Enqueue(std::function<void()> callback);
  void Drain();  // returns when every enqueued callback has run
  void StopAndJoin();

 private:
  static constexpr size_t kMaxQueued = 64;
  void Run();

  int rank_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> queue_;  // guarded by mutex_
  bool running_callback_ = false;            // guarded by mutex_
  bool stop_requested_ = false;              // guarded by mutex_
  std::thread thread_;
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_HOST_CALLBACK_THREAD_H_
