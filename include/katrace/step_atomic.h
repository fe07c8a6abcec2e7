// The four atomic operations the KernelStep ring protocol needs, one spelling for nvcc and g++.
// libcu++ `cuda::atomic_ref` (header-only, from CUDA's include/cccl) serves both compilers; where
// that header is not on the include path, g++ falls back to the identical __atomic builtins.
//
// Rules for host-mapped ring memory (libcu++ memory model): only aligned 8-byte loads and stores
// cross PCIe; the one read-modify-write (sequence reservation) touches writer-side memory only
// (device memory on the GPU, host memory for emulated writers).
#ifndef KATRACE_STEP_ATOMIC_H_
#define KATRACE_STEP_ATOMIC_H_

#include <stdint.h>

#include "katrace/step_hd.h"

#if defined(__CUDACC__) || __has_include(<cuda/atomic>)
#include <cuda/atomic>
#define KATRACE_STEP_ATOMIC_LIBCUXX 1
#else
#define KATRACE_STEP_ATOMIC_LIBCUXX 0
#endif

namespace katrace {
namespace step_atomic {

#if KATRACE_STEP_ATOMIC_LIBCUXX
// System scope: the other side of a ring word is another device (the host reader or the GPU).
using SystemRef = cuda::atomic_ref<uint64_t, cuda::thread_scope_system>;
// Device scope: every writer that shares a reservation counter runs on the same device.
using DeviceRef = cuda::atomic_ref<uint64_t, cuda::thread_scope_device>;

KATRACE_HD_INLINE uint64_t LoadAcquire(uint64_t* word) {
  return SystemRef(*word).load(cuda::std::memory_order_acquire);
}
KATRACE_HD_INLINE uint64_t LoadRelaxed(uint64_t* word) {
  return SystemRef(*word).load(cuda::std::memory_order_relaxed);
}
KATRACE_HD_INLINE void StoreRelaxed(uint64_t* word, uint64_t value) {
  SystemRef(*word).store(value, cuda::std::memory_order_relaxed);
}
KATRACE_HD_INLINE void StoreRelease(uint64_t* word, uint64_t value) {
  SystemRef(*word).store(value, cuda::std::memory_order_release);
}
KATRACE_HD_INLINE uint64_t FetchAddRelaxed(uint64_t* counter, uint64_t delta) {
  return DeviceRef(*counter).fetch_add(delta, cuda::std::memory_order_relaxed);
}
#else
KATRACE_HD_INLINE uint64_t LoadAcquire(uint64_t* word) {
  return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}
KATRACE_HD_INLINE uint64_t LoadRelaxed(uint64_t* word) {
  return __atomic_load_n(word, __ATOMIC_RELAXED);
}
KATRACE_HD_INLINE void StoreRelaxed(uint64_t* word, uint64_t value) {
  __atomic_store_n(word, value, __ATOMIC_RELAXED);
}
KATRACE_HD_INLINE void StoreRelease(uint64_t* word, uint64_t value) {
  __atomic_store_n(word, value, __ATOMIC_RELEASE);
}
KATRACE_HD_INLINE uint64_t FetchAddRelaxed(uint64_t* counter, uint64_t delta) {
  return __atomic_fetch_add(counter, delta, __ATOMIC_RELAXED);
}
#endif

}  // namespace step_atomic
}  // namespace katrace

#endif  // KATRACE_STEP_ATOMIC_H_
