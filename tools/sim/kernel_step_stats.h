// What katrace-sim's KernelStep emulation did, per rank and summed for the report: what the
// emulated writers ran and wrote, and the drain's own counters (the same names the trace footer's
// `drain` object uses).
#ifndef KATRACE_TOOLS_SIM_KERNEL_STEP_STATS_H_
#define KATRACE_TOOLS_SIM_KERNEL_STEP_STATS_H_

#include <cstdint>

#include "katrace/drain_counters.h"

namespace katrace::sim {

struct KernelStepStats {
  uint64_t works = 0;           // (channel, work) pairs that ran KernelSteps
  uint64_t steps = 0;           // slices run, every role: starts + sampled_out + sampled_tail
  uint64_t starts_written = 0;  // start records written (kept steps)
  uint64_t stops_written = 0;
  // Steps left out by sampling that the drain can count: each kept step above 0 stands for the
  // sample_every - 1 before it.
  uint64_t sampled_out = 0;
  // Steps left out after a role's last kept step: no later record tells the drain about them.
  uint64_t sampled_tail = 0;
  // Kernels the host ran late: the writer reached them (or woke for them) over 10 µs after they
  // could begin; their windows moved with them. And the total of those delays.
  uint64_t late_kernels = 0;
  uint64_t late_ns = 0;
  // Works whose window was stretched because slices on their channel ran past it.
  uint64_t stretched_works = 0;
  uint64_t reports = 0;  // drain reports delivered to the plugin
  katrace::DrainCounters drain;

  void Add(const KernelStepStats& other) {
    works += other.works;
    steps += other.steps;
    starts_written += other.starts_written;
    stops_written += other.stops_written;
    sampled_out += other.sampled_out;
    sampled_tail += other.sampled_tail;
    late_kernels += other.late_kernels;
    late_ns += other.late_ns;
    stretched_works += other.stretched_works;
    reports += other.reports;
    drain += other.drain;
  }
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_KERNEL_STEP_STATS_H_
