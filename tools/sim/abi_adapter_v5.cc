// NCCL's v5 adapter (2.29+ core driving a v5-only plugin): copy each v5 field by name, drop the
// copy-engine events (and katrace's KernelStep, which v5 does not know) with a NULL handle, drop
// their states, and clear their bits from the shared mask after init.
#include "tools/sim/abi_adapters.h"
#include "tools/sim/descriptor_downgrade.h"

namespace katrace::sim {
namespace {

constexpr int kBitsUnknownToV5 =
    ncclProfileCeColl | ncclProfileCeSync | ncclProfileCeBatch | ncclProfileKernelStep;

// Returns false when v5 has no such event; the caller then returns without calling the plugin.
bool CopyDescriptor(const ncclProfilerEventDescr_v6_t& in, ncclProfilerEventDescr_v5_t* out) {
  if (CopySharedDescriptorFields(in, out)) {
    if (in.type == ncclProfileColl) out->coll.parentGroup = in.coll.parentGroup;
    if (in.type == ncclProfileP2p) out->p2p.parentGroup = in.p2p.parentGroup;
    return true;
  }
  switch (in.type) {
    case ncclProfileGroupApi:
      out->groupApi.graphCaptured = in.groupApi.graphCaptured;
      out->groupApi.groupDepth = in.groupApi.groupDepth;
      return true;
    case ncclProfileCollApi:
      out->collApi.func = in.collApi.func;
      out->collApi.count = in.collApi.count;
      out->collApi.datatype = in.collApi.datatype;
      out->collApi.root = in.collApi.root;
      out->collApi.stream = in.collApi.stream;
      out->collApi.graphCaptured = in.collApi.graphCaptured;
      return true;
    case ncclProfileP2pApi:
      out->p2pApi.func = in.p2pApi.func;
      out->p2pApi.count = in.p2pApi.count;
      out->p2pApi.datatype = in.p2pApi.datatype;
      out->p2pApi.stream = in.p2pApi.stream;
      out->p2pApi.graphCaptured = in.p2pApi.graphCaptured;
      return true;
    case ncclProfileKernelLaunch:
      out->kernelLaunch.stream = in.kernelLaunch.stream;
      return true;
    default:
      return false;
  }
}

class V5Adapter final : public ProfilerApi {
 public:
  explicit V5Adapter(const ncclProfiler_v5_t* table) : table_(table) {}

  const char* name() const override { return table_->name; }
  AbiVersion version() const override { return AbiVersion::kV5; }

  ncclResult_t Init(void** context, uint64_t comm_id, int* activation_mask, const char* comm_name,
                    int num_nodes, int num_ranks, int rank, ncclDebugLogger_t logger) override {
    ncclResult_t result = table_->init(context, comm_id, activation_mask, comm_name, num_nodes,
                                       num_ranks, rank, logger);
    if (result != ncclSuccess) return result;
    // Atomic because other ranks may already be loading the mask on their application threads.
    if (activation_mask != nullptr) {
      __atomic_fetch_and(activation_mask, ~kBitsUnknownToV5, __ATOMIC_RELAXED);
    }
    return ncclSuccess;
  }

  ncclResult_t StartEvent(void* context, void** handle,
                          ncclProfilerEventDescr_v6_t* descr) override {
    if (descr->type & kBitsUnknownToV5) {
      *handle = nullptr;
      return ncclSuccess;
    }
    ncclProfilerEventDescr_v5_t descr_v5;
    // NCCL's adapter returns without touching *handle for a type it does not know.
    if (!CopyDescriptor(*descr, &descr_v5)) return ncclSuccess;
    return table_->startEvent(context, handle, &descr_v5);
  }

  ncclResult_t StopEvent(void* handle) override { return table_->stopEvent(handle); }

  ncclResult_t RecordEventState(void* handle, ncclProfilerEventState_v6_t state,
                                ncclProfilerEventStateArgs_v6_t* args) override {
    ncclProfilerEventStateArgs_v5_t args_v5;
    // NCCL hands the plugin its local copy even when the core passed NULL (GroupApi states).
    const int s = static_cast<int>(state);
    if (!CopySharedStateArgs(s, args, &args_v5) && s != ncclProfilerProxyOpInProgress_v4 &&
        s != ncclProfilerGroupStartApiStop && s != ncclProfilerGroupEndApiStart) {
      return ncclSuccess;  // CE states 25-30, the KernelStep stop, anything newer
    }
    return table_->recordEventState(handle, state, &args_v5);
  }

  ncclResult_t Finalize(void* context) override { return table_->finalize(context); }

 private:
  const ncclProfiler_v5_t* table_;
};

}  // namespace

std::unique_ptr<ProfilerApi> MakeV5Adapter(const ncclProfiler_v5_t* table) {
  return std::make_unique<V5Adapter>(table);
}

}  // namespace katrace::sim
