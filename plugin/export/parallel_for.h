// Runs fn(i, worker) for i in [0, n) on |threads| threads (the caller's included), items handed
// out in index order; |poll| runs on the caller's thread between its items (progress lines).
#ifndef KATRACE_PLUGIN_EXPORT_PARALLEL_FOR_H_
#define KATRACE_PLUGIN_EXPORT_PARALLEL_FOR_H_

#include <stddef.h>

#include <atomic>
#include <thread>
#include <vector>

namespace katrace {
namespace exporting {

template <typename Fn, typename Poll>
void ParallelFor(size_t n, int threads, Fn&& fn, Poll&& poll) {
  std::atomic<size_t> next{0};
  auto work = [&](int worker) {
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) {
      fn(i, worker);
      if (worker == 0) poll();
    }
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < threads && static_cast<size_t>(w) < n; ++w) pool.emplace_back(work, w);
  work(0);
  for (std::thread& t : pool) t.join();
}

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_PARALLEL_FOR_H_
