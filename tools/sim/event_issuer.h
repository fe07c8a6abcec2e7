// Every plugin call the driver makes goes through an EventIssuer, which counts it per event kind
// (starts, handles that came back NULL, stops, states) and times it.
// Thread safety: one EventIssuer per driver thread; its counters are read after the thread joins.
#ifndef KATRACE_TOOLS_SIM_EVENT_ISSUER_H_
#define KATRACE_TOOLS_SIM_EVENT_ISSUER_H_

#include <time.h>

#include <cstdint>

#include "tools/sim/event_mask.h"
#include "tools/sim/profiler_api.h"

namespace katrace::sim {

struct KindCounters {
  uint64_t starts = 0;
  uint64_t null_handles = 0;  // starts whose handle came back NULL: not recorded by the plugin
  uint64_t stops = 0;
  uint64_t null_stops = 0;    // stops passed a NULL handle (only NCCL quirks do this)
  uint64_t states = 0;
  uint64_t null_states = 0;   // states recorded on a NULL handle (only NCCL quirks do this)
};

struct CallCounters {
  KindCounters kinds[kNumEventKinds];
  uint64_t calls = 0;
  uint64_t call_ns = 0;  // summed time inside plugin callbacks, as measured

  void Add(const CallCounters& other);
};

class EventIssuer {
 public:
  explicit EventIssuer(ProfilerApi* api) : api_(api) {}

  // Passes |slot| as eHandle exactly as NCCL passes its handle slots: whatever is in the slot
  // stays there unless the plugin writes it.
  void Start(void* context, void** slot, ncclProfilerEventDescr_v6_t* descr) {
    KindCounters& kind = counters_.kinds[EventKindIndex(descr->type)];
    uint64_t begin = NowNs();
    api_->StartEvent(context, slot, descr);
    Account(begin);
    ++kind.starts;
    if (*slot == nullptr) ++kind.null_handles;
  }

  void Stop(uint64_t type, void* handle) {
    KindCounters& kind = counters_.kinds[EventKindIndex(type)];
    uint64_t begin = NowNs();
    api_->StopEvent(handle);
    Account(begin);
    ++kind.stops;
    if (handle == nullptr) ++kind.null_stops;
  }

  void Record(uint64_t type, void* handle, ncclProfilerEventState_t state,
              ncclProfilerEventStateArgs_v6_t* args) {
    KindCounters& kind = counters_.kinds[EventKindIndex(type)];
    uint64_t begin = NowNs();
    api_->RecordEventState(handle, state, args);
    Account(begin);
    ++kind.states;
    if (handle == nullptr) ++kind.null_states;
  }

  const CallCounters& counters() const { return counters_; }

  static uint64_t NowNs() {
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
  }

 private:
  void Account(uint64_t begin_ns) {
    counters_.call_ns += NowNs() - begin_ns;
    ++counters_.calls;
  }

  ProfilerApi* api_;
  CallCounters counters_;
};

// Cost of one NowNs() pair, so the report can subtract what the measurement itself adds.
uint64_t MeasureTimerOverheadNs();

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_EVENT_ISSUER_H_
