// ActivitySummary (see activity_summary.h).
#include "common/activity_summary.h"

#include <algorithm>
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

uint64_t Hash(std::string_view a, std::string_view b) {
  uint64_t h = 1469598103934665603ull;
  for (char c : a) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  h = (h ^ 0xff) * 1099511628211ull;
  for (char c : b) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

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
      cache_(kCacheSize) {}

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
  CacheEntry& entry = cache_[Hash(category, name) % kCacheSize];
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
  if (s.incomplete || s.abandoned || (s.host_timed && s.category == "KernelCh")) return;
  if (IsSharedGpuWork(s.category)) {
    AddShared(s);
    return;
  }
  const Target t = Lookup(s.category, s.name);
  if (t.table != nullptr) t.table->Add(t.row, s.start_ns, s.duration_ns);
}

void ActivitySummary::AddShared(const ActivitySlice& s) {
  SharedKey key{std::string(s.category), s.comm, s.rank, s.channel, s.start_ns, s.duration_ns};
  auto [it, inserted] = shared_.try_emplace(std::move(key));
  Shared& shared = it->second;
  if (inserted) {
    shared.start_ns = s.start_ns;
    shared.duration_ns = s.duration_ns;
    shared_order_.push_back(it->first);
    if (shared_order_.size() > kSharedWindow) FlushOldestShared();
  }
  if (std::find(shared.names.begin(), shared.names.end(), s.name) == shared.names.end()) {
    shared.names.emplace_back(s.name);
  }
}

void ActivitySummary::FlushOldestShared() {
  auto it = shared_.find(shared_order_.front());
  shared_order_.pop_front();
  Shared& shared = it->second;
  // Sorted, so the row does not depend on which task's callback came first: "Send+Recv".
  std::sort(shared.names.begin(), shared.names.end(), std::greater<>());
  std::string name;
  for (const std::string& n : shared.names) name += (name.empty() ? "" : "+") + n;
  const Target t = Lookup(std::get<0>(it->first), name);
  if (t.table != nullptr) t.table->Add(t.row, shared.start_ns, shared.duration_ns);
  shared_.erase(it);
}

void ActivitySummary::Finish() {
  while (!shared_order_.empty()) FlushOldestShared();
}

}  // namespace katrace
