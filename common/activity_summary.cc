// ActivitySummary (see activity_summary.h).
#include "common/activity_summary.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "katrace/event_kinds.h"

namespace katrace {
namespace {

// The CamelCase words of |text|: "ProxyStep" -> "Proxy", "Step".
std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> words;
  size_t begin = 0;
  for (size_t i = 1; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] >= 'A' && text[i] <= 'Z')) {
      words.push_back(text.substr(begin, i - begin));
      begin = i;
    }
  }
  return words;
}

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

// The length and the first, middle and last byte: cheap and weak, which is enough for a few
// dozen names, since a cache slot is verified by comparing the text.
uint64_t Sketch(std::string_view text) {
  if (text.empty()) return 0;
  const auto byte = [&](size_t i) { return static_cast<uint64_t>(static_cast<unsigned char>(text[i])); };
  return text.size() << 24 | byte(0) << 16 | byte(text.size() / 2) << 8 | byte(text.size() - 1);
}

uint64_t Hash(std::string_view a, std::string_view b) { return Mix(Sketch(a), Sketch(b)); }

bool IsSharedGpuWork(std::string_view category) { return category == "KernelCh" || category == "CollGpu"; }

}  // namespace

std::string RowName(std::string_view category, std::string_view name) {
  // The two halves of a KernelStep are rows of KernelStep: "KernelStep Send wait".
  if (category == "KernelStepWait" || category == "KernelStepTransfer") category = "KernelStep";
  if (name.empty() || name == category) return std::string(category);
  const std::vector<std::string_view> kind = Words(category);
  std::string_view rest = name;
  // A name that is the kind's first word ("Group" of GroupApi) or its last ("Step" of ProxyStep)
  // says nothing more; one that starts or ends with it ("ProxySend", "RecvStep") loses that word.
  if (!kind.empty() && rest.size() >= kind.front().size() && rest.substr(0, kind.front().size()) == kind.front() &&
      (rest.size() == kind.front().size() || (rest[kind.front().size()] >= 'A' && rest[kind.front().size()] <= 'Z'))) {
    rest.remove_prefix(kind.front().size());
  }
  if (kind.size() > 1 && rest.size() >= kind.back().size() &&
      rest.substr(rest.size() - kind.back().size()) == kind.back()) {
    rest.remove_suffix(kind.back().size());
  }
  if (rest.empty()) return std::string(category);
  return std::string(category) + " " + std::string(rest);
}

// The plugin's finalize summary and katrace-stats print these titles, so the two outputs diff.
ActivitySummary::ActivitySummary()
    : host("katrace host-side summary (callback start to stop)", TimeShare::kOfSpan),
      gpu("katrace GPU-side summary (%globaltimer)", TimeShare::kOfSpan),
      cache_(kCacheSize),
      ring_(kSharedWindow),
      shared_index_(kSharedIndex, -1) {}

SummaryTable* ActivitySummary::TableOf(std::string_view category) {
  for (const KindInfo& k : kKindInfo) {
    if (category == k.name) return k.side == Side::kGpu ? &gpu : &host;
  }
  for (const DerivedKindInfo& d : kDerivedKinds) {
    if (category == d.name) return !d.summarized ? nullptr : d.side == Side::kGpu ? &gpu : &host;
  }
  return nullptr;
}

ActivitySummary::Target ActivitySummary::Lookup(std::string_view category, std::string_view name) {
  // The high bits: a product's low bits depend only on its inputs' low bits.
  CacheEntry& entry = cache_[(Hash(category, name) >> 40) % kCacheSize];
  if (entry.used && entry.category == category && entry.name == name) return entry.target;
  Target target;
  target.table = TableOf(category);
  if (target.table != nullptr) target.row = target.table->FindRow(RowName(category, name));
  entry.category.assign(category);
  entry.name.assign(name);
  entry.target = target;
  entry.used = true;
  return target;
}

void ActivitySummary::Add(const ActivitySlice& s) {
  // An incomplete KernelStep's halves carry no flag of their own: the transfer half of a step
  // whose stop never came has no true length either, and the per-channel and per-peer tables
  // leave out both halves of such a step.
  if (s.category == "KernelStepWait" || s.category == "KernelStepTransfer") {
    if (after_incomplete_step_ && s.owner == incomplete_step_) return;
  } else {
    after_incomplete_step_ = s.incomplete && s.category == "KernelStep";
    incomplete_step_ = s.id;
  }
  // A GPU slice at host times (no stamps, or stamps outside the run) says nothing of GPU time.
  if (s.incomplete || s.abandoned || (s.host_timed && (s.category == "KernelCh" || s.category == "KernelStep"))) return;
  if (IsSharedGpuWork(s.category)) {
    AddShared(s);
    return;
  }
  const Target t = Lookup(s.category, s.name);
  if (t.table != nullptr) t.table->Add(t.row, s.start_ns, s.duration_ns);
}

size_t ActivitySummary::HomeOf(const SharedKey& k) {
  uint64_t h = k.collgpu ? 1 : 0;
  for (uint64_t v : {k.comm, static_cast<uint64_t>(k.rank), static_cast<uint64_t>(k.channel),
                     static_cast<uint64_t>(k.start_ns), k.duration_ns}) {
    h = Mix(h, v);
  }
  // The high bits: a product's low bits depend only on its inputs' low bits.
  return static_cast<size_t>(h >> 40) & (kSharedIndex - 1);
}

int32_t* ActivitySummary::FindShared(const SharedKey& key, size_t home) {
  // Never full (at most kSharedWindow of kSharedIndex cells are taken): a free cell ends the probe.
  for (size_t i = home;; i = (i + 1) & (kSharedIndex - 1)) {
    int32_t& cell = shared_index_[i];
    if (cell < 0 || ring_[static_cast<size_t>(cell)].key == key) return &cell;
  }
}

void ActivitySummary::EraseShared(const Shared& shared) {
  size_t hole = static_cast<size_t>(FindShared(shared.key, shared.home) - shared_index_.data());
  shared_index_[hole] = -1;
  // Later cells of the probe run move back into the hole unless that would put one before its
  // home, so that every live key stays reachable from its home without a gap.
  for (size_t i = (hole + 1) & (kSharedIndex - 1); shared_index_[i] >= 0; i = (i + 1) & (kSharedIndex - 1)) {
    const size_t home = ring_[static_cast<size_t>(shared_index_[i])].home;
    if (((i - home) & (kSharedIndex - 1)) >= ((i - hole) & (kSharedIndex - 1))) {
      shared_index_[hole] = shared_index_[i];
      shared_index_[i] = -1;
      hole = i;
    }
  }
}

void ActivitySummary::AddShared(const ActivitySlice& s) {
  const SharedKey key{s.category == "CollGpu", s.comm, s.rank, s.channel, s.start_ns, s.duration_ns};
  const size_t home = HomeOf(key);
  if (const int32_t* cell = FindShared(key, home); *cell >= 0) {
    // A name is new unless it is one of the lines already there (compared in place: no copy).
    std::string& names = ring_[static_cast<size_t>(*cell)].names;
    bool known = false;
    for (size_t at = 0; at < names.size() && !known; at = names.find('\n', at) + 1) {
      known = names.compare(at, s.name.size(), s.name) == 0 && at + s.name.size() < names.size() &&
              names[at + s.name.size()] == '\n';
    }
    if (!known) {
      names.append(s.name);
      names += '\n';
    }
    return;
  }
  Shared& fresh = ring_[ring_next_];
  if (fresh.live) FlushShared(&fresh);  // the oldest: its window has passed
  fresh.key = key;
  fresh.home = home;
  fresh.names.assign(s.name);
  fresh.names += '\n';
  fresh.live = true;
  *FindShared(key, home) = static_cast<int32_t>(ring_next_);  // found again: the flush moved cells
  ring_next_ = (ring_next_ + 1) % kSharedWindow;
}

void ActivitySummary::FlushShared(Shared* shared) {
  shared->live = false;
  EraseShared(*shared);
  const std::string_view lines = shared->names;
  // One task, nearly always: its own name, looked up where it lies.
  std::string_view name = lines.substr(0, lines.size() - 1);
  std::string joined;
  if (lines.find('\n') + 1 != lines.size()) {
    // Sorted, so the row does not depend on which task's callback came first: "Send+Recv".
    std::vector<std::string_view> names;
    for (size_t at = 0, end; (end = lines.find('\n', at)) != std::string_view::npos; at = end + 1) {
      names.push_back(lines.substr(at, end - at));
    }
    std::sort(names.begin(), names.end(), std::greater<>());
    for (std::string_view n : names) {
      if (!joined.empty()) joined += '+';
      joined.append(n);
    }
    name = joined;
  }
  const Target t = Lookup(shared->key.collgpu ? "CollGpu" : "KernelCh", name);
  if (t.table != nullptr) t.table->Add(t.row, shared->key.start_ns, shared->key.duration_ns);
}

void ActivitySummary::Finish() {
  // Oldest first, as they would have left the ring.
  for (size_t i = 0; i < kSharedWindow; ++i) {
    Shared& shared = ring_[(ring_next_ + i) % kSharedWindow];
    if (shared.live) FlushShared(&shared);
  }
}

}  // namespace katrace
