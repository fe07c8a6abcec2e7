// Parent join sweep (see parent_links.h).
#include "tools/check/parent_links.h"

#include <cstdint>
#include <tuple>

#include "tools/common/event_kinds.h"
#include "tools/common/json_fields.h"

namespace katrace::tools {
namespace {

constexpr uint32_t kUnfinished = 1;
constexpr uint32_t kHasExtent = 2;
constexpr uint32_t kViaCollArg = 4;

// Kind codes: 0 = unknown, i + 1 = KnownKinds()[i].
uint32_t KindCode(const std::string& kind) {
  const auto& kinds = KnownKinds();
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] == kind) return static_cast<uint32_t>(i + 1);
  }
  return 0;
}

std::string KindName(uint32_t code) {
  return code == 0 ? std::string("event") : KnownKinds()[code - 1];
}

bool IsGpuChild(const std::string& kind) {
  return kind == "KernelCh" || kind == "KernelStep" || kind == "CollGpu";
}

// The extent widened by the slack, cut at the int64 range instead of wrapping past it.
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

int64_t SaturatingSub(int64_t a, int64_t b) {
  int64_t difference = 0;
  if (!__builtin_sub_overflow(a, b, &difference)) return difference;
  return b > 0 ? INT64_MIN : INT64_MAX;
}

}  // namespace

bool ParentLinks::Less::operator()(const Record& a, const Record& b) const {
  return std::tie(a.pid, a.id, a.role, a.index) < std::tie(b.pid, b.id, b.role, b.index);
}

ParentLinks::ParentLinks(size_t sort_memory_bytes, int64_t slack_ns)
    : sorter_(sort_memory_bytes), slack_ns_(slack_ns) {}

void ParentLinks::AddEvent(int64_t pid, uint64_t id, const std::string& kind,
                           bool has_gpu_extent, int64_t gpu_start_ns, int64_t gpu_end_ns,
                           bool unfinished, uint64_t index, uint64_t line) {
  const uint32_t flags = (unfinished ? kUnfinished : 0) | (has_gpu_extent ? kHasExtent : 0);
  sorter_.Add(Record{pid, id, 0, KindCode(kind), flags, 0, gpu_start_ns, gpu_end_ns, index, line});
}

void ParentLinks::AddReference(int64_t pid, uint64_t target, const std::string& kind,
                               int64_t start_ns, int64_t end_ns, bool unfinished,
                               bool via_coll_arg, uint64_t index, uint64_t line) {
  const uint32_t flags = (unfinished ? kUnfinished : 0) | (via_coll_arg ? kViaCollArg : 0);
  sorter_.Add(Record{pid, target, 1, KindCode(kind), flags, 0, start_ns, end_ns, index, line});
}

void ParentLinks::Check(bool missing_parent_is_error, Diagnostics* diag) {
  if (!sorter_.Finish()) {
    diag->Error("internal", 0, "parent check skipped: " + sorter_.error());
    return;
  }
  bool have_key = false;
  int64_t pid = 0;
  uint64_t id = 0;
  Record target{};  // the first event with this id
  uint64_t definitions = 0;
  Record r;
  while (sorter_.Next(&r)) {
    if (!have_key || r.pid != pid || r.id != id) {
      have_key = true;
      pid = r.pid;
      id = r.id;
      definitions = 0;
    }
    const std::string who = "event #" + std::to_string(r.index) + " (" + KindName(r.kind) + ")";
    if (r.role == 0) {
      if (++definitions == 1) {
        target = r;
      } else {
        diag->Error("ids", r.line,
                    who + ": id " + std::to_string(r.id) + " is already used by event #" +
                        std::to_string(target.index) + " (" + diag->Position(target.line) + ")");
      }
      continue;
    }
    const char* arg = (r.flags & kViaCollArg) ? "coll" : "parent";
    if (definitions == 0) {
      diag->Report(missing_parent_is_error ? Severity::kError : Severity::kWarning, "parent",
                   r.line,
                   who + ": args." + arg + " " + std::to_string(r.id) +
                       " names no event of this process");
      continue;
    }
    const std::string kind = KindName(r.kind);
    if (!IsGpuChild(kind)) continue;
    const std::string target_kind = KindName(target.kind);
    const std::string target_ref =
        "event #" + std::to_string(target.index) + " (" + diag->Position(target.line) + ")";
    if (target_kind != "Coll" && target_kind != "P2p") {
      diag->Error("parent", r.line,
                  who + ": args." + arg + " names " + target_ref + ", a " + target_kind +
                      ", not a Coll or P2p");
      continue;
    }
    if ((r.flags & kUnfinished) || (target.flags & kUnfinished)) continue;
    if (!(target.flags & kHasExtent)) {
      diag->Error("gpu-extent", r.line,
                  who + ": its " + target_kind + " " + target_ref +
                      " has no GPU extent (args.gpu_start/gpu_end) although it has GPU work");
      continue;
    }
    if (r.a_ns < SaturatingSub(target.a_ns, slack_ns_) ||
        r.b_ns > SaturatingAdd(target.b_ns, slack_ns_)) {
      diag->Error("gpu-extent", r.line,
                  who + " " + NsSpanToUsText(r.a_ns, r.b_ns) + " lies outside its " + target_kind +
                      "'s GPU extent " + NsSpanToUsText(target.a_ns, target.b_ns) + " (" + target_ref +
                      ")");
    }
  }
  if (!sorter_.error().empty()) diag->Error("internal", 0, sorter_.error());
}

}  // namespace katrace::tools
