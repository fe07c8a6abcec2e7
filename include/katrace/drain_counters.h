// The KernelStep drain's loss and routing counters, defined once: the struct, and a table of its
// fields (name, meaning, member, and where a drain report carries it) that every writer and
// reader iterates instead of listing the fields. The drain counts into it, the drain report
// (kernel_step.h) encodes and decodes through it, the spool's Counters record and the trace
// footer's `drain` object use its names and order, and katrace-sim, katrace-check and the tests
// read them back through it. A new counter is a new member and a new row here.
#ifndef KATRACE_DRAIN_COUNTERS_H_
#define KATRACE_DRAIN_COUNTERS_H_

#include <stdint.h>

#include "nccl_profiler/kernel_step.h"

namespace katrace {

// What each counts: the descriptions in kDrainCounterFields.
struct DrainCounters {
  uint64_t seen = 0;
  uint64_t lost_overrun = 0;
  uint64_t abandoned = 0;
  uint64_t sampled_out = 0;
  uint64_t late = 0;

  DrainCounters& operator+=(const DrainCounters& other);
  DrainCounters operator-(const DrainCounters& other) const;
  bool Any() const;
};
// Five counters and nothing else, in table order: the spool stores them as they are.
static_assert(sizeof(DrainCounters) == 5 * sizeof(uint64_t), "drain counters are five uint64_t");

struct DrainCounterField {
  const char* name;         // in reports, the footer's `drain` object and the spool
  const char* description;
  uint64_t DrainCounters::*member;
  // The descriptor field of a drain report that carries it (see kernel_step.h), and the most
  // that field holds: a larger delta is carried as this much, the rest in later reports.
  uint64_t report_max;
  void (*put)(ncclProfilerKernelStepDescr_t* d, uint64_t value);
  uint64_t (*get)(const ncclProfilerKernelStepDescr_t& d);
};

inline constexpr DrainCounterField kDrainCounterFields[] = {
    {"seen", "step start records read intact", &DrainCounters::seen, UINT64_MAX,
     [](ncclProfilerKernelStepDescr_t* d, uint64_t v) { d->startTs = v; },
     [](const ncclProfilerKernelStepDescr_t& d) -> uint64_t { return d.startTs; }},
    {"lost_overrun", "start or stop records overwritten by the writers before the drain read them",
     &DrainCounters::lost_overrun, UINT32_MAX,
     [](ncclProfilerKernelStepDescr_t* d, uint64_t v) { d->step = static_cast<uint32_t>(v); },
     [](const ncclProfilerKernelStepDescr_t& d) -> uint64_t { return d.step; }},
    {"abandoned", "steps closed without a stop: lag exceeded, work retired or drain closed",
     &DrainCounters::abandoned, UINT32_MAX,
     [](ncclProfilerKernelStepDescr_t* d, uint64_t v) { d->size = static_cast<uint32_t>(v); },
     [](const ncclProfilerKernelStepDescr_t& d) -> uint64_t { return d.size; }},
    // PR #2316's layout has no wide field left for these two, so they share readyTs: late in its
    // low half, sampled_out in its high half.
    {"sampled_out", "steps left out on purpose: by sampling, read with the mask off, or a peer or channel above 255",
     &DrainCounters::sampled_out, UINT32_MAX,
     [](ncclProfilerKernelStepDescr_t* d, uint64_t v) { d->readyTs = (d->readyTs & UINT32_MAX) | (v << 32); },
     [](const ncclProfilerKernelStepDescr_t& d) -> uint64_t { return d.readyTs >> 32; }},
    {"late", "steps whose work was retired or never registered; not emitted", &DrainCounters::late,
     UINT32_MAX,
     [](ncclProfilerKernelStepDescr_t* d, uint64_t v) { d->readyTs = (d->readyTs & ~uint64_t{UINT32_MAX}) | v; },
     [](const ncclProfilerKernelStepDescr_t& d) -> uint64_t { return d.readyTs & UINT32_MAX; }},
};
constexpr int kDrainCounterCount = sizeof(kDrainCounterFields) / sizeof(kDrainCounterFields[0]);
static_assert(kDrainCounterCount * sizeof(uint64_t) == sizeof(DrainCounters),
              "every DrainCounters member has a row in kDrainCounterFields");

inline DrainCounters& DrainCounters::operator+=(const DrainCounters& other) {
  for (const DrainCounterField& f : kDrainCounterFields) this->*f.member += other.*f.member;
  return *this;
}

inline DrainCounters DrainCounters::operator-(const DrainCounters& other) const {
  DrainCounters out;
  for (const DrainCounterField& f : kDrainCounterFields) out.*f.member = this->*f.member - other.*f.member;
  return out;
}

inline bool DrainCounters::Any() const {
  for (const DrainCounterField& f : kDrainCounterFields) {
    if (this->*f.member != 0) return true;
  }
  return false;
}

// Writes |delta| into a drain report's payload (channel, isSend and the rest are the caller's)
// and returns what it carried: each counter up to its field's report_max.
inline DrainCounters EncodeDrainReport(const DrainCounters& delta, ncclProfilerKernelStepDescr_t* d) {
  DrainCounters carried;
  for (const DrainCounterField& f : kDrainCounterFields) {
    const uint64_t v = delta.*f.member < f.report_max ? delta.*f.member : f.report_max;
    carried.*f.member = v;
    f.put(d, v);
  }
  return carried;
}

// The counters a drain report carries (isSend == ncclProfilerKernelStepReport).
inline DrainCounters DecodeDrainReport(const ncclProfilerKernelStepDescr_t& d) {
  DrainCounters c;
  for (const DrainCounterField& f : kDrainCounterFields) c.*f.member = f.get(d);
  return c;
}

}  // namespace katrace

#endif  // KATRACE_DRAIN_COUNTERS_H_
