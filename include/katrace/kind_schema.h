// What each event kind is, described once: the spool fields its Start carries (StartFieldsOf,
// katrace/spool_format.h), which of those fields locate it (its function name, channel, peer,
// GPU stamps), the track family it is drawn on, how its slice is named, and the arguments its
// slice carries, each as (key, type, presence, where the value comes from). The same for the
// slices derived from a kind at export (a Coll's GPU extent, a step's parts).
//
// Everything downstream loops over this table instead of describing kinds again: the export
// assembles events and writes their arguments from it (plugin/export/kind_args.h), katrace-check
// checks each kind's arguments against it, and the format document's test compares its tables
// with it. Adding a kind: docs/adding-a-kind.md.
#ifndef KATRACE_KIND_SCHEMA_H_
#define KATRACE_KIND_SCHEMA_H_

#include <stddef.h>
#include <stdint.h>

#include <string_view>

#include "katrace/event_kinds.h"
#include "katrace/spool_format.h"

namespace katrace {

// How an argument is typed in every trace format.
enum class ArgType : uint8_t {
  kUint,
  kInt,
  kBool,
  kString,
  kTime,   // ns relative to the trace base (a point in time, shown like ts)
  kHex64,  // a 64-bit id shown as 16 hex digits (communicator hashes)
};

// When an argument is written. A reader may rely on kAlways arguments; the others are absent when
// their fact is (a bool flag written only when true, a stamp that never arrived).
enum class Presence : uint8_t {
  kAlways,
  kWhenSet,  // absent when the source has no value (0 id or stamp, false flag, state not seen)
};

// Where an argument's value comes from.
enum class ArgSource : uint8_t {
  kField,       // the kind's Start fields at |at|, |width| bytes (signed for kInt)
  kFieldText,   // an interned string id in the Start fields at |at|
  kFunc,        // the function name (the kind's func field, or its parent's)
  kId,          // the event's record id
  kParent,      // the recorded parent's id
  kOwner,       // derived slices: the record id of the event they belong to
  kCommHash,
  kRank,        // the event's rank in its communicator
  kIncomplete,  // no stop before the end of the spool
  kLate,        // started after its parent had completed
  kGraphCaptured,
  kSend,            // direction
  kPayloadBytes,    // count times the datatype's size
  kGpuExtentStart,  // Coll/P2p: where its GPU work starts on the trace's clock
  kGpuExtentEnd,
  kGpuStart,        // raw %globaltimer stamps
  kGpuReady,
  kGpuStop,
  kStateTime,       // the time of the state numbered |state|
  kFirstStateTime,  // the time of the first state recorded
  kStateValue,      // the value a state carried (ProxyStep transSize, ProxyCtrl appended ops)
  kUpdates,         // states recorded as updates (NetPlugin)
  kAbandoned,       // KernelStep whose stop the drain gave up on
  kClamped,         // GPU times held within the run
  kStopBeforeStart, // a GPU stop stamp before its start
  kHostTimed,       // GPU work drawn at host times
};

struct ArgSpec {
  std::string_view key;  // its length known at compile time: no strlen per argument written
  ArgType type;
  Presence presence;
  ArgSource source;
  uint8_t at = 0;     // kField, kFieldText: offset in the kind's Start fields
  uint8_t width = 0;  // kField: 1, 4 or 8 bytes
  int32_t state = 0;  // kStateTime: NCCL's state number
};

// Where a kind's slices go (the layout keys lanes of each family by these coordinates).
enum class TrackFamily : uint8_t {
  kHostCalls,   // (rank, os tid): the thread's calls, nested as they were called
  kHostTasks,   // (rank, os tid): Coll/P2p/CeColl enqueued by the thread, whose life is not a call
  kProxyOp,     // (comm, channel, direction, peer): ProxyOps in flight on one connection
  kProxyStep,   // (comm, channel, direction, peer): ProxySteps with their state intervals
  kProxyCtrl,   // (comm)
  kNet,         // (comm)
  kGpuComm,     // (comm): Coll/P2p GPU extents
  kGpuChannel,  // (comm, channel): KernelCh
  kGpuStep,     // (comm, channel, direction, peer): KernelSteps with their wait/transfer halves
};

// How a slice is named.
enum class NameRule : uint8_t {
  kFunc,           // its function name, else the kind's name
  kFixed,          // |fixed_name|
  kDirection,      // "Send" or "Recv"
  kStepDirection,  // "SendStep" or "RecvStep", "Step" while the direction is unknown
  kFirstState,     // its first state's name, else the kind's name
};

constexpr int8_t kNoField = -1;

struct KindSchema {
  Kind kind;
  TrackFamily family;
  NameRule naming;
  std::string_view fixed_name;  // kFixed
  // Offsets in the Start fields of what locates the event, kNoField where the kind has none.
  int8_t func_at, channel_at, peer_at, gpu_start_at, gpu_ready_at;
  const ArgSpec* args;  // after the common arguments (kCommonArgs), in the order written
  uint8_t nargs;
  bool gpu_facts;       // kGpuFacts follow its own arguments
};

// Every recorded kind's slice starts with these.
inline constexpr ArgSpec kCommonArgs[] = {
    {"id", ArgType::kUint, Presence::kAlways, ArgSource::kId},
    {"parent", ArgType::kUint, Presence::kWhenSet, ArgSource::kParent},
    {"comm", ArgType::kHex64, Presence::kAlways, ArgSource::kCommHash},
    {"rank", ArgType::kInt, Presence::kAlways, ArgSource::kRank},
    {"incomplete", ArgType::kBool, Presence::kWhenSet, ArgSource::kIncomplete},
    {"late", ArgType::kBool, Presence::kWhenSet, ArgSource::kLate},
};

// What converting GPU stamps to host times found; after the arguments of GPU slices.
inline constexpr ArgSpec kGpuFacts[] = {
    {"clamped", ArgType::kBool, Presence::kWhenSet, ArgSource::kClamped},
    {"gpu_stop_before_start", ArgType::kBool, Presence::kWhenSet, ArgSource::kStopBeforeStart},
    {"host_timed", ArgType::kBool, Presence::kWhenSet, ArgSource::kHostTimed},
};

namespace schema {

constexpr ArgSpec Field(std::string_view key, ArgType type, uint8_t at, uint8_t width) {
  return ArgSpec{key, type, Presence::kAlways, ArgSource::kField, at, width, 0};
}
constexpr ArgSpec Text(std::string_view key, uint8_t at) {
  return ArgSpec{key, ArgType::kString, Presence::kAlways, ArgSource::kFieldText, at, 4, 0};
}
constexpr ArgSpec Derived(std::string_view key, ArgType type, ArgSource source, Presence p = Presence::kAlways) {
  return ArgSpec{key, type, p, source, 0, 0, 0};
}
constexpr ArgSpec StateTime(std::string_view key, int32_t state) {
  return ArgSpec{key, ArgType::kTime, Presence::kWhenSet, ArgSource::kStateTime, 0, 0, state};
}

using spool::ApiFields;
using spool::CeBatchFields;
using spool::CollFields;
using spool::KernelChFields;
using spool::KernelStepFields;
using spool::NetPluginFields;
using spool::P2pFields;
using spool::ProxyOpFields;
using spool::ProxyStepFields;

constexpr ArgSpec kFuncArg = Derived("func", ArgType::kString, ArgSource::kFunc);
constexpr ArgSpec kGraphCapturedArg = Derived("graph_captured", ArgType::kBool, ArgSource::kGraphCaptured);
constexpr ArgSpec kGpuExtentArgs[] = {
    Derived("gpu_start", ArgType::kTime, ArgSource::kGpuExtentStart, Presence::kWhenSet),
    Derived("gpu_end", ArgType::kTime, ArgSource::kGpuExtentEnd, Presence::kWhenSet),
};

inline constexpr ArgSpec kGroupApiArgs[] = {
    Field("depth", ArgType::kInt, offsetof(spool::ApiFields, depth), 4),
    kGraphCapturedArg,
    StateTime("group_start_done", ncclProfilerGroupStartApiStop),
    StateTime("group_end_entered", ncclProfilerGroupEndApiStart),
};
inline constexpr ArgSpec kCollApiArgs[] = {
    kFuncArg,
    Field("count", ArgType::kUint, offsetof(spool::ApiFields, count), 8),
    Text("datatype", offsetof(spool::ApiFields, datatype)),
    Field("root", ArgType::kInt, offsetof(spool::ApiFields, root), 4),
    kGraphCapturedArg,
};
inline constexpr ArgSpec kP2pApiArgs[] = {
    kFuncArg,
    Field("count", ArgType::kUint, offsetof(spool::ApiFields, count), 8),
    Text("datatype", offsetof(spool::ApiFields, datatype)),
    kGraphCapturedArg,
};
inline constexpr ArgSpec kCollArgs[] = {
    kFuncArg,
    Field("count", ArgType::kUint, offsetof(spool::CollFields, count), 8),
    Text("datatype", offsetof(spool::CollFields, datatype)),
    Derived("bytes", ArgType::kUint, ArgSource::kPayloadBytes),
    Field("seq", ArgType::kUint, offsetof(spool::CollFields, seq), 8),
    Field("root", ArgType::kInt, offsetof(spool::CollFields, root), 4),
    Text("algo", offsetof(spool::CollFields, algo)),
    Text("proto", offsetof(spool::CollFields, proto)),
    Field("warps", ArgType::kInt, offsetof(spool::CollFields, nwarps), 1),
    Field("channels", ArgType::kInt, offsetof(spool::CollFields, nchannels), 1),
    kGpuExtentArgs[0],
    kGpuExtentArgs[1],
};
inline constexpr ArgSpec kCeCollArgs[] = {
    kFuncArg,
    Field("count", ArgType::kUint, offsetof(spool::CollFields, count), 8),
    Text("datatype", offsetof(spool::CollFields, datatype)),
    Derived("bytes", ArgType::kUint, ArgSource::kPayloadBytes),
    Field("seq", ArgType::kUint, offsetof(spool::CollFields, seq), 8),
    Field("root", ArgType::kInt, offsetof(spool::CollFields, root), 4),
    Field("channels", ArgType::kInt, offsetof(spool::CollFields, nchannels), 1),
};
inline constexpr ArgSpec kP2pArgs[] = {
    kFuncArg,
    Field("count", ArgType::kUint, offsetof(spool::P2pFields, count), 8),
    Text("datatype", offsetof(spool::P2pFields, datatype)),
    Derived("bytes", ArgType::kUint, ArgSource::kPayloadBytes),
    Field("peer", ArgType::kInt, offsetof(spool::P2pFields, peer), 4),
    Field("channels", ArgType::kInt, offsetof(spool::P2pFields, nchannels), 1),
    kGpuExtentArgs[0],
    kGpuExtentArgs[1],
};
inline constexpr ArgSpec kProxyOpArgs[] = {
    Field("channel", ArgType::kInt, offsetof(spool::ProxyOpFields, channel), 1),
    Field("peer", ArgType::kInt, offsetof(spool::ProxyOpFields, peer), 4),
    Field("steps", ArgType::kInt, offsetof(spool::ProxyOpFields, nsteps), 4),
    Field("chunk_size", ArgType::kInt, offsetof(spool::ProxyOpFields, chunk_size), 4),
    Derived("send", ArgType::kBool, ArgSource::kSend),
    Derived("in_progress", ArgType::kTime, ArgSource::kFirstStateTime, Presence::kWhenSet),
};
inline constexpr ArgSpec kProxyStepArgs[] = {
    Field("step", ArgType::kInt, offsetof(spool::ProxyStepFields, step), 4),
    Derived("trans_size", ArgType::kUint, ArgSource::kStateValue),
};
inline constexpr ArgSpec kProxyCtrlArgs[] = {
    Derived("appended", ArgType::kInt, ArgSource::kStateValue),
};
inline constexpr ArgSpec kKernelChArgs[] = {
    Field("channel", ArgType::kInt, offsetof(spool::KernelChFields, channel), 1),
    Derived("gpu_start_ns", ArgType::kUint, ArgSource::kGpuStart, Presence::kWhenSet),
    Derived("gpu_stop_ns", ArgType::kUint, ArgSource::kGpuStop, Presence::kWhenSet),
};
inline constexpr ArgSpec kNetPluginArgs[] = {
    Field("net_id", ArgType::kUint, offsetof(spool::NetPluginFields, net_id), 8),
    Derived("updates", ArgType::kInt, ArgSource::kUpdates),
};
inline constexpr ArgSpec kCeBatchArgs[] = {
    Field("ops", ArgType::kInt, offsetof(spool::CeBatchFields, ops), 4),
    Field("bytes", ArgType::kUint, offsetof(spool::CeBatchFields, bytes), 8),
};
inline constexpr ArgSpec kKernelStepArgs[] = {
    Field("channel", ArgType::kInt, offsetof(spool::KernelStepFields, channel), 1),
    Derived("send", ArgType::kBool, ArgSource::kSend),
    Field("peer", ArgType::kInt, offsetof(spool::KernelStepFields, peer), 4),
    Field("step", ArgType::kInt, offsetof(spool::KernelStepFields, step), 4),
    Field("size", ArgType::kUint, offsetof(spool::KernelStepFields, size), 4),
    Derived("gpu_start_ns", ArgType::kUint, ArgSource::kGpuStart),
    Derived("gpu_ready_ns", ArgType::kUint, ArgSource::kGpuReady),
    Derived("gpu_stop_ns", ArgType::kUint, ArgSource::kGpuStop, Presence::kWhenSet),
    Derived("abandoned", ArgType::kBool, ArgSource::kAbandoned, Presence::kWhenSet),
};

template <size_t N>
constexpr uint8_t Count(const ArgSpec (&)[N]) {
  return static_cast<uint8_t>(N);
}

}  // namespace schema

#define KATRACE_KIND_ARGS(list) schema::list, schema::Count(schema::list)
// A field offset as the schema entries hold it (kNoField is -1).
constexpr int8_t FieldAt(size_t at) { return static_cast<int8_t>(at); }

// One entry per kind, in Kind order (checked below).
inline constexpr KindSchema kKindSchema[] = {
    {Kind::kGroupApi, TrackFamily::kHostCalls, NameRule::kFixed, "Group", kNoField, kNoField, kNoField, kNoField,
     kNoField, KATRACE_KIND_ARGS(kGroupApiArgs), false},
    {Kind::kCollApi, TrackFamily::kHostCalls, NameRule::kFunc, {}, FieldAt(offsetof(spool::ApiFields, func)),
     kNoField, kNoField, kNoField, kNoField, KATRACE_KIND_ARGS(kCollApiArgs), false},
    {Kind::kP2pApi, TrackFamily::kHostCalls, NameRule::kFunc, {}, FieldAt(offsetof(spool::ApiFields, func)),
     kNoField, kNoField, kNoField, kNoField, KATRACE_KIND_ARGS(kP2pApiArgs), false},
    {Kind::kKernelLaunch, TrackFamily::kHostCalls, NameRule::kFixed, "KernelLaunch", kNoField, kNoField, kNoField,
     kNoField, kNoField, nullptr, 0, false},
    {Kind::kGroup, TrackFamily::kHostCalls, NameRule::kFixed, "Group", kNoField, kNoField, kNoField, kNoField,
     kNoField, nullptr, 0, false},
    {Kind::kColl, TrackFamily::kHostTasks, NameRule::kFunc, {}, FieldAt(offsetof(spool::CollFields, func)),
     kNoField, kNoField, kNoField, kNoField, KATRACE_KIND_ARGS(kCollArgs), false},
    {Kind::kP2p, TrackFamily::kHostTasks, NameRule::kFunc, {}, FieldAt(offsetof(spool::P2pFields, func)),
     kNoField, FieldAt(offsetof(spool::P2pFields, peer)), kNoField, kNoField, KATRACE_KIND_ARGS(kP2pArgs), false},
    {Kind::kProxyOp, TrackFamily::kProxyOp, NameRule::kDirection, {}, kNoField,
     FieldAt(offsetof(spool::ProxyOpFields, channel)), FieldAt(offsetof(spool::ProxyOpFields, peer)), kNoField,
     kNoField, KATRACE_KIND_ARGS(kProxyOpArgs), false},
    {Kind::kProxyStep, TrackFamily::kProxyStep, NameRule::kStepDirection, {}, kNoField,
     FieldAt(offsetof(spool::ProxyStepFields, channel)), FieldAt(offsetof(spool::ProxyStepFields, peer)), kNoField,
     kNoField, KATRACE_KIND_ARGS(kProxyStepArgs), false},
    {Kind::kProxyCtrl, TrackFamily::kProxyCtrl, NameRule::kFirstState, {}, kNoField, kNoField, kNoField,
     kNoField, kNoField, KATRACE_KIND_ARGS(kProxyCtrlArgs), false},
    {Kind::kKernelCh, TrackFamily::kGpuChannel, NameRule::kFunc, {},
     FieldAt(offsetof(spool::KernelChFields, func)), FieldAt(offsetof(spool::KernelChFields, channel)), kNoField,
     FieldAt(offsetof(spool::KernelChFields, gpu_start)), kNoField, KATRACE_KIND_ARGS(kKernelChArgs), true},
    {Kind::kNetPlugin, TrackFamily::kNet, NameRule::kFixed, "NetPlugin", kNoField, kNoField, kNoField, kNoField,
     kNoField, KATRACE_KIND_ARGS(kNetPluginArgs), false},
    {Kind::kCeColl, TrackFamily::kHostTasks, NameRule::kFunc, {}, FieldAt(offsetof(spool::CollFields, func)),
     kNoField, kNoField, kNoField, kNoField, KATRACE_KIND_ARGS(kCeCollArgs), false},
    {Kind::kCeSync, TrackFamily::kHostCalls, NameRule::kFixed, "CeSync", kNoField, kNoField, kNoField, kNoField,
     kNoField, nullptr, 0, false},
    {Kind::kCeBatch, TrackFamily::kHostCalls, NameRule::kFixed, "CeBatch", kNoField, kNoField, kNoField, kNoField,
     kNoField, KATRACE_KIND_ARGS(kCeBatchArgs), false},
    {Kind::kKernelStep, TrackFamily::kGpuStep, NameRule::kDirection, {},
     FieldAt(offsetof(spool::KernelStepFields, func)), FieldAt(offsetof(spool::KernelStepFields, channel)),
     FieldAt(offsetof(spool::KernelStepFields, peer)), FieldAt(offsetof(spool::KernelStepFields, gpu_start)),
     FieldAt(offsetof(spool::KernelStepFields, gpu_ready)), KATRACE_KIND_ARGS(kKernelStepArgs), true},
};
#undef KATRACE_KIND_ARGS

constexpr bool KindSchemaInOrder() {
  for (int i = 0; i < kKindCount; ++i) {
    if (static_cast<int>(kKindSchema[i].kind) != i) return false;
  }
  return true;
}
static_assert(sizeof(kKindSchema) / sizeof(kKindSchema[0]) == kKindCount, "one kKindSchema entry per kind");
static_assert(KindSchemaInOrder(), "kKindSchema entries in Kind order");

// Every field an entry points at lies within its kind's Start fields.
constexpr bool FieldWithin(int kind, int at, int width) {
  return at == kNoField || (at >= 0 && at + width <= spool::kStartFieldsBytes[static_cast<size_t>(kind)]);
}
constexpr bool KindSchemaFieldsWithin() {
  for (int k = 0; k < kKindCount; ++k) {
    const KindSchema& s = kKindSchema[k];
    if (!FieldWithin(k, s.func_at, 4) || !FieldWithin(k, s.channel_at, 1) || !FieldWithin(k, s.peer_at, 4) ||
        !FieldWithin(k, s.gpu_start_at, 8) || !FieldWithin(k, s.gpu_ready_at, 8)) {
      return false;
    }
    for (int a = 0; a < s.nargs; ++a) {
      const ArgSpec& arg = s.args[a];
      const bool field = arg.source == ArgSource::kField || arg.source == ArgSource::kFieldText;
      if (field && (!FieldWithin(k, arg.at, arg.width) || (arg.width != 1 && arg.width != 4 && arg.width != 8))) {
        return false;
      }
    }
  }
  return true;
}
static_assert(KindSchemaFieldsWithin(), "every schema field lies within its kind's Start fields");

inline const KindSchema& SchemaOf(Kind k) { return kKindSchema[static_cast<int>(k)]; }

// Slices derived from a recorded event at export: their arguments name the event they belong to.
inline constexpr ArgSpec kCollGpuArgs[] = {
    schema::kFuncArg,
    {"coll", ArgType::kUint, Presence::kAlways, ArgSource::kOwner},
    {"comm", ArgType::kHex64, Presence::kAlways, ArgSource::kCommHash},
    {"rank", ArgType::kInt, Presence::kAlways, ArgSource::kRank},
    kGpuFacts[0],
    kGpuFacts[1],
};
inline constexpr ArgSpec kProxyStepStateArgs[] = {
    schema::Field("step", ArgType::kInt, offsetof(spool::ProxyStepFields, step), 4),
    {"proxy_step", ArgType::kUint, Presence::kAlways, ArgSource::kOwner},
};
inline constexpr ArgSpec kKernelStepPartArgs[] = {
    {"kernel_step", ArgType::kUint, Presence::kAlways, ArgSource::kOwner},
};

struct DerivedSchema {
  const char* name;  // as in kDerivedKinds
  const ArgSpec* args;
  uint8_t nargs;
};
inline constexpr DerivedSchema kDerivedSchema[] = {
    {"CollGpu", kCollGpuArgs, schema::Count(kCollGpuArgs)},
    {"KernelStepWait", kKernelStepPartArgs, schema::Count(kKernelStepPartArgs)},
    {"KernelStepTransfer", kKernelStepPartArgs, schema::Count(kKernelStepPartArgs)},
    {"ProxyStepState", kProxyStepStateArgs, schema::Count(kProxyStepStateArgs)},
};
static_assert(sizeof(kDerivedSchema) / sizeof(kDerivedSchema[0]) == sizeof(kDerivedKinds) / sizeof(kDerivedKinds[0]),
              "one kDerivedSchema entry per derived kind");

}  // namespace katrace

#endif  // KATRACE_KIND_SCHEMA_H_
