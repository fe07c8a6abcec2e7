// What NCCL's enqueue path costs inside the plugin, counted rather than timed: a child process
// runs the sustained collective of bench/enqueue_collective.h (13 callbacks: GroupApi, CollApi,
// Group, Coll and one KernelCh, under the mask coll,kernelch) through the real .so's
// ncclProfiler_v6 table, and this process single-steps it with ptrace. Every instruction from a
// callback's entry until it returns is counted (libc or vDSO code it calls included), and so are
// the locked read-modify-writes among them (a lock prefix, or xchg with memory, which locks
// implicitly) and the reads of the processor's clock (rdtsc, rdtscp: the host clock the plugin
// reads, directly or through the vDSO's clock_gettime). Counts do not depend on the machine's
// load, so the targets of the hot path are asserted here; timings stay in the benchmarks.
// With KATRACE_HOT_PATH_TRAIL=FILE the median collective's instructions are written to FILE, one
// line each (its callback's number and name, and its offset in the .so, or "-" outside it), for
// bench/hot_path_breakdown.py to attribute to the plugin's functions.
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

#include "bench/enqueue_collective.h"
#include "nccl_profiler/v6.h"
#include "plugin/asymmetric_fence.h"
#include "test/support/plugin_harness.h"

namespace {

using katrace_test::MakeTempDir;
using katrace::AsymmetricFenceAvailable;
using katrace_test::PluginPath;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

constexpr int kCallbacks = 13;
constexpr int kPtraceRefused = 3;  // the child's exit status when it cannot be traced
constexpr int kMeasured = 48;
const char* const kCallbackNames[kCallbacks] = {
    "GroupApi start", "CollApi start",   "CollApi stop",    "GroupApi state", "GroupApi state",
    "Group start",    "Coll start",      "Coll stop",       "Group stop",     "GroupApi stop",
    "KernelCh start", "KernelCh state",  "KernelCh stop"};

struct CollectiveCost {
  uint64_t instructions[kCallbacks] = {};
  uint64_t own_instructions = 0;  // of them, those in the plugin's own code (not libc's or the vDSO's)
  uint64_t locked[kCallbacks] = {};
  uint64_t clock_reads[kCallbacks] = {};
  int callbacks = 0;
  std::vector<std::pair<int, uint64_t>> trail;  // each instruction's callback and address, in order
  uint64_t TotalInstructions() const {
    uint64_t n = 0;
    for (uint64_t i : instructions) n += i;
    return n;
  }
  uint64_t TotalLocked() const {
    uint64_t n = 0;
    for (uint64_t i : locked) n += i;
    return n;
  }
  uint64_t TotalClockReads() const {
    uint64_t n = 0;
    for (uint64_t i : clock_reads) n += i;
    return n;
  }
};

// What the x86-64 instruction at the start of |bytes| is, as far as these counts go.
enum class Instruction { kOther, kLocked, kClockRead };

Instruction Classify(const uint8_t* bytes) {
  int i = 0;
  for (; i < 14; ++i) {
    const uint8_t b = bytes[i];
    if (b == 0xF0) return Instruction::kLocked;
    const bool legacy_prefix = b == 0xF2 || b == 0xF3 || b == 0x2E || b == 0x36 || b == 0x3E || b == 0x26 ||
                               b == 0x64 || b == 0x65 || b == 0x66 || b == 0x67;
    if (!legacy_prefix) break;
  }
  if ((bytes[i] & 0xF0) == 0x40) ++i;  // REX
  const uint8_t op = bytes[i];
  if ((op == 0x86 || op == 0x87) && (bytes[i + 1] >> 6) != 3) return Instruction::kLocked;  // xchg with memory
  if (op == 0x0F && bytes[i + 1] == 0x31) return Instruction::kClockRead;                     // rdtsc
  if (op == 0x0F && bytes[i + 1] == 0x01 && bytes[i + 2] == 0xF9) return Instruction::kClockRead;  // rdtscp
  return Instruction::kOther;
}

// The child: one communicator, a warm-up (buffers taken, strings interned, pools made), then
// kMeasured collectives, each after a SIGSTOP that tells the tracer where it begins.
[[noreturn]] void RunChild(const ncclProfiler_v6_t* p) {
  if (ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) _exit(kPtraceRefused);
  static int mask = 0;
  void* ctx = nullptr;
  p->init(&ctx, 0xc057, &mask, "hot-path-cost", 1, 1, 0, nullptr);
  uint64_t gpu = 0;
  uint64_t seq = 0;
  for (; seq < 4096; ++seq) katrace_bench::EnqueueCollective(p, ctx, seq, &gpu);
  for (int i = 0; i < kMeasured; ++i) {
    raise(SIGSTOP);
    katrace_bench::EnqueueCollective(p, ctx, seq++, &gpu);
  }
  raise(SIGSTOP);
  p->finalize(ctx);
  _exit(0);
}

// The load address of the object that holds |symbol|, 0 if none.
uint64_t ObjectBase(const void* symbol) {
  Dl_info info;
  return dladdr(symbol, &info) != 0 ? reinterpret_cast<uint64_t>(info.dli_fbase) : 0;
}

// The address ranges of the executable segments of the object that holds |symbol| (the child
// was forked after the plugin was loaded, so it has the same ones).
std::vector<std::pair<uint64_t, uint64_t>> CodeRanges(const void* symbol) {
  struct Search {
    uint64_t base;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
  } search{ObjectBase(symbol), {}};
  if (search.base == 0) return {};
  dl_iterate_phdr(
      [](dl_phdr_info* object, size_t, void* data) {
        auto* found = static_cast<Search*>(data);
        if (object->dlpi_addr != found->base) return 0;  // a shared object's first segment is at 0
        for (int i = 0; i < object->dlpi_phnum; ++i) {
          const ElfW(Phdr)& h = object->dlpi_phdr[i];
          if (h.p_type != PT_LOAD || (h.p_flags & PF_X) == 0) continue;
          const uint64_t from = object->dlpi_addr + h.p_vaddr;
          found->ranges.emplace_back(from, from + h.p_memsz);
        }
        return 0;
      },
      &search);
  return search.ranges;
}

// Writes |cost|'s instructions to |path| (see the top of this file); says where, or why not.
void WriteTrail(const char* path, const CollectiveCost& cost, const ncclProfiler_v6_t* p) {
  FILE* f = fopen(path, "w");
  if (f == nullptr) {
    printf("KATRACE_HOT_PATH_TRAIL: cannot write %s: %s\n", path, strerror(errno));
    return;
  }
  const uint64_t base = ObjectBase(p);
  const std::vector<std::pair<uint64_t, uint64_t>> own = CodeRanges(p);
  for (const auto& [at, rip] : cost.trail) {
    const bool ours = std::any_of(own.begin(), own.end(), [&](const auto& r) { return r.first <= rip && rip < r.second; });
    if (ours) fprintf(f, "%d %s 0x%llx\n", at, kCallbackNames[at], static_cast<unsigned long long>(rip - base));
    else fprintf(f, "%d %s -\n", at, kCallbackNames[at]);
  }
  const bool written = fclose(f) == 0;
  printf("KATRACE_HOT_PATH_TRAIL: %s %s\n", written ? "wrote" : "could not finish", path);
}

class Tracer {
 public:
  Tracer(pid_t child, const ncclProfiler_v6_t* p) : child_(child), own_code_(CodeRanges(p)) {
    entries_[reinterpret_cast<uint64_t>(p->startEvent)] = true;
    entries_[reinterpret_cast<uint64_t>(p->stopEvent)] = true;
    entries_[reinterpret_cast<uint64_t>(p->recordEventState)] = true;
  }

  // Continues the child to its next SIGSTOP; false if it ended instead.
  bool RunToNextStop() {
    int status = 0;
    for (;;) {
      if (waitpid(child_, &status, 0) != child_ || !WIFSTOPPED(status)) return false;
      if (WSTOPSIG(status) == SIGSTOP) return true;
      ptrace(PTRACE_CONT, child_, nullptr, reinterpret_cast<void*>(static_cast<uintptr_t>(WSTOPSIG(status))));
    }
  }

  // Single-steps one collective, up to the child's next SIGSTOP.
  bool StepCollective(CollectiveCost* cost, std::string* error) {
    uint64_t entry_sp = 0;  // the stack pointer at the current callback's entry, 0 outside
    for (uint64_t steps = 0; steps < 2000000; ++steps) {
      int status = 0;
      if (ptrace(PTRACE_SINGLESTEP, child_, nullptr, nullptr) != 0 || waitpid(child_, &status, 0) != child_ ||
          !WIFSTOPPED(status)) {
        *error = "the child ended while being stepped";
        return false;
      }
      if (WSTOPSIG(status) == SIGSTOP) return true;
      if (WSTOPSIG(status) != SIGTRAP) {
        *error = "the child stopped with signal " + std::to_string(WSTOPSIG(status));
        return false;
      }
      user_regs_struct regs;
      if (ptrace(PTRACE_GETREGS, child_, nullptr, &regs) != 0) {
        *error = "PTRACE_GETREGS failed";
        return false;
      }
      // The instruction at rip is the one the next step executes.
      if (entry_sp != 0 && regs.rsp > entry_sp) entry_sp = 0;  // the callback returned
      if (entry_sp == 0 && entries_.count(regs.rip) != 0) {
        if (cost->callbacks == kCallbacks) {
          *error = "more callbacks than a collective makes";
          return false;
        }
        entry_sp = regs.rsp;
        ++cost->callbacks;
      }
      if (entry_sp == 0) continue;
      const int at = cost->callbacks - 1;
      ++cost->instructions[at];
      cost->trail.emplace_back(at, regs.rip);
      for (const auto& range : own_code_) cost->own_instructions += range.first <= regs.rip && regs.rip < range.second;
      const Instruction what = ClassifyAt(regs.rip);
      cost->locked[at] += what == Instruction::kLocked;
      cost->clock_reads[at] += what == Instruction::kClockRead;
    }
    *error = "no SIGSTOP after 2,000,000 instructions";
    return false;
  }

 private:
  Instruction ClassifyAt(uint64_t rip) {
    auto it = kinds_.find(rip);
    if (it != kinds_.end()) return it->second;
    uint8_t bytes[24];
    for (int w = 0; w < 3; ++w) {
      errno = 0;
      const long word = ptrace(PTRACE_PEEKTEXT, child_, reinterpret_cast<void*>(rip + 8 * w), nullptr);
      memcpy(bytes + 8 * w, &word, 8);
    }
    return kinds_[rip] = Classify(bytes);
  }

  pid_t child_;
  std::vector<std::pair<uint64_t, uint64_t>> own_code_;
  std::unordered_map<uint64_t, bool> entries_;
  std::unordered_map<uint64_t, Instruction> kinds_;
};

class HotPathCost : public ::testing::Test {
 protected:
  // The median collective by instruction count: a warm collective of the steady state, not the
  // one whose record filled its buffer block.
  static CollectiveCost Measure() {
    static CollectiveCost median = [] {
      setenv("KATRACE_MASK", "coll,kernelch", 1);
      setenv("KATRACE_SUMMARY", "0", 1);
      const std::string out = MakeTempDir() + "/hot-path.json";
      setenv("KATRACE_OUTPUT", out.c_str(), 1);
      void* lib = dlopen(PluginPath().c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib == nullptr) return CollectiveCost{};
      auto* p = static_cast<const ncclProfiler_v6_t*>(dlsym(lib, "ncclProfiler_v6"));
      if (p == nullptr) return CollectiveCost{};
      fflush(nullptr);
      const pid_t child = fork();
      if (child == 0) RunChild(p);
      Tracer tracer(child, p);
      std::vector<CollectiveCost> costs;
      std::string error;
      if (!tracer.RunToNextStop()) error = "the child did not start";
      for (int i = 0; error.empty() && i < kMeasured; ++i) {
        CollectiveCost c;
        if (tracer.StepCollective(&c, &error)) costs.push_back(c);
      }
      if (error.empty()) ptrace(PTRACE_CONT, child, nullptr, nullptr);
      else kill(child, SIGKILL);
      int status = 0;
      waitpid(child, &status, 0);
      if (WIFEXITED(status) && WEXITSTATUS(status) == kPtraceRefused) {
        ptrace_refused() = true;
        return CollectiveCost{};
      }
      EXPECT_TRUE(error.empty()) << error;
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child did not finish its capture";
      unsetenv("KATRACE_MASK");
      unsetenv("KATRACE_SUMMARY");
      unsetenv("KATRACE_OUTPUT");
      if (costs.empty()) return CollectiveCost{};
      std::sort(costs.begin(), costs.end(), [](const CollectiveCost& a, const CollectiveCost& b) {
        return a.TotalInstructions() < b.TotalInstructions();
      });
      const CollectiveCost m = costs[costs.size() / 2];
      printf("one sustained collective, the median of %zu:\n", costs.size());
      printf("  %-16s %12s %7s %11s\n", "callback", "instructions", "locked", "clock reads");
      auto row = [](const char* name, uint64_t n, uint64_t locked, uint64_t reads) {
        printf("  %-16s %12llu %7llu %11llu\n", name, static_cast<unsigned long long>(n),
               static_cast<unsigned long long>(locked), static_cast<unsigned long long>(reads));
      };
      for (int i = 0; i < kCallbacks; ++i) row(kCallbackNames[i], m.instructions[i], m.locked[i], m.clock_reads[i]);
      row("all 13", m.TotalInstructions(), m.TotalLocked(), m.TotalClockReads());
      printf("  of the instructions, %llu in the plugin's own code\n", static_cast<unsigned long long>(m.own_instructions));
      if (const char* trail = getenv("KATRACE_HOT_PATH_TRAIL")) WriteTrail(trail, m, p);
      return m;
    }();
    return median;
  }

  void SetUp() override {
    if (kSanitized) GTEST_SKIP() << "instruction counts of a sanitized build say nothing of the plugin's";
    if (Measure().callbacks == 0 && ptrace_refused()) GTEST_SKIP() << "ptrace is not permitted here";
  }

  static bool& ptrace_refused() {
    static bool refused = false;
    return refused;
  }
};

TEST_F(HotPathCost, EveryCallbackOfTheCollectiveIsCounted) {
  const CollectiveCost c = Measure();
  ASSERT_EQ(c.callbacks, kCallbacks);
  for (int i = 0; i < kCallbacks; ++i) EXPECT_GT(c.instructions[i], 0u) << kCallbackNames[i];
}

// The trail bench/hot_path_breakdown.py attributes holds each counted instruction once, in the
// callbacks' order.
TEST_F(HotPathCost, TheTrailHoldsEveryCountedInstructionInOrder) {
  const CollectiveCost c = Measure();
  ASSERT_EQ(c.trail.size(), c.TotalInstructions());
  uint64_t per_callback[kCallbacks] = {};
  int previous = 0;
  for (const auto& step : c.trail) {
    ASSERT_GE(step.first, previous);
    ASSERT_LT(step.first, kCallbacks);
    previous = step.first;
    ++per_callback[step.first];
  }
  for (int i = 0; i < kCallbacks; ++i) EXPECT_EQ(per_callback[i], c.instructions[i]) << kCallbackNames[i];
}

// GroupApi, CollApi and Group are reported only for the Coll's sake under this mask: no slot, no
// clock read, no locked operation, and a handful of instructions to validate and encode (issue 22's
// target: 25 for a start).
TEST_F(HotPathCost, MaskedOutParentsCostAFewInstructionsAndNothingElse) {
  const CollectiveCost c = Measure();
  ASSERT_EQ(c.callbacks, kCallbacks);
  for (int i : {0, 1, 2, 3, 4, 5, 8, 9}) {
    EXPECT_EQ(c.locked[i], 0u) << kCallbackNames[i];
    EXPECT_EQ(c.clock_reads[i], 0u) << kCallbackNames[i];
  }
  for (int start : {0, 1, 5}) EXPECT_LE(c.instructions[start], 25u) << kCallbackNames[start];
  for (int stop_or_state : {2, 3, 4, 8, 9}) EXPECT_LE(c.instructions[stop_or_state], 10u) << kCallbackNames[stop_or_state];
}

// One host clock read per recorded callback at most, and none for a KernelCh's stop: it takes the
// time of its KernelChStop state, read just before.
TEST_F(HotPathCost, EachRecordedCallbackReadsTheClockOnceAndTheKernelChStopNot) {
  const CollectiveCost c = Measure();
  ASSERT_EQ(c.callbacks, kCallbacks);
  for (int i : {6, 7, 10, 11}) EXPECT_EQ(c.clock_reads[i], 1u) << kCallbackNames[i];
  EXPECT_EQ(c.clock_reads[12], 0u) << kCallbackNames[12];
  EXPECT_EQ(c.TotalClockReads(), 4u);
}

// The slots of the Coll and the KernelCh are taken and given back on this one thread, without a
// locked operation; what is left is the slot life itself: the Coll's stop, the KernelCh's hold on
// it, the KernelCh's stop and the release of that hold.
TEST_F(HotPathCost, TheCollectiveTakesFourLockedOperations) {
  if (!AsymmetricFenceAvailable()) GTEST_SKIP() << "the kernel grants no process-wide barrier: pools are shared";
  const CollectiveCost c = Measure();
  ASSERT_EQ(c.callbacks, kCallbacks);
  EXPECT_EQ(c.locked[6], 0u) << "Coll start: the pool's first thread takes a slot without one";
  EXPECT_EQ(c.locked[7], 1u) << "Coll stop";
  EXPECT_EQ(c.locked[10], 1u) << "KernelCh start: the hold on its Coll";
  EXPECT_EQ(c.locked[12], 2u) << "KernelCh stop: its own stop and its Coll's release";
  EXPECT_LE(c.TotalLocked(), 4u);
}

// A guard, not the goal: 1,470 instructions a collective when this was last set (2,090 before the
// masked-out parents lost their slots and the starts were made per kind, 1,524 before the KernelCh
// state stopped writing a record of its own, 1,481 before the ring's one limit check), with GCC 12 at -O2 and the TSC as the host clock. A change that adds work to every callback, or a helper the compiler
// stops inlining, shows here first; BENCHMARKS.md tracks the counts. Only the plugin's own code is
// held to it: where the clock is read through the vDSO, its instructions are the kernel's.
TEST_F(HotPathCost, TheCollectiveStaysWithinItsInstructionBudget) {
  const CollectiveCost c = Measure();
  ASSERT_EQ(c.callbacks, kCallbacks);
  ASSERT_GT(c.own_instructions, 0u) << "the plugin's code was not found";
  EXPECT_LE(c.own_instructions, 1600u);
}

}  // namespace
