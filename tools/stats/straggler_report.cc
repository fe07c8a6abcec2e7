// Straggler sweep (see straggler_report.h).
#include "tools/stats/straggler_report.h"

#include <algorithm>
#include <tuple>

namespace katrace::tools {

std::string ParticipantLabel(int64_t pid, int64_t comm_rank) {
  std::string label = "rank " + std::to_string(pid);
  if (comm_rank != pid && comm_rank >= 0) label += " (comm rank " + std::to_string(comm_rank) + ")";
  return label;
}

bool StragglerReport::Less::operator()(const Record& a, const Record& b) const {
  return std::tie(a.comm, a.func, a.seq, a.arrival_ns, a.pid, a.comm_rank) <
         std::tie(b.comm, b.func, b.seq, b.arrival_ns, b.pid, b.comm_rank);
}

StragglerReport::StragglerReport(size_t sort_memory_bytes, size_t top_n)
    : delay_per_rank("Straggler delay per rank: instances where the rank arrived last "
                     "(delay = last - first arrival)"),
      lag_per_rank("Arrival lag per rank: arrival - first arrival, over every instance"),
      sorter_(sort_memory_bytes),
      top_n_(top_n) {}

void StragglerReport::AddArrival(uint64_t comm, const std::string& func, int64_t seq,
                                 int64_t pid, int64_t comm_rank, int64_t arrival_realtime_ns) {
  auto [it, inserted] = func_ids_.try_emplace(func, static_cast<uint32_t>(funcs_.size()));
  if (inserted) funcs_.push_back(func);
  sorter_.Add(Record{comm, it->second, 0, seq, arrival_realtime_ns, pid, comm_rank});
}

namespace {

// How long after |earlier| |later| arrived (later >= earlier: an instance's arrivals are sorted),
// held at INT64_MAX: the arrivals of files whose clock bases are hostile can lie further apart
// than an int64_t of ns holds.
int64_t Gap(int64_t earlier, int64_t later) {
  const uint64_t gap = static_cast<uint64_t>(later) - static_cast<uint64_t>(earlier);
  return gap > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(gap);
}

}  // namespace

void StragglerReport::Finish(const CommSizes& sizes) {
  if (!sorter_.Finish()) {
    error = sorter_.error();
    return;
  }
  auto worse = [](const Instance& a, const Instance& b) { return a.delay_ns > b.delay_ns; };
  // Min-heap on delay holding the top_n worst so far.
  std::vector<Instance> heap;
  Record first{}, prev{}, last{};
  uint64_t count = 0;
  auto close_group = [&] {
    if (count < 2) {
      if (count == 1) ++single_rank_instances;
      return;
    }
    ++instances;
    const int64_t expected = sizes.Size(first.comm);
    if (expected > 0 && count < static_cast<uint64_t>(expected)) ++short_instances;
    const std::string last_label = ParticipantLabel(last.pid, last.comm_rank);
    const int64_t delay = Gap(first.arrival_ns, last.arrival_ns);
    delay_per_rank.Add(last_label, static_cast<uint64_t>(delay));
    if (top_n_ == 0) return;
    Instance instance{first.comm, funcs_[first.func], first.seq, count, last_label,
                      ParticipantLabel(first.pid, first.comm_rank),
                      ParticipantLabel(prev.pid, prev.comm_rank), delay,
                      Gap(prev.arrival_ns, last.arrival_ns)};
    if (heap.size() < top_n_) {
      heap.push_back(std::move(instance));
      std::push_heap(heap.begin(), heap.end(), worse);
    } else if (instance.delay_ns > heap.front().delay_ns) {
      std::pop_heap(heap.begin(), heap.end(), worse);
      heap.back() = std::move(instance);
      std::push_heap(heap.begin(), heap.end(), worse);
    }
  };
  Record r;
  while (sorter_.Next(&r)) {
    const bool same = count > 0 && r.comm == first.comm && r.func == first.func &&
                      r.seq == first.seq;
    if (!same) {
      close_group();
      first = r;
      count = 0;
    }
    prev = count > 0 ? last : r;
    last = r;
    // Lags count only for instances that more than one rank reported; the first rank's zero
    // lag is added once a second rank shows up.
    if (count == 1) lag_per_rank.Add(ParticipantLabel(first.pid, first.comm_rank), 0);
    if (count >= 1) {
      lag_per_rank.Add(ParticipantLabel(r.pid, r.comm_rank),
                       static_cast<uint64_t>(Gap(first.arrival_ns, r.arrival_ns)));
    }
    ++count;
  }
  close_group();
  if (!sorter_.error().empty()) error = sorter_.error();
  std::sort(heap.begin(), heap.end(), worse);
  worst = std::move(heap);
}

}  // namespace katrace::tools
