#include "plugin/export/kind_args.h"

#include <string.h>

#include <array>

#include "plugin/export/event_naming.h"

namespace katrace {
namespace exporting {
namespace {

uint64_t ReadUnsigned(const AssembledEvent& e, const ArgSpec& s) {
  switch (s.width) {
    case 1: return e.fields[s.at];
    case 4: {
      uint32_t v;
      memcpy(&v, e.fields + s.at, sizeof(v));
      return v;
    }
    default: {
      uint64_t v;
      memcpy(&v, e.fields + s.at, sizeof(v));
      return v;
    }
  }
}

int64_t ReadSigned(const AssembledEvent& e, const ArgSpec& s) {
  switch (s.width) {
    case 1: return e.fields[s.at];  // channel and warp counts: unsigned bytes
    case 4: {
      int32_t v;
      memcpy(&v, e.fields + s.at, sizeof(v));
      return v;
    }
    default: {
      int64_t v;
      memcpy(&v, e.fields + s.at, sizeof(v));
      return v;
    }
  }
}

// The text slot (ReadSchemaFields' order) of the kind's argument |key|, and its count field:
// what the payload size is computed from.
struct PayloadSource {
  int datatype_text = -1;
  const ArgSpec* count = nullptr;
};

const PayloadSource& PayloadSourceOf(Kind k) {
  // Held by value: the plugin is unloaded with dlclose, which would leave a heap table behind.
  static const std::array<PayloadSource, kKindCount> table = [] {
    std::array<PayloadSource, kKindCount> t{};
    for (int kind = 0; kind < kKindCount; ++kind) {
      const KindSchema& s = kKindSchema[kind];
      int text = 0;
      for (size_t i = 0; i < s.nargs; ++i) {
        const ArgSpec& a = s.args[i];
        if (a.source == ArgSource::kFieldText) {
          if (a.key == "datatype") t[kind].datatype_text = text;
          ++text;
        } else if (a.source == ArgSource::kField && a.key == "count") {
          t[kind].count = &a;
        }
      }
    }
    return t;
  }();
  return table[static_cast<size_t>(k)];
}

// count × the datatype's size (SetElementBytes).
uint64_t PayloadBytes(const AssembledEvent& e) {
  const PayloadSource& p = PayloadSourceOf(e.kind);
  if (p.count == nullptr) return 0;
  // Unsigned multiplication: a garbage count wraps instead of overflowing.
  return ReadUnsigned(e, *p.count) * e.element_bytes;
}

bool StateTime(const AssembledEvent& e, int32_t state, uint64_t* ns) {
  for (int i = 0; i < e.nstates; ++i) {
    if (e.state_id[i] == state) {
      *ns = e.state_ns[i];
      return true;
    }
  }
  return false;
}

// One argument; false when it is absent. Inlined into the loops over a kind's list, which are
// the export's per-slice work.
inline __attribute__((always_inline)) bool Evaluate(const ArgSpec& s, const ArgContext& c, int* text, Arg* out) {
  const AssembledEvent& e = c.e;
  auto rel = [&](uint64_t ns) { return static_cast<int64_t>(ns - c.base_ns); };
  auto flag = [&](bool set) {
    *out = Arg::Bool(s.key, set);
    return set || s.presence == Presence::kAlways;
  };
  auto uint_when_set = [&](uint64_t v, bool set) {
    *out = Arg::Uint(s.key, v);
    return set || s.presence == Presence::kAlways;
  };
  switch (s.source) {
    case ArgSource::kField:
      if (s.type == ArgType::kInt) {
        *out = Arg::Int(s.key, ReadSigned(e, s));
      } else {
        *out = Arg::Uint(s.key, ReadUnsigned(e, s));
      }
      return true;
    case ArgSource::kFieldText: {
      const int slot = (*text)++;
      *out = Arg::Str(s.key, slot < kMaxTexts ? Text(e.text[slot]) : std::string_view());
      return true;
    }
    case ArgSource::kFunc: *out = Arg::Str(s.key, Text(e.func)); return true;
    case ArgSource::kId: *out = Arg::Uint(s.key, e.id); return true;
    case ArgSource::kParent: return uint_when_set(e.parent_id, e.parent_id != 0);
    case ArgSource::kOwner: *out = Arg::Uint(s.key, e.id); return true;
    case ArgSource::kCommHash: *out = Arg::Hex(s.key, e.comm_hash); return true;
    case ArgSource::kRank: *out = Arg::Int(s.key, e.rank); return true;
    case ArgSource::kIncomplete: return flag(e.flags & kEvIncomplete);
    case ArgSource::kLate: return flag(e.flags & kEvLateChild);
    case ArgSource::kGraphCaptured: return flag(e.flags & kEvGraphCaptured);
    case ArgSource::kSend: return flag(IsSend(e));
    case ArgSource::kAbandoned: return flag(e.flags & kEvAbandoned);
    case ArgSource::kPayloadBytes: *out = Arg::Uint(s.key, PayloadBytes(e)); return true;
    case ArgSource::kGpuExtentStart:
    case ArgSource::kGpuExtentEnd: {
      // The same placed times as the CollGpu slice, so its children lie within both.
      if (c.gpu == nullptr || (e.flags & kEvHasGpuExtent) == 0) return false;
      *out = Arg::Time(s.key, rel(s.source == ArgSource::kGpuExtentStart ? c.gpu->start : c.gpu->end));
      return true;
    }
    // Only stamps that arrived are written: a missing one is absent, never 0.
    case ArgSource::kGpuStart: return uint_when_set(e.gpu_start, e.gpu_start != 0);
    case ArgSource::kGpuReady: *out = Arg::Uint(s.key, e.gpu_ready); return true;
    case ArgSource::kGpuStop: return uint_when_set(e.gpu_stop, (e.flags & kEvGpuStopSeen) != 0);
    case ArgSource::kStateTime: {
      uint64_t ns = 0;
      if (!StateTime(e, s.state, &ns)) return false;
      *out = Arg::Time(s.key, rel(ns));
      return true;
    }
    case ArgSource::kFirstStateTime:
      if (e.nstates == 0) return false;
      *out = Arg::Time(s.key, rel(e.state_ns[0]));
      return true;
    case ArgSource::kStateValue:
      if (s.type == ArgType::kInt) {
        *out = Arg::Int(s.key, static_cast<int32_t>(e.state_value));  // a count NCCL passes as an int
      } else {
        *out = Arg::Uint(s.key, e.state_value);
      }
      return true;
    case ArgSource::kUpdates: *out = Arg::Int(s.key, e.updates); return true;
    case ArgSource::kClamped: return flag(c.gpu != nullptr && c.gpu->clamped);
    case ArgSource::kStopBeforeStart: return flag(c.gpu != nullptr && c.gpu->stop_before_start);
    case ArgSource::kHostTimed: return flag(c.gpu != nullptr && c.gpu->host_timed);
  }
  return false;
}

}  // namespace

void SetElementBytes(AssembledEvent* e) {
  const PayloadSource& p = PayloadSourceOf(e->kind);
  const std::string* datatype = p.datatype_text >= 0 ? e->text[p.datatype_text] : nullptr;
  e->element_bytes = 1;  // no datatype; Int8, Uint8, Float8 variants
  if (datatype == nullptr) return;
  // NCCL's names carry their width.
  if (datatype->find("64") != std::string::npos) {
    e->element_bytes = 8;
  } else if (datatype->find("32") != std::string::npos) {
    e->element_bytes = 4;
  } else if (datatype->find("16") != std::string::npos) {
    e->element_bytes = 2;
  }
}

size_t AppendArgs(const ArgSpec* specs, size_t n, const ArgContext& c, Arg* out) {
  size_t written = 0;
  int text = 0;
  for (size_t i = 0; i < n; ++i) {
    if (Evaluate(specs[i], c, &text, out + written)) ++written;
  }
  return written;
}

namespace {

// A kind's whole list of slice arguments (the common ones, its own, its GPU facts) in one array,
// so that a slice's are written by one loop. Text slots are counted from the first argument, as
// in the kind's own list: the common arguments and the GPU facts have none.
struct SliceArgList {
  ArgSpec specs[kMaxSliceArgs];
  size_t n = 0;
};

constexpr bool HasText(const ArgSpec* specs, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (specs[i].source == ArgSource::kFieldText) return true;
  }
  return false;
}
static_assert(!HasText(kCommonArgs, sizeof(kCommonArgs) / sizeof(kCommonArgs[0])) &&
                  !HasText(kGpuFacts, sizeof(kGpuFacts) / sizeof(kGpuFacts[0])),
              "only a kind's own arguments read its texts");

const SliceArgList& SliceArgsOf(Kind k) {
  // Held by value: the plugin is unloaded with dlclose, which would leave a heap table behind.
  static const std::array<SliceArgList, kKindCount> lists = [] {
    std::array<SliceArgList, kKindCount> t{};
    for (int kind = 0; kind < kKindCount; ++kind) {
      const KindSchema& s = kKindSchema[kind];
      SliceArgList& l = t[kind];
      for (const ArgSpec& a : kCommonArgs) l.specs[l.n++] = a;
      for (size_t i = 0; i < s.nargs; ++i) l.specs[l.n++] = s.args[i];
      if (s.gpu_facts) {
        for (const ArgSpec& a : kGpuFacts) l.specs[l.n++] = a;
      }
    }
    return t;
  }();
  return lists[static_cast<size_t>(k)];
}

}  // namespace

size_t EventArgs(const ArgContext& c, Arg* out) {
  const SliceArgList& l = SliceArgsOf(c.e.kind);
  return AppendArgs(l.specs, l.n, c, out);
}

bool KindArg(const AssembledEvent& e, std::string_view key, Arg* out) {
  const KindSchema& s = SchemaOf(e.kind);
  const ArgContext c{e, 0, nullptr};
  int text = 0;
  for (size_t i = 0; i < s.nargs; ++i) {
    Arg a;
    const bool present = Evaluate(s.args[i], c, &text, &a);
    if (key == s.args[i].key) {
      if (present) *out = a;
      return present;
    }
  }
  return false;
}

}  // namespace exporting
}  // namespace katrace
