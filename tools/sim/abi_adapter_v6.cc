// v6 is the driver's own version: NCCL 2.29+ calls the plugin's table directly, no copying.
#include "tools/sim/abi_adapters.h"

namespace katrace::sim {
namespace {

class DirectV6Api final : public ProfilerApi {
 public:
  explicit DirectV6Api(const ncclProfiler_v6_t* table) : table_(table) {}

  const char* name() const override { return table_->name; }
  AbiVersion version() const override { return AbiVersion::kV6; }

  ncclResult_t Init(void** context, uint64_t comm_id, int* activation_mask, const char* comm_name,
                    int num_nodes, int num_ranks, int rank, ncclDebugLogger_t logger) override {
    return table_->init(context, comm_id, activation_mask, comm_name, num_nodes, num_ranks, rank,
                        logger);
  }
  ncclResult_t StartEvent(void* context, void** handle,
                          ncclProfilerEventDescr_v6_t* descr) override {
    return table_->startEvent(context, handle, descr);
  }
  ncclResult_t StopEvent(void* handle) override { return table_->stopEvent(handle); }
  ncclResult_t RecordEventState(void* handle, ncclProfilerEventState_v6_t state,
                                ncclProfilerEventStateArgs_v6_t* args) override {
    return table_->recordEventState(handle, state, args);
  }
  ncclResult_t Finalize(void* context) override { return table_->finalize(context); }

 private:
  const ncclProfiler_v6_t* table_;
};

}  // namespace

std::unique_ptr<ProfilerApi> MakeV6Api(const ncclProfiler_v6_t* table) {
  return std::make_unique<DirectV6Api>(table);
}

}  // namespace katrace::sim
