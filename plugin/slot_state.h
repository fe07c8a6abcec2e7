// The life of a pool slot in one 64-bit atomic word, so that "is this still the event the handle
// names?" and "take, give back or stop it" are a single compare-and-swap with no lock:
//
//   [63:40] generation   bumped each time the slot is freed; handles carry it
//   [39]    stopped      stopEvent was called (a second stop is ignored)
//   [38]    live         the slot holds an event
//   [37:24] expected     Coll/P2p: KernelCh children announced by nChannels, not yet started
//   [23:0]  holds        1 for the event itself until stop, +1 per live child, +expected
//
// The event completes when holds reach 0; no hold can be taken after that, so a slot is never
// reused while anything still refers to it.
#ifndef KATRACE_PLUGIN_SLOT_STATE_H_
#define KATRACE_PLUGIN_SLOT_STATE_H_

#include <stdint.h>

#include <atomic>

#include "plugin/handle_codec.h"

namespace katrace {

struct SlotState {
  static constexpr uint64_t kStopped = 1ull << 39;
  static constexpr uint64_t kLive = 1ull << 38;
  static constexpr int kExpectedShift = 24;
  static constexpr uint64_t kExpectedOne = 1ull << kExpectedShift;
  static constexpr uint64_t kExpectedMask = 0x3fffull << kExpectedShift;
  static constexpr uint64_t kHoldsMask = (1ull << 24) - 1;

  static uint32_t Generation(uint64_t w) { return static_cast<uint32_t>(w >> 40) & kGenerationMask; }
  static uint64_t Holds(uint64_t w) { return w & kHoldsMask; }
  static uint64_t Expected(uint64_t w) { return (w & kExpectedMask) >> kExpectedShift; }

  static uint64_t Free(uint32_t generation) {
    return static_cast<uint64_t>(generation & kGenerationMask) << 40;
  }
  static uint64_t Live(uint32_t generation, uint32_t expected) {
    if (expected > 0x3fff) expected = 0x3fff;
    return Free(generation) | kLive | (static_cast<uint64_t>(expected) << kExpectedShift) | (1u + expected);
  }
  static bool IsLiveUnstopped(uint64_t w, uint32_t generation) {
    return Generation(w) == generation && (w & kLive) && !(w & kStopped) && Holds(w) > 0;
  }

  // A child takes a hold on its parent. A KernelCh child takes over one of the announced holds
  // instead of adding one. Fails if the slot no longer holds that generation or has completed.
  // |*took_expected| says whether it was an announced one.
  static bool TryHold(std::atomic<uint64_t>* state, uint32_t generation, bool kernel_ch,
                      bool* took_expected = nullptr) {
    uint64_t w = state->load(std::memory_order_acquire);
    for (;;) {
      if (Generation(w) != generation || !(w & kLive) || Holds(w) == 0 || Holds(w) == kHoldsMask) return false;
      const bool expected = kernel_ch && Expected(w) > 0;
      uint64_t next = expected ? w - kExpectedOne : w + 1;
      if (state->compare_exchange_weak(w, next, std::memory_order_acq_rel, std::memory_order_acquire)) {
        if (took_expected != nullptr) *took_expected = expected;
        return true;
      }
    }
  }

  // An announced KernelCh child that will never hold the slot (dropped): its announced hold is
  // given back. False when none was left; |*last| says whether it was the last hold (the caller
  // must then complete the event).
  static bool ForgoExpected(std::atomic<uint64_t>* state, uint32_t generation, bool* last) {
    uint64_t w = state->load(std::memory_order_acquire);
    for (;;) {
      if (Generation(w) != generation || !(w & kLive) || Expected(w) == 0 || Holds(w) == 0) return false;
      if (state->compare_exchange_weak(w, w - kExpectedOne - 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        *last = Holds(w) == 1;
        return true;
      }
    }
  }

  // Gives back one hold; true when it was the last one and the caller must complete the event.
  static bool ReleaseHold(std::atomic<uint64_t>* state, uint32_t generation) {
    uint64_t w = state->load(std::memory_order_acquire);
    for (;;) {
      if (Generation(w) != generation || !(w & kLive) || Holds(w) == 0) return false;
      if (state->compare_exchange_weak(w, w - 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        return Holds(w) == 1;
      }
    }
  }

  // stopEvent in one step: sets the stopped bit and gives back the event's own hold. False for a
  // second stop or a stale handle; |*last| says whether it was the last hold (the caller must
  // then complete the event).
  static bool StopAndRelease(std::atomic<uint64_t>* state, uint32_t generation, bool* last) {
    uint64_t w = state->load(std::memory_order_acquire);
    for (;;) {
      if (!IsLiveUnstopped(w, generation)) return false;
      if (state->compare_exchange_weak(w, (w | kStopped) - 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        *last = Holds(w) == 1;
        return true;
      }
    }
  }

  // Finalize: takes a still-live slot away from every holder (its holds drop to zero at once).
  static bool TryClaimLive(std::atomic<uint64_t>* state) {
    uint64_t w = state->load(std::memory_order_acquire);
    for (;;) {
      if (!(w & kLive) || Holds(w) == 0) return false;
      if (state->compare_exchange_weak(w, w & ~(kHoldsMask | kExpectedMask), std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
        return true;
      }
    }
  }
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_SLOT_STATE_H_
