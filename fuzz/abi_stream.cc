// The call-sequence decoder of abi_stream.h. Each call is one opcode byte and its operands; a
// short input simply ends the sequence. What NCCL never does (calls on a finalized
// communicator, a stop on a handle of a finalized communicator) is never generated: those are
// the caller's bugs, not the plugin's.
#include "fuzz/abi_stream.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>
#include <vector>

#include "nccl_profiler/kernel_step.h"
#include "nccl_profiler/v4.h"
#include "nccl_profiler/v5.h"
#include "nccl_profiler/v6.h"

namespace katrace_fuzz {
namespace {

const ncclProfiler_v6_t* g_v6 = nullptr;
const ncclProfiler_v5_t* g_v5 = nullptr;
const ncclProfiler_v4_t* g_v4 = nullptr;

void QuietLogger(ncclDebugLogLevel, unsigned long, const char*, int, const char*, ...) {}

// Strings NCCL could hand over, plus NULL, an empty one and bytes that are not UTF-8.
const char* const kStrings[] = {nullptr,     "",          "AllReduce", "Send",   "ncclFloat32",
                                "Ring",      "Simple",    "LL128",     "MC",     "\xff\xfe\x80",
                                "a\"b\\c\n", "\xe2\x82",  "\xed\xa0\x80x"};

class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool empty() const { return p_ == end_; }
  uint8_t U8() { return p_ < end_ ? *p_++ : 0; }
  uint64_t U64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | U8();
    return v;
  }
  // Mostly small values, sometimes any 32 or 64 bits: the edges are where the bugs are.
  int64_t Number() {
    const uint8_t kind = U8();
    if (kind < 160) return kind % 16;
    if (kind < 224) return static_cast<int32_t>(U64());
    return static_cast<int64_t>(U64());
  }
  const char* Str() { return kStrings[U8() % (sizeof(kStrings) / sizeof(kStrings[0]))]; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

template <typename T>
T As(int64_t v) {
  return static_cast<T>(v);
}
#define SET(lvalue, value) (lvalue) = As<std::remove_reference_t<decltype(lvalue)>>(value)

// recordEventState called as NCCL's C code calls it, with a plain int state: an enum-typed
// argument could not hold 64 or values past 31 without undefined behaviour in this caller.
template <typename Args>
auto AsIntState(ncclResult_t (*fn)(void*, ncclProfilerEventState_t, Args*)) {
  return reinterpret_cast<ncclResult_t (*)(void*, int, Args*)>(fn);
}

// NCCL's activation mask: one process-global int whose address every init receives and which
// the plugin may keep and read for as long as the process lives (as NCCL's own
// ncclProfilerEventMask). A per-communicator copy here would hand the plugin a pointer into a
// temporary.
int g_event_mask = 0;

struct Comm {
  int version = 6;
  void* context = nullptr;
  std::vector<void*> handles;  // non-NULL results of startEvent
};

class Stream {
 public:
  explicit Stream(Bytes in) : in_(in) {}
  ~Stream() {
    for (Comm& c : comms_) Finalize(&c);
  }

  void Run() {
    // Bounded, so one input cannot run for minutes.
    for (int calls = 0; calls < 4096 && !in_.empty(); ++calls) {
      const uint8_t op = in_.U8();
      switch (op % 6) {
        case 0: Init(); break;
        case 1: Start(); break;
        case 2: Stop(); break;
        case 3:
        case 4: Record(); break;
        case 5: FinalizeOne(); break;
      }
    }
  }

 private:
  Comm* PickComm() {
    if (comms_.empty()) return nullptr;
    return &comms_[in_.U8() % comms_.size()];
  }

  // A handle this communicator returned, NULL, or garbage (small integers and raw 64 bits,
  // which a tagged-handle plugin must reject without touching memory).
  void* PickHandle(const Comm* c) {
    const uint8_t kind = in_.U8();
    if (kind < 200 && c != nullptr && !c->handles.empty()) {
      return c->handles[in_.U8() % c->handles.size()];
    }
    if (kind < 230) return nullptr;
    return reinterpret_cast<void*>(static_cast<uintptr_t>(in_.U8() < 128 ? in_.U8() : in_.U64()));
  }

  void Init() {
    if (comms_.size() >= 4) return;
    Comm c;
    const uint8_t v = in_.U8() % 3;
    c.version = v == 0 ? 6 : v == 1 ? 5 : 4;
    if ((c.version == 6 && g_v6 == nullptr) || (c.version == 5 && g_v5 == nullptr) ||
        (c.version == 4 && g_v4 == nullptr)) {
      return;
    }
    // The input sets the shared mask before each init, as a caller may (NCCL leaves it as the
    // last init wrote it).
    g_event_mask = static_cast<int>(in_.Number());
    const uint64_t comm_id = in_.U64();
    const char* name = in_.Str();
    const int nnodes = static_cast<int>(in_.Number());
    const int nranks = static_cast<int>(in_.Number());
    const int rank = static_cast<int>(in_.Number());
    ncclResult_t r;
    if (c.version == 6) {
      r = g_v6->init(&c.context, comm_id, &g_event_mask, name, nnodes, nranks, rank, QuietLogger);
    } else if (c.version == 5) {
      r = g_v5->init(&c.context, comm_id, &g_event_mask, name, nnodes, nranks, rank, QuietLogger);
    } else {
      r = g_v4->init(&c.context, &g_event_mask, name, comm_id, nnodes, nranks, rank, QuietLogger);
    }
    // A failed init leaves no context to finalize; a NULL one is still called, as NCCL would.
    if (r == ncclSuccess) comms_.push_back(c);
  }

  uint64_t PickType(int version) {
    const uint8_t k = in_.U8();
    if (k >= 240) return in_.U64();  // garbage type bits
    const int bits = version == 6 ? 16 : version == 5 ? 12 : 8;
    if (version == 6 && k % 17 == 16) return ncclProfileKernelStep;
    return uint64_t{1} << (k % bits);
  }

  template <typename D>
  void FillShared(D* d, Comm* c) {
    SET(d->type, PickType(c->version));
    d->parentObj = PickHandle(c);
    SET(d->rank, in_.Number());
    switch (d->type) {
      case ncclProfileColl:
        SET(d->coll.seqNumber, in_.Number());
        d->coll.func = in_.Str();
        d->coll.sendBuff = nullptr;
        d->coll.recvBuff = nullptr;
        SET(d->coll.count, in_.Number());
        SET(d->coll.root, in_.Number());
        d->coll.datatype = in_.Str();
        SET(d->coll.nChannels, in_.Number());
        SET(d->coll.nWarps, in_.Number());
        d->coll.algo = in_.Str();
        d->coll.proto = in_.Str();
        break;
      case ncclProfileP2p:
        d->p2p.func = in_.Str();
        d->p2p.buff = nullptr;
        d->p2p.datatype = in_.Str();
        SET(d->p2p.count, in_.Number());
        SET(d->p2p.peer, in_.Number());
        SET(d->p2p.nChannels, in_.Number());
        break;
      case ncclProfileProxyOp:
        SET(d->proxyOp.pid, in_.Number());
        SET(d->proxyOp.channelId, in_.Number());
        SET(d->proxyOp.peer, in_.Number());
        SET(d->proxyOp.nSteps, in_.Number());
        SET(d->proxyOp.chunkSize, in_.Number());
        SET(d->proxyOp.isSend, in_.Number());
        break;
      case ncclProfileProxyStep: SET(d->proxyStep.step, in_.Number()); break;
      case ncclProfileKernelCh:
        SET(d->kernelCh.channelId, in_.Number());
        SET(d->kernelCh.pTimer, in_.Number());
        break;
      case ncclProfileNetPlugin:
        SET(d->netPlugin.id, in_.Number());
        d->netPlugin.data = nullptr;  // NCCL's net plugin owns what this points to
        break;
      default: break;
    }
  }

  template <typename D>
  void FillApi(D* d, Comm* c) {
    switch (d->type) {
      case ncclProfileColl: d->coll.parentGroup = PickHandle(c); break;
      case ncclProfileP2p: d->p2p.parentGroup = PickHandle(c); break;
      case ncclProfileGroupApi:
        SET(d->groupApi.graphCaptured, in_.U8() & 1);
        SET(d->groupApi.groupDepth, in_.Number());
        break;
      case ncclProfileCollApi:
        d->collApi.func = in_.Str();
        SET(d->collApi.count, in_.Number());
        d->collApi.datatype = in_.Str();
        SET(d->collApi.root, in_.Number());
        d->collApi.stream = reinterpret_cast<void*>(static_cast<uintptr_t>(in_.U8()));
        SET(d->collApi.graphCaptured, in_.U8() & 1);
        break;
      case ncclProfileP2pApi:
        d->p2pApi.func = in_.Str();
        SET(d->p2pApi.count, in_.Number());
        d->p2pApi.datatype = in_.Str();
        d->p2pApi.stream = reinterpret_cast<void*>(static_cast<uintptr_t>(in_.U8()));
        SET(d->p2pApi.graphCaptured, in_.U8() & 1);
        break;
      case ncclProfileKernelLaunch:
        d->kernelLaunch.stream = reinterpret_cast<void*>(static_cast<uintptr_t>(in_.U8()));
        break;
      default: break;
    }
  }

  void Start() {
    Comm* c = PickComm();
    void* context = c != nullptr && in_.U8() < 240 ? c->context : nullptr;
    void* handle = nullptr;
    void** handle_out = in_.U8() < 250 ? &handle : nullptr;
    const bool null_descr = in_.U8() >= 250;
    if (c == nullptr) return;
    if (c->version == 6) {
      ncclProfilerEventDescr_v6_t d;
      memset(&d, 0, sizeof(d));
      FillShared(&d, c);
      FillApi(&d, c);
      if (d.type == ncclProfileKernelStep) {
        SET(d.kernelStep.channelId, in_.Number());
        SET(d.kernelStep.isSend, in_.Number());
        SET(d.kernelStep.peer, in_.Number());
        SET(d.kernelStep.step, in_.Number());
        SET(d.kernelStep.size, in_.Number());
        SET(d.kernelStep.startTs, in_.Number());
        SET(d.kernelStep.readyTs, in_.Number());
      }
      g_v6->startEvent(context, handle_out, null_descr ? nullptr : &d);
    } else if (c->version == 5) {
      ncclProfilerEventDescr_v5_t d;
      memset(&d, 0, sizeof(d));
      FillShared(&d, c);
      FillApi(&d, c);
      g_v5->startEvent(context, handle_out, null_descr ? nullptr : &d);
    } else {
      ncclProfilerEventDescr_v4_t d;
      memset(&d, 0, sizeof(d));
      FillShared(&d, c);
      g_v4->startEvent(context, handle_out, null_descr ? nullptr : &d);
    }
    if (handle != nullptr && c->handles.size() < 256) c->handles.push_back(handle);
  }

  void Stop() {
    Comm* c = PickComm();
    void* handle = PickHandle(c);
    if (c == nullptr) return;
    // The core is shared by the three tables; stop through the communicator's own version.
    if (c->version == 6) g_v6->stopEvent(handle);
    if (c->version == 5) g_v5->stopEvent(handle);
    if (c->version == 4) g_v4->stopEvent(handle);
  }

  void Record() {
    Comm* c = PickComm();
    void* handle = PickHandle(c);
    // States as NCCL passes them: an int, including katrace's 64 and values past 31.
    const uint8_t k = in_.U8();
    const int state = k < 200 ? k % 32 : k < 230 ? KATRACE_KERNEL_STEP_STOP_STATE
                                                 : static_cast<int>(in_.Number());
    const bool null_args = in_.U8() >= 200;
    if (c == nullptr) return;
    ncclProfilerEventStateArgs_v6_t args6;
    memset(&args6, 0, sizeof(args6));
    const uint64_t value = static_cast<uint64_t>(in_.Number());
    // netPlugin.data shares the union's first word: a pointer NCCL owns, so never garbage.
    if (state != ncclProfilerNetPluginUpdate) memcpy(&args6, &value, sizeof(value));
    if (c->version == 6) {
      AsIntState(g_v6->recordEventState)(handle, state, null_args ? nullptr : &args6);
    } else if (c->version == 5) {
      ncclProfilerEventStateArgs_v5_t args;
      memset(&args, 0, sizeof(args));
      memcpy(&args, &args6, sizeof(value));
      AsIntState(g_v5->recordEventState)(handle, state, null_args ? nullptr : &args);
    } else {
      ncclProfilerEventStateArgs_v4_t args;
      memset(&args, 0, sizeof(args));
      memcpy(&args, &args6, sizeof(value));
      AsIntState(g_v4->recordEventState)(handle, state, null_args ? nullptr : &args);
    }
  }

  void Finalize(Comm* c) {
    if (c->version == 6) g_v6->finalize(c->context);
    if (c->version == 5) g_v5->finalize(c->context);
    if (c->version == 4) g_v4->finalize(c->context);
  }

  void FinalizeOne() {
    if (comms_.empty()) return;
    const size_t i = in_.U8() % comms_.size();
    Finalize(&comms_[i]);
    comms_.erase(comms_.begin() + static_cast<std::ptrdiff_t>(i));
  }

  Bytes in_;
  std::vector<Comm> comms_;
};

}  // namespace

bool LoadPlugin(const std::string& so_path, std::string* error) {
  if (g_v6 != nullptr || g_v5 != nullptr || g_v4 != nullptr) return true;
  if (getenv("KATRACE_OUTPUT") == nullptr) {
    char dir[] = "/tmp/katrace-fuzz-XXXXXX";
    if (mkdtemp(dir) == nullptr) {
      *error = "cannot make a temporary folder";
      return false;
    }
    setenv("KATRACE_OUTPUT", (std::string(dir) + "/trace-{pid}.json").c_str(), 1);
  }
  setenv("KATRACE_SUMMARY", "0", 0);
  void* so = dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (so == nullptr) {
    *error = dlerror();
    return false;
  }
  g_v6 = static_cast<const ncclProfiler_v6_t*>(dlsym(so, "ncclProfiler_v6"));
  g_v5 = static_cast<const ncclProfiler_v5_t*>(dlsym(so, "ncclProfiler_v5"));
  g_v4 = static_cast<const ncclProfiler_v4_t*>(dlsym(so, "ncclProfiler_v4"));
  if (g_v6 == nullptr && g_v5 == nullptr && g_v4 == nullptr) {
    *error = so_path + " exports no ncclProfiler_v4/v5/v6";
    return false;
  }
  return true;
}

void RunAbiStream(const uint8_t* data, size_t size) {
  Stream stream(Bytes(data, size));
  stream.Run();
}

}  // namespace katrace_fuzz
