#ifndef KATRACE_TEST_SUPPORT_NOW_MS_H_
#define KATRACE_TEST_SUPPORT_NOW_MS_H_

#include <stdint.h>
#include <time.h>

namespace katrace_test {

// Milliseconds on CLOCK_MONOTONIC, for tests that pace or time a child process.
inline uint64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

}  // namespace katrace_test

#endif  // KATRACE_TEST_SUPPORT_NOW_MS_H_
