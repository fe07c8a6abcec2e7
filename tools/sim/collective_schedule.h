// What one operation (ring AllReduce, AllGather, ReduceScatter, Send/Recv, AlltoAll) looks like
// from one rank: the NCCL API calls the application makes, the tasks they become, the channels
// each task runs on and the ProxyOps (channel × peer × direction) with their network steps.
// Pure functions; no threads.
#ifndef KATRACE_TOOLS_SIM_COLLECTIVE_SCHEDULE_H_
#define KATRACE_TOOLS_SIM_COLLECTIVE_SCHEDULE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace katrace::sim {

enum class OpKind { kAllReduce, kAllGather, kReduceScatter, kSendRecv, kAlltoAll };

const char* OpKindName(OpKind kind);  // "allreduce", ... (the --ops spelling)
std::optional<OpKind> ParseOpKind(const std::string& text);

// NCCL moves SIMPLE-protocol ring data in 512 KiB steps, two steps per network transfer.
inline constexpr size_t kRingTransferBytes = 1 << 20;
inline constexpr size_t kP2pChunkBytes = 512 << 10;
inline constexpr int kMaxP2pChannelsPerPeer = 2;

struct ProxyOpSpec {
  int channel = 0;
  int peer = 0;
  bool is_send = false;
  int num_steps = 0;       // network transfers (ProxyStep events)
  int chunk_size = 0;      // bytes per transfer, as NCCL reports it
  size_t step_bytes = 0;   // bytes moved by every transfer but the last
  size_t last_step_bytes = 0;
};

// One NCCL API call and the task it becomes (one Coll or P2p event).
struct TaskSpec {
  bool is_coll = true;
  // What the application passed (CollApi/P2pApi descriptor).
  const char* api_func = "";
  size_t api_count = 0;
  const char* api_datatype = "ncclFloat32";
  int root = 0;
  int peer = -1;
  // What the task carries (Coll/P2p descriptor): AllGather is counted in bytes as ncclInt8.
  const char* task_func = "";
  size_t task_count = 0;
  const char* task_datatype = "ncclFloat32";
  std::vector<int> channels;
  std::vector<ProxyOpSpec> proxy_ops;
  // P2p tasks with the same pair id run fused on the GPU and share one work counter bump per
  // channel; 0 for collectives.
  int pair_id = 0;
};

struct OpSchedule {
  OpKind kind = OpKind::kAllReduce;
  bool user_group = false;  // the application wraps the calls in ncclGroupStart/End
  std::vector<TaskSpec> tasks;
  uint64_t wire_bytes = 0;  // bytes this rank sends, to size the kernel
};

OpSchedule BuildOpSchedule(OpKind kind, int rank, int num_ranks, int num_channels,
                           size_t size_bytes);

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_COLLECTIVE_SCHEDULE_H_
