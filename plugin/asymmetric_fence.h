// A memory barrier on every running thread of the process, paid for by the one thread that asks:
// Linux's membarrier (private expedited). It lets a fast path that one thread runs almost always
// order a store before a later load with only a compiler fence (LightFence), while the rare other
// side pays a system call (HeavyFence): the asymmetric Dekker pattern. Where the kernel or a
// sandbox refuses it, AsymmetricFenceAvailable() is false and callers keep their symmetric path.
#ifndef KATRACE_PLUGIN_ASYMMETRIC_FENCE_H_
#define KATRACE_PLUGIN_ASYMMETRIC_FENCE_H_

#include <atomic>

namespace katrace {

// Registers the process for expedited barriers, once; false where they cannot be had.
bool AsymmetricFenceAvailable();

// The cheap side: the compiler keeps the order; HeavyFence makes the processor's order right.
inline void LightFence() { std::atomic_signal_fence(std::memory_order_seq_cst); }

// The expensive side: when it returns, every other thread of the process has passed a full
// memory barrier since the call began (or was not running, which implies one). Only after
// AsymmetricFenceAvailable() returned true.
void HeavyFence();

}  // namespace katrace

#endif  // KATRACE_PLUGIN_ASYMMETRIC_FENCE_H_
