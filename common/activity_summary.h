// The host-side and GPU-side activity tables, built from the slices a trace holds. The plugin
// feeds it the slices its exporter writes, katrace-stats the slices it reads back from a trace, so
// both print the same tables for one trace by construction.
//
// What it decides, in one place for both:
// - Which slices count: every kind on the summarized side of katrace/event_kinds.h, leaving out
//   incomplete slices (no true duration) with the wait and transfer halves of an incomplete
//   KernelStep (the exporter draws them without the flag, right after their step), KernelCh
//   slices timed on the host (no GPU stamps) and abandoned KernelSteps (their stop never came).
// - Row names: "<kind> <name>", without the repetition the raw names carry: "Group" not
//   "Group Group", "GroupApi" not "GroupApi Group", "ProxyStep Recv" not "ProxyStep RecvStep",
//   "KernelStep Send wait" not "KernelStepWait Send wait" (see RowName).
// - GPU work counted once: NCCL reports one kernel's channel for every task it runs (the Send and
//   the Recv of a group share one kernel), so KernelCh and CollGpu slices with the same
//   communicator, rank, channel, start and duration are one instance, in a row naming every task
//   ("KernelCh Send+Recv"). Sharers arrive close together (they complete together, though the
//   layout may hold one task's lane a while); a slice is matched exactly against the last
//   kSharedWindow such slices, so memory stays bounded and the cost per slice small.
// Thread safety: none.
#ifndef KATRACE_COMMON_ACTIVITY_SUMMARY_H_
#define KATRACE_COMMON_ACTIVITY_SUMMARY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/summary_table.h"

namespace katrace {

// One slice as the trace has it.
struct ActivitySlice {
  std::string_view category;  // the trace's cat: "Coll", "KernelCh", "CollGpu", "KernelStepWait", ...
  std::string_view name;
  int64_t start_ns = 0;  // on the trace's timeline (any common origin)
  uint64_t duration_ns = 0;
  bool incomplete = false;
  bool host_timed = false;  // KernelCh/KernelStep at host times (no stamps, or stamps outside the run)
  bool abandoned = false;   // KernelStep whose stop never came
  // Identify GPU work several tasks report (KernelCh, CollGpu); channel -1 for CollGpu.
  uint64_t comm = 0;
  int64_t rank = -1;
  int64_t channel = -1;
  // A KernelStep's record id (its `id` arg), and a KernelStepWait's or KernelStepTransfer's
  // step (its `kernel_step` arg): the halves of an incomplete step are left out with it.
  uint64_t id = 0;
  uint64_t owner = 0;
};

// "<category> <name>" without repetition (see the header note); |name| empty gives the category.
std::string RowName(std::string_view category, std::string_view name);

class ActivitySummary {
 public:
  static constexpr size_t kSharedWindow = 4096;

  ActivitySummary();
  void Add(const ActivitySlice& slice);
  // Counts the slices still waiting for sharers; call once before reading the tables.
  void Finish();

  SummaryTable host;
  SummaryTable gpu;

 private:
  struct Target {
    SummaryTable* table = nullptr;  // null: a kind the summary does not count
    SummaryTable::Row* row = nullptr;
  };
  // A direct-mapped cache of (category, name) -> row: a few dozen pairs take every slice.
  struct CacheEntry {
    std::string category, name;
    Target target;
    bool used = false;
  };
  static constexpr size_t kCacheSize = 256;

  Target Lookup(std::string_view category, std::string_view name);
  SummaryTable* TableOf(std::string_view category);

  // What makes two tasks' slices one piece of GPU work.
  struct SharedKey {
    bool collgpu = false;  // CollGpu, else KernelCh
    uint64_t comm = 0;
    int64_t rank = 0, channel = 0, start_ns = 0;
    uint64_t duration_ns = 0;
    bool operator==(const SharedKey& o) const {
      return collgpu == o.collgpu && comm == o.comm && rank == o.rank && channel == o.channel &&
             start_ns == o.start_ns && duration_ns == o.duration_ns;
    }
  };
  // One slice of GPU work waiting for its other tasks, in a ring in arrival order.
  struct Shared {
    SharedKey key;
    size_t home = 0;    // its cell in shared_index_ when nothing collided
    std::string names;  // the distinct task names, each followed by '\n'
    bool live = false;
  };
  // The live ring slots by key: open addressing with linear probing, at most half full, so a
  // slice costs a hash and a probe or two, and no allocation.
  static constexpr size_t kSharedIndex = 2 * kSharedWindow;
  static_assert((kSharedIndex & (kSharedIndex - 1)) == 0, "the index wraps with a mask");
  static size_t HomeOf(const SharedKey& key);
  // The cell that holds |key|'s ring slot, or the free cell where it would go.
  int32_t* FindShared(const SharedKey& key, size_t home);
  void EraseShared(const Shared& shared);
  void AddShared(const ActivitySlice& slice);
  void FlushShared(Shared* shared);

  // The incomplete KernelStep just seen, whose halves come next; none after any other slice.
  bool after_incomplete_step_ = false;
  uint64_t incomplete_step_ = 0;

  std::vector<CacheEntry> cache_;
  std::vector<Shared> ring_;
  size_t ring_next_ = 0;  // where the next one goes; the oldest when the ring is full
  std::vector<int32_t> shared_index_;  // ring slot, or -1 for a free cell
};

}  // namespace katrace

#endif  // KATRACE_COMMON_ACTIVITY_SUMMARY_H_
