// NCCL's v4 adapter: no API events (GroupApi, CollApi, P2pApi, KernelLaunch return without
// writing the handle, as NCCL's adapter does), no v5+ states, Coll/P2p parented to the legacy
// Group through |parentGroup|, and v4's init argument order (commHash fourth).
#include "tools/sim/abi_adapters.h"
#include "tools/sim/descriptor_downgrade.h"

namespace katrace::sim {
namespace {

bool CopyDescriptor(const ncclProfilerEventDescr_v6_t& in, ncclProfilerEventDescr_v4_t* out) {
  if (!CopySharedDescriptorFields(in, out)) return false;
  // v4 has no API events: Coll/P2p hang under the legacy Group.
  if (in.type == ncclProfileColl) out->parentObj = in.coll.parentGroup;
  if (in.type == ncclProfileP2p) out->parentObj = in.p2p.parentGroup;
  return true;
}

class V4Adapter final : public ProfilerApi {
 public:
  explicit V4Adapter(const ncclProfiler_v4_t* table) : table_(table) {}

  const char* name() const override { return table_->name; }
  AbiVersion version() const override { return AbiVersion::kV4; }

  ncclResult_t Init(void** context, uint64_t comm_id, int* activation_mask, const char* comm_name,
                    int num_nodes, int num_ranks, int rank, ncclDebugLogger_t logger) override {
    return table_->init(context, activation_mask, comm_name, comm_id, num_nodes, num_ranks, rank,
                        logger);
  }

  ncclResult_t StartEvent(void* context, void** handle,
                          ncclProfilerEventDescr_v6_t* descr) override {
    ncclProfilerEventDescr_v4_t descr_v4;
    if (!CopyDescriptor(*descr, &descr_v4)) return ncclSuccess;
    return table_->startEvent(context, handle, &descr_v4);
  }

  ncclResult_t StopEvent(void* handle) override { return table_->stopEvent(handle); }

  ncclResult_t RecordEventState(void* handle, ncclProfilerEventState_v6_t state,
                                ncclProfilerEventStateArgs_v6_t* args) override {
    ncclProfilerEventStateArgs_v4_t args_v4;
    // InProgress has no args; GroupApi states 23/24, CE states and the KernelStep stop are v5+.
    if (!CopySharedStateArgs(static_cast<int>(state), args, &args_v4) &&
        static_cast<int>(state) != ncclProfilerProxyOpInProgress_v4) {
      return ncclSuccess;
    }
    return table_->recordEventState(handle, state, &args_v4);
  }

  ncclResult_t Finalize(void* context) override { return table_->finalize(context); }

 private:
  const ncclProfiler_v4_t* table_;
};

}  // namespace

std::unique_ptr<ProfilerApi> MakeV4Adapter(const ncclProfiler_v4_t* table) {
  return std::make_unique<V4Adapter>(table);
}

}  // namespace katrace::sim
