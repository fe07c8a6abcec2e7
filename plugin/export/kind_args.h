// The arguments of an event's slices, written by looping over its kind's schema
// (katrace/kind_schema.h): each ArgSpec names where its value comes from, and this is the one
// place those sources are read.
#ifndef KATRACE_PLUGIN_EXPORT_KIND_ARGS_H_
#define KATRACE_PLUGIN_EXPORT_KIND_ARGS_H_

#include <stddef.h>
#include <stdint.h>

#include <string_view>

#include "katrace/kind_schema.h"
#include "plugin/export/assembled_event.h"
#include "plugin/export/gpu_placement.h"
#include "plugin/export/trace_encoder.h"

namespace katrace {
namespace exporting {

// The most arguments one slice carries (common, the kind's own, GPU facts), from the schema.
constexpr size_t MaxSliceArgs() {
  size_t most = sizeof(kCommonArgs) / sizeof(kCommonArgs[0]) + sizeof(kGpuFacts) / sizeof(kGpuFacts[0]);
  size_t own = 0;
  for (const KindSchema& s : kKindSchema) own = s.nargs > own ? s.nargs : own;
  for (const DerivedSchema& d : kDerivedSchema) own = d.nargs > own ? d.nargs : own;
  return most + own;
}
constexpr size_t kMaxSliceArgs = MaxSliceArgs();

// Room for one slice's arguments, left unset: AppendArgs writes the ones it returns, and zeroing
// two dozen of them per slice was a tenth of the export's time.
union SliceArgs {
  SliceArgs() {}
  Arg a[kMaxSliceArgs];
};

// What an event's arguments are computed from besides the event itself.
struct ArgContext {
  const AssembledEvent& e;
  uint64_t base_ns;     // kTime arguments are relative to it
  const GpuSpan* gpu;   // the event's placed GPU times (a Coll/P2p: its extent); null for none
};

// Appends the arguments of |specs| that are present; returns how many.
size_t AppendArgs(const ArgSpec* specs, size_t n, const ArgContext& c, Arg* out);

// A recorded event's slice arguments: the common ones, its kind's, then its GPU facts.
size_t EventArgs(const ArgContext& c, Arg* out);

// The value of the kind's argument named |key| (the hang report reads a few), false when the kind
// has none or it is absent.
bool KindArg(const AssembledEvent& e, std::string_view key, Arg* out);

// Sets |e|'s element_bytes from its datatype text, the schema's (ReadSchemaFields calls it).
void SetElementBytes(AssembledEvent* e);

// Resolves the interned strings of an event's Start fields (func and the others, kMaxTexts) and
// its track coordinates and GPU stamps, as its schema locates them.
template <typename Resolve>
void ReadSchemaFields(const Resolve& resolve, AssembledEvent* e) {
  const KindSchema& s = SchemaOf(e->kind);
  auto u32 = [&](int at) {
    uint32_t v;
    memcpy(&v, e->fields + at, sizeof(v));
    return v;
  };
  auto u64 = [&](int at) {
    uint64_t v;
    memcpy(&v, e->fields + at, sizeof(v));
    return v;
  };
  if (s.func_at != kNoField) e->func = resolve(u32(s.func_at));
  if (s.channel_at != kNoField) e->channel = e->fields[s.channel_at];
  if (s.peer_at != kNoField) e->peer = static_cast<int32_t>(u32(s.peer_at));
  if (s.gpu_start_at != kNoField) e->gpu_start = u64(s.gpu_start_at);
  if (s.gpu_ready_at != kNoField) e->gpu_ready = u64(s.gpu_ready_at);
  int text = 0;
  for (size_t i = 0; i < s.nargs && text < kMaxTexts; ++i) {
    if (s.args[i].source == ArgSource::kFieldText) e->text[text++] = resolve(u32(s.args[i].at));
  }
  SetElementBytes(e);
}

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_KIND_ARGS_H_
