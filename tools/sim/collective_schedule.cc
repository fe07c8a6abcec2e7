#include "tools/sim/collective_schedule.h"

#include <algorithm>

namespace katrace::sim {
namespace {

constexpr size_t kFloatBytes = 4;
// Below this many bytes per channel NCCL's tuner uses fewer channels.
constexpr size_t kMinBytesPerChannel = 32 << 10;

size_t DivUp(size_t a, size_t b) { return (a + b - 1) / b; }

int RingChannels(size_t size_bytes, int num_channels) {
  size_t wanted = std::max<size_t>(1, DivUp(size_bytes, kMinBytesPerChannel));
  return static_cast<int>(std::min<size_t>(wanted, static_cast<size_t>(num_channels)));
}

// A ring collective: per channel, send to the next rank and receive from the previous one,
// |rounds_per_loop| transfers per loop over this channel's slice of the buffer.
TaskSpec RingTask(int rank, int num_ranks, int num_channels, size_t size_bytes,
                  int rounds_per_loop) {
  TaskSpec task;
  int channels = RingChannels(size_bytes, num_channels);
  size_t per_channel = DivUp(size_bytes, static_cast<size_t>(channels));
  size_t per_rank_chunk = std::max<size_t>(1, DivUp(per_channel, static_cast<size_t>(num_ranks)));
  size_t step_bytes = std::min(per_rank_chunk, kRingTransferBytes);
  size_t loops = DivUp(per_rank_chunk, step_bytes);
  size_t last_loop_bytes = per_rank_chunk - (loops - 1) * step_bytes;
  int num_steps = static_cast<int>(loops) * rounds_per_loop;
  for (int c = 0; c < channels; ++c) {
    task.channels.push_back(c);
    for (int direction = 0; direction < 2; ++direction) {
      ProxyOpSpec op;
      op.channel = c;
      op.is_send = direction == 0;
      op.peer = op.is_send ? (rank + 1) % num_ranks : (rank + num_ranks - 1) % num_ranks;
      op.num_steps = num_steps;
      op.chunk_size = static_cast<int>(step_bytes);
      op.step_bytes = step_bytes;
      op.last_step_bytes = last_loop_bytes;
      task.proxy_ops.push_back(op);
    }
  }
  return task;
}

// Channels for the peer |delta| ranks away: NCCL spreads peers over channels, a few per peer.
std::vector<int> P2pChannels(int delta, int num_channels) {
  int per_peer = std::min(kMaxP2pChannelsPerPeer, num_channels);
  std::vector<int> channels;
  for (int k = 0; k < per_peer; ++k) channels.push_back((delta * per_peer + k) % num_channels);
  std::sort(channels.begin(), channels.end());
  channels.erase(std::unique(channels.begin(), channels.end()), channels.end());
  return channels;
}

TaskSpec P2pTask(bool is_send, int peer, int pair_id, size_t bytes, int delta, int num_channels) {
  TaskSpec task;
  task.is_coll = false;
  task.api_func = is_send ? "Send" : "Recv";
  task.task_func = task.api_func;
  task.api_count = bytes / kFloatBytes;
  task.task_count = task.api_count;
  task.peer = peer;
  task.pair_id = pair_id;
  task.channels = P2pChannels(delta, num_channels);
  size_t per_channel = std::max<size_t>(1, DivUp(bytes, task.channels.size()));
  size_t step_bytes = std::min(per_channel, kP2pChunkBytes);
  size_t steps = DivUp(per_channel, step_bytes);
  for (int c : task.channels) {
    ProxyOpSpec op;
    op.channel = c;
    op.peer = peer;
    op.is_send = is_send;
    op.num_steps = static_cast<int>(steps);
    op.chunk_size = static_cast<int>(step_bytes);
    op.step_bytes = step_bytes;
    op.last_step_bytes = per_channel - (steps - 1) * step_bytes;
    task.proxy_ops.push_back(op);
  }
  return task;
}

}  // namespace

const char* OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kAllReduce:
      return "allreduce";
    case OpKind::kAllGather:
      return "allgather";
    case OpKind::kReduceScatter:
      return "reducescatter";
    case OpKind::kSendRecv:
      return "sendrecv";
    case OpKind::kAlltoAll:
      return "alltoall";
  }
  return "";
}

std::optional<OpKind> ParseOpKind(const std::string& text) {
  for (OpKind kind : {OpKind::kAllReduce, OpKind::kAllGather, OpKind::kReduceScatter,
                      OpKind::kSendRecv, OpKind::kAlltoAll}) {
    if (text == OpKindName(kind)) return kind;
  }
  return std::nullopt;
}

OpSchedule BuildOpSchedule(OpKind kind, int rank, int num_ranks, int num_channels,
                           size_t size_bytes) {
  OpSchedule schedule;
  schedule.kind = kind;
  size_t n = static_cast<size_t>(num_ranks);
  switch (kind) {
    case OpKind::kAllReduce: {
      TaskSpec task = RingTask(rank, num_ranks, num_channels, size_bytes, 2 * (num_ranks - 1));
      task.api_func = task.task_func = "AllReduce";
      task.api_count = task.task_count = size_bytes / kFloatBytes;
      schedule.tasks.push_back(task);
      schedule.wire_bytes = 2 * (n - 1) * size_bytes / n;
      break;
    }
    case OpKind::kAllGather: {
      // |size_bytes| is the gathered result, as nccl-tests counts it.
      TaskSpec task = RingTask(rank, num_ranks, num_channels, size_bytes, num_ranks - 1);
      task.api_func = task.task_func = "AllGather";
      task.api_count = size_bytes / n / kFloatBytes;
      task.task_count = task.api_count * kFloatBytes;
      task.task_datatype = "ncclInt8";
      schedule.tasks.push_back(task);
      schedule.wire_bytes = (n - 1) * size_bytes / n;
      break;
    }
    case OpKind::kReduceScatter: {
      TaskSpec task = RingTask(rank, num_ranks, num_channels, size_bytes, num_ranks - 1);
      task.api_func = task.task_func = "ReduceScatter";
      task.api_count = task.task_count = size_bytes / n / kFloatBytes;
      schedule.tasks.push_back(task);
      schedule.wire_bytes = (n - 1) * size_bytes / n;
      break;
    }
    case OpKind::kSendRecv: {
      schedule.user_group = true;
      int next = (rank + 1) % num_ranks;
      int prev = (rank + num_ranks - 1) % num_ranks;
      schedule.tasks.push_back(P2pTask(true, next, 1, size_bytes, 1, num_channels));
      schedule.tasks.push_back(P2pTask(false, prev, 1, size_bytes, 1, num_channels));
      schedule.wire_bytes = size_bytes;
      break;
    }
    case OpKind::kAlltoAll: {
      schedule.user_group = true;
      size_t per_peer = size_bytes / n;
      for (int delta = 1; delta < num_ranks; ++delta) {
        int to = (rank + delta) % num_ranks;
        int from = (rank + num_ranks - delta) % num_ranks;
        schedule.tasks.push_back(P2pTask(true, to, delta, per_peer, delta, num_channels));
        schedule.tasks.push_back(P2pTask(false, from, delta, per_peer, delta, num_channels));
      }
      schedule.wire_bytes = (n - 1) * per_peer;
      break;
    }
  }
  return schedule;
}

}  // namespace katrace::sim
