#include "tools/sim/net_proxy_op.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "tools/sim/event_mask.h"

namespace katrace::sim {
namespace {

// NetPlugin payload of NCCL's socket net plugin, version 1 (research §1.8): type
// ncclProfileSocket = 1, then {fd, op, length}; the plugin id is TYPE_SOCK (2 << 16) | version.
struct SocketNetEventV1 {
  uint8_t type;
  struct {
    int fd;
    int op;
    size_t length;
  } sock;
};
constexpr int64_t kSocketPluginId = (2 << 16) | 1;
constexpr uint8_t kProfileSocket = 1;
constexpr int kFirstFakeSocketFd = 100;

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

NetProxyOp::NetProxyOp(const ProxyOpWork& work, int rank, bool nccl_quirks, uint64_t seed)
    : work_(work), rank_(rank), nccl_quirks_(nccl_quirks), rng_state_(seed) {
  peer_wait_retries_left_ = DrawPeerWaitRetries();
}

int NetProxyOp::DrawPeerWaitRetries() {
  // About one transfer in three finds the peer not ready once or twice before isend succeeds.
  uint64_t draw = SplitMix64(&rng_state_) % 6;
  return draw < 4 ? 0 : static_cast<int>(draw - 3);
}

void NetProxyOp::Append(void* context, EventIssuer* issuer) {
  if ((work_.mask & kProxyOpStarters) == 0) return;
  ncclProfilerEventDescr_v6_t descr;
  std::memset(&descr, 0, sizeof(descr));
  descr.type = ncclProfileProxyOp;
  descr.parentObj = work_.task_handle;
  descr.rank = rank_;
  descr.proxyOp.pid = getpid();
  descr.proxyOp.channelId = static_cast<uint8_t>(work_.spec.channel);
  descr.proxyOp.peer = work_.spec.peer;
  descr.proxyOp.nSteps = work_.spec.num_steps;
  descr.proxyOp.chunkSize = work_.spec.chunk_size;
  descr.proxyOp.isSend = work_.spec.is_send ? 1 : 0;
  issuer->Start(context, &op_handle_, &descr);
}

size_t NetProxyOp::StepBytes(int step) const {
  return step == work_.spec.num_steps - 1 ? work_.spec.last_step_bytes : work_.spec.step_bytes;
}

uint64_t NetProxyOp::StepReadyNs(int step) const {
  uint64_t span = work_.gpu.stop_ns - work_.gpu.start_ns;
  uint64_t per_step = std::max<uint64_t>(1, span / static_cast<uint64_t>(work_.spec.num_steps));
  return work_.gpu.start_ns + static_cast<uint64_t>(step) * per_step + per_step / 2;
}

uint64_t NetProxyOp::StepDoneNs(int step) const {
  uint64_t span = work_.gpu.stop_ns - work_.gpu.start_ns;
  uint64_t per_step = std::max<uint64_t>(1, span / static_cast<uint64_t>(work_.spec.num_steps));
  return std::min(work_.gpu.stop_ns,
                  work_.gpu.start_ns + static_cast<uint64_t>(step + 1) * per_step);
}

void NetProxyOp::StartStep(void* context, EventIssuer* issuer, int step) {
  if ((work_.mask & kProxyStepStarters) == 0) return;
  ncclProfilerEventDescr_v6_t descr;
  std::memset(&descr, 0, sizeof(descr));
  descr.type = ncclProfileProxyStep;
  descr.parentObj = op_handle_;
  descr.rank = rank_;
  descr.proxyStep.step = step;
  // NCCL passes the step's slot in its 8-entry ring; the slot was cleared by the last stop.
  issuer->Start(context, &step_handles_[step % kSteps], &descr);
}

void NetProxyOp::RecordStep(EventIssuer* issuer, int step, ncclProfilerEventState_t state) {
  void* handle = step_handles_[step % kSteps];
  if (op_handle_ == nullptr || handle == nullptr) return;
  ncclProfilerEventStateArgs_v6_t args;
  std::memset(&args, 0, sizeof(args));
  args.proxyStep.transSize = trans_size_;
  issuer->Record(ncclProfileProxyStep, handle, state, &args);
}

void NetProxyOp::StopStep(EventIssuer* issuer, int step) {
  void*& handle = step_handles_[step % kSteps];
  if (handle == nullptr) return;
  issuer->Stop(ncclProfileProxyStep, handle);
  handle = nullptr;
}

void NetProxyOp::StartNet(void* context, EventIssuer* issuer, int step) {
  if ((work_.mask & ncclProfileNetPlugin) == 0) return;
  void*& slot = net_handles_[step % kSteps];
  // The payload only has to live for the call: the plugin copies it (research §1.6).
  SocketNetEventV1 payload;
  std::memset(&payload, 0, sizeof(payload));
  payload.type = kProfileSocket;
  payload.sock.fd = kFirstFakeSocketFd + work_.spec.channel;
  payload.sock.op = work_.spec.is_send ? 0 : 1;
  payload.sock.length = StepBytes(step);
  ncclProfilerEventDescr_v6_t descr;
  std::memset(&descr, 0, sizeof(descr));
  descr.type = ncclProfileNetPlugin;
  descr.parentObj = step_handles_[step % kSteps];
  descr.rank = rank_;
  descr.netPlugin.id = kSocketPluginId;
  descr.netPlugin.data = &payload;
  issuer->Start(context, &slot, &descr);
}

void NetProxyOp::StopNet(EventIssuer* issuer, int step) {
  void*& slot = net_handles_[step % kSteps];
  // NCCL's net-plugin callback stops without a NULL check (research §2.7): with the NetPlugin
  // bit off the plugin gets stopEvent(NULL). Only replayed under --nccl-quirks.
  if (slot != nullptr || nccl_quirks_) issuer->Stop(ncclProfileNetPlugin, slot);
  slot = nullptr;
}

void NetProxyOp::StopOpIfDone(EventIssuer* issuer) {
  if (done_ != work_.spec.num_steps || op_stopped_) return;
  if (op_handle_ != nullptr) issuer->Stop(ncclProfileProxyOp, op_handle_);
  op_handle_ = nullptr;
  op_stopped_ = true;
}

bool NetProxyOp::Progress(void* context, EventIssuer* issuer, uint64_t gpu_now_ns,
                          bool ignore_gpu_time) {
  bool progressed = false;
  if (!in_progress_) {
    // Ready -> Progress: recorded once per op, args zeroed and unused.
    in_progress_ = true;
    progressed = true;
    if (op_handle_ != nullptr) {
      ncclProfilerEventStateArgs_v6_t args;
      std::memset(&args, 0, sizeof(args));
      issuer->Record(ncclProfileProxyOp, op_handle_, ncclProfilerProxyOpInProgress_v4, &args);
    }
  }
  progressed |= work_.spec.is_send ? ProgressSend(context, issuer, gpu_now_ns, ignore_gpu_time)
                                   : ProgressRecv(context, issuer, gpu_now_ns, ignore_gpu_time);
  return progressed;
}

bool NetProxyOp::ProgressSend(void* context, EventIssuer* issuer, uint64_t gpu_now_ns,
                              bool ignore_gpu) {
  bool progressed = false;
  const int num_steps = work_.spec.num_steps;
  if (posted_ < num_steps && posted_ < done_ + kSteps) {
    StartStep(context, issuer, posted_);
    RecordStep(issuer, posted_, ncclProfilerProxyStepSendGPUWait);
    ++posted_;
    progressed = true;
    if (held_) return progressed;
  }
  if (transmitted_ < posted_ && transmitted_ < done_ + kSteps &&
      (ignore_gpu || gpu_now_ns >= StepReadyNs(transmitted_))) {
    RecordStep(issuer, transmitted_, ncclProfilerProxyStepSendPeerWait_v4);
    progressed = true;
    if (peer_wait_retries_left_ > 0) {
      --peer_wait_retries_left_;  // isend returned no request: try again on the next pass
    } else {
      StartNet(context, issuer, transmitted_);  // inside isend
      trans_size_ = StepBytes(transmitted_);
      RecordStep(issuer, transmitted_, ncclProfilerProxyStepSendWait);
      ++transmitted_;
      peer_wait_retries_left_ = DrawPeerWaitRetries();
    }
  }
  if (done_ < transmitted_ && (ignore_gpu || gpu_now_ns >= StepDoneNs(done_))) {
    StopNet(issuer, done_);  // inside test, when the request completes
    StopStep(issuer, done_);
    ++done_;
    progressed = true;
    StopOpIfDone(issuer);
  }
  return progressed;
}

bool NetProxyOp::ProgressRecv(void* context, EventIssuer* issuer, uint64_t gpu_now_ns,
                              bool ignore_gpu) {
  bool progressed = false;
  const int num_steps = work_.spec.num_steps;
  if (posted_ < num_steps && posted_ < done_ + kSteps) {
    StartStep(context, issuer, posted_);
    StartNet(context, issuer, posted_);  // inside irecv
    RecordStep(issuer, posted_, ncclProfilerProxyStepRecvWait);
    ++posted_;
    progressed = true;
    if (held_) return progressed;
  }
  if (received_ < posted_ && (ignore_gpu || gpu_now_ns >= StepReadyNs(received_))) {
    StopNet(issuer, received_);  // inside test
    trans_size_ = StepBytes(received_);
    RecordStep(issuer, received_, ncclProfilerProxyStepRecvFlushWait);
    ++received_;
    progressed = true;
  } else if (transmitted_ < received_) {
    // The flush completed on an earlier pass: hand the slot to the GPU.
    RecordStep(issuer, transmitted_, ncclProfilerProxyStepRecvGPUWait);
    ++transmitted_;
    progressed = true;
  }
  if (done_ < transmitted_ && (ignore_gpu || gpu_now_ns >= StepDoneNs(done_))) {
    StopStep(issuer, done_);
    ++done_;
    progressed = true;
    StopOpIfDone(issuer);
  }
  return progressed;
}

uint64_t NetProxyOp::NextDeadlineNs() const {
  if (!in_progress_ || posted_ < std::min(work_.spec.num_steps, done_ + kSteps)) return 0;
  uint64_t deadline = UINT64_MAX;
  if (work_.spec.is_send) {
    if (transmitted_ < posted_) deadline = std::min(deadline, StepReadyNs(transmitted_));
  } else {
    if (transmitted_ < received_) return 0;
    if (received_ < posted_) deadline = std::min(deadline, StepReadyNs(received_));
  }
  if (done_ < transmitted_) deadline = std::min(deadline, StepDoneNs(done_));
  return deadline == UINT64_MAX ? 0 : deadline;
}

}  // namespace katrace::sim
