#include "plugin/asymmetric_fence.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mutex>

namespace katrace {
namespace {

long Membarrier(int command) { return syscall(__NR_membarrier, command, 0, 0); }

// Should the kernel refuse a barrier it granted (a forked child that did not inherit the
// registration): taking write permission from a page this process touched makes the kernel
// interrupt every processor that may cache its mapping, a full barrier on each.
void BarrierByPageProtection() {
  static std::mutex mu;
  static void* page = MAP_FAILED;
  std::lock_guard<std::mutex> lock(mu);
  if (page == MAP_FAILED) page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return;
  mprotect(page, 4096, PROT_READ | PROT_WRITE);
  *static_cast<volatile char*>(page) = 1;
  mprotect(page, 4096, PROT_READ);
}

}  // namespace

bool AsymmetricFenceAvailable() {
  static const bool available = [] {
    const long supported = Membarrier(MEMBARRIER_CMD_QUERY);
    return supported > 0 && (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
           Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
  }();
  return available;
}

void HeavyFence() {
  long r;
  do {
    r = Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
  } while (r != 0 && errno == EINTR);
  if (r != 0) BarrierByPageProtection();
}

}  // namespace katrace
