// The Start record of an event: the common body plus the fields of its kind, taken from NCCL's
// descriptor (strings interned) and from what the event inherited from its parent.
#ifndef KATRACE_PLUGIN_CAPTURE_START_RECORD_H_
#define KATRACE_PLUGIN_CAPTURE_START_RECORD_H_

#include <stdint.h>

#include "katrace/event_kinds.h"
#include "katrace/spool_format.h"
#include "nccl_profiler/v6.h"
#include "plugin/capture/record_appender.h"
#include "plugin/capture/string_table.h"
#include "plugin/capture/thread_buffer.h"

namespace katrace {

// Where a callback's records go.
struct CaptureTarget {
  ThreadBuffer* buffer;
  const AppendPolicy* policy;
  StringTable* strings;
};

// What a child copies from its parent at start.
struct InheritedFacts {
  uint32_t func;     // KernelCh, KernelStep: the Coll/P2p's func; Coll, P2p: its own, already interned
  int32_t peer;      // ProxyStep: the ProxyOp's peer
  uint8_t channel;   // ProxyStep
  uint8_t direction; // ProxyStep: 0 unknown, 1 send, 2 recv
};

// The id of |text| from the shared table, remembered in the thread's buffer; the first use in
// the capture writes the String record (out of line: once per string and thread).
uint32_t InternStringFirstTime(const CaptureTarget& t, const char* text);

// The id of |text| in this capture (0 for none); the first use writes a String record, which is
// never dropped while the writer runs since every event that names the string needs it. A
// string this thread has used before costs a load and a compare.
inline uint32_t InternString(const CaptureTarget& t, const char* text) {
  uint32_t id = 0;
  if (__builtin_expect(t.buffer != nullptr && t.buffer->strings.Find(text, &id), 1)) return id;
  return InternStringFirstTime(t, text);
}

// A Start record of |kind| with |Fields|, which |fill| (called as fill(Fields&)) writes in place.
// Strings are interned before it is called, since a first use appends a String record.
template <typename Fields, typename Fill>
__attribute__((always_inline)) inline bool AppendStart(const CaptureTarget& t, int kind, uint16_t context,
                                                       uint16_t flags, const spool::StartBody& start, Fill&& fill) {
  return AppendRecordInPlace<StartRecord<Fields>>(
      t.buffer, *t.policy, spool::RecordType::kStart, kind, context, flags,
      [&](StartRecord<Fields>& r) __attribute__((always_inline)) {
        r.start.id = start.id;
        r.start.parent_id = start.parent_id;
        r.start.ticks = start.ticks;
        fill(r.fields);
      });
}

// False when the record was dropped (counted by the policy). Inline, so that a caller that knows
// the kind at compile time builds its record without a dispatch.
__attribute__((always_inline)) inline bool RecordStart(const CaptureTarget& t, Kind kind, uint16_t context, uint16_t flags,
                                                       const spool::StartBody& start,
                                                       const ncclProfilerEventDescr_v6_t* d, const InheritedFacts& slot) {
  const int k = static_cast<int>(kind);
  switch (kind) {
    case Kind::kColl: {
      const uint32_t datatype = InternString(t, d->coll.datatype);
      const uint32_t algo = InternString(t, d->coll.algo);
      const uint32_t proto = InternString(t, d->coll.proto);
      return AppendStart<spool::CollFields>(t, k, context, flags, start, [&](spool::CollFields& f) {
        f.seq = d->coll.seqNumber;
        f.count = d->coll.count;
        f.func = slot.func;  // interned by the caller, which keeps it for the children
        f.datatype = datatype;
        f.algo = algo;
        f.proto = proto;
        f.root = d->coll.root;
        f.nchannels = d->coll.nChannels;
        f.nwarps = d->coll.nWarps;
      });
    }
    case Kind::kCeColl: {
      const uint32_t func = InternString(t, d->ceColl.func);
      const uint32_t datatype = InternString(t, d->ceColl.datatype);
      return AppendStart<spool::CollFields>(t, k, context, flags, start, [&](spool::CollFields& f) {
        f.seq = d->ceColl.seqNumber;
        f.count = d->ceColl.count;
        f.func = func;
        f.datatype = datatype;
        f.root = d->ceColl.root;
      });
    }
    case Kind::kP2p: {
      const uint32_t datatype = InternString(t, d->p2p.datatype);
      return AppendStart<spool::P2pFields>(t, k, context, flags, start, [&](spool::P2pFields& f) {
        f.count = d->p2p.count;
        f.func = slot.func;
        f.datatype = datatype;
        f.peer = d->p2p.peer;
        f.nchannels = d->p2p.nChannels;
      });
    }
    case Kind::kGroupApi:
      return AppendStart<spool::ApiFields>(t, k, context, flags, start,
                                           [&](spool::ApiFields& f) { f.depth = d->groupApi.groupDepth; });
    case Kind::kCollApi: {
      const uint32_t func = InternString(t, d->collApi.func);
      const uint32_t datatype = InternString(t, d->collApi.datatype);
      return AppendStart<spool::ApiFields>(t, k, context, flags, start, [&](spool::ApiFields& f) {
        f.count = d->collApi.count;
        f.func = func;
        f.datatype = datatype;
        f.root = d->collApi.root;
      });
    }
    case Kind::kP2pApi: {
      const uint32_t func = InternString(t, d->p2pApi.func);
      const uint32_t datatype = InternString(t, d->p2pApi.datatype);
      return AppendStart<spool::ApiFields>(t, k, context, flags, start, [&](spool::ApiFields& f) {
        f.count = d->p2pApi.count;
        f.func = func;
        f.datatype = datatype;
      });
    }
    case Kind::kProxyOp:
      return AppendStart<spool::ProxyOpFields>(t, k, context, flags, start, [&](spool::ProxyOpFields& f) {
        f.peer = d->proxyOp.peer;
        f.nsteps = d->proxyOp.nSteps;
        f.chunk_size = d->proxyOp.chunkSize;
        f.channel = d->proxyOp.channelId;
      });
    case Kind::kProxyStep:
      return AppendStart<spool::ProxyStepFields>(t, k, context, flags, start, [&](spool::ProxyStepFields& f) {
        f.step = d->proxyStep.step;
        f.peer = slot.peer;
        f.channel = slot.channel;
        f.direction = slot.direction;
      });
    case Kind::kKernelCh:
      return AppendStart<spool::KernelChFields>(t, k, context, flags, start, [&](spool::KernelChFields& f) {
        f.gpu_start = d->kernelCh.pTimer;
        f.func = slot.func;
        f.channel = d->kernelCh.channelId;
      });
    case Kind::kKernelStep:
      return AppendStart<spool::KernelStepFields>(t, k, context, flags, start, [&](spool::KernelStepFields& f) {
        f.gpu_start = d->kernelStep.startTs;
        f.gpu_ready = d->kernelStep.readyTs;
        f.step = d->kernelStep.step;
        f.size = d->kernelStep.size;
        f.peer = d->kernelStep.peer;
        f.func = slot.func;
        f.channel = d->kernelStep.channelId;
      });
    case Kind::kNetPlugin:
      return AppendStart<spool::NetPluginFields>(t, k, context, flags, start,
                                                 [&](spool::NetPluginFields& f) { f.net_id = d->netPlugin.id; });
    case Kind::kCeBatch:
      return AppendStart<spool::CeBatchFields>(t, k, context, flags, start, [&](spool::CeBatchFields& f) {
        f.bytes = d->ceCollBatch.totalBytes;
        f.ops = static_cast<int32_t>(d->ceCollBatch.numOps);
      });
    default:  // KernelLaunch, Group, ProxyCtrl, CeSync: the common body says it all
      return AppendRecordInPlace<spool::StartBody>(t.buffer, *t.policy, spool::RecordType::kStart, k, context, flags,
                                                   [&](spool::StartBody& r) {
                                                     r.id = start.id;
                                                     r.parent_id = start.parent_id;
                                                     r.ticks = start.ticks;
                                                   });
  }
}

// Start flags from the descriptor: direction, graph capture.
__attribute__((always_inline)) inline uint16_t StartFlags(Kind kind, const ncclProfilerEventDescr_v6_t* d) {
  switch (kind) {
    case Kind::kGroupApi: return d->groupApi.graphCaptured ? spool::kStartGraphCaptured : 0;
    case Kind::kCollApi: return d->collApi.graphCaptured ? spool::kStartGraphCaptured : 0;
    case Kind::kP2pApi: return d->p2pApi.graphCaptured ? spool::kStartGraphCaptured : 0;
    case Kind::kProxyOp: return d->proxyOp.isSend ? spool::kStartSend : 0;
    case Kind::kKernelStep: return d->kernelStep.isSend ? spool::kStartSend : 0;
    default: return 0;
  }
}

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CAPTURE_START_RECORD_H_
