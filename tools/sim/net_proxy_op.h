// One network ProxyOp on the proxy thread, stepped like NCCL's net transport progress
// (research §3.3): ProxyOp start at append, InProgress once, then per transfer a ProxyStep with
//   send: start, SendGPUWait, SendPeerWait (repeated while isend has no request), SendWait, stop
//   recv: start, RecvWait, RecvFlushWait, RecvGPUWait, stop
// and, when the NetPlugin bit is set, a socket NetPlugin event inside isend/irecv ... test.
// Thread safety: used by one proxy thread.
#ifndef KATRACE_TOOLS_SIM_NET_PROXY_OP_H_
#define KATRACE_TOOLS_SIM_NET_PROXY_OP_H_

#include <sys/types.h>

#include <cstdint>

#include "tools/sim/event_issuer.h"
#include "tools/sim/proxy_work.h"

namespace katrace::sim {

class NetProxyOp {
 public:
  // NCCL_STEPS: slots per connection FIFO, and how many step handles NCCL keeps per op.
  static constexpr int kSteps = 8;

  NetProxyOp(const ProxyOpWork& work, int rank, bool nccl_quirks, uint64_t seed);

  // ProxyAppend: starts the ProxyOp event (parent = the task's Coll/P2p handle).
  void Append(void* context, EventIssuer* issuer);
  // One call of the transport's progress function. Returns true when anything moved.
  // With |ignore_gpu_time| every GPU-side condition counts as met (bench mode).
  bool Progress(void* context, EventIssuer* issuer, uint64_t gpu_now_ns, bool ignore_gpu_time);

  bool done() const { return done_ == work_.spec.num_steps && op_stopped_; }
  const ProxyOpSpec& spec() const { return work_.spec; }
  bool HasOpenStep() const { return posted_ > done_; }
  // An injected hang gave up on this op (channel_hang.h): it counts as done, and its open
  // ProxySteps and ProxyOp are never stopped.
  // Progress stops right after posting a step: the op is about to freeze with that step open.
  void Hold() { held_ = true; }
  void Abandon() {
    done_ = work_.spec.num_steps;
    op_stopped_ = true;
  }
  // Earliest GPU time at which Progress can move again; 0 when it can move now.
  uint64_t NextDeadlineNs() const;

 private:
  bool ProgressSend(void* context, EventIssuer* issuer, uint64_t gpu_now_ns, bool ignore_gpu);
  bool ProgressRecv(void* context, EventIssuer* issuer, uint64_t gpu_now_ns, bool ignore_gpu);
  void StartStep(void* context, EventIssuer* issuer, int step);
  void RecordStep(EventIssuer* issuer, int step, ncclProfilerEventState_t state);
  void StopStep(EventIssuer* issuer, int step);
  void StartNet(void* context, EventIssuer* issuer, int step);
  void StopNet(EventIssuer* issuer, int step);
  void StopOpIfDone(EventIssuer* issuer);
  size_t StepBytes(int step) const;
  uint64_t StepReadyNs(int step) const;  // send: GPU filled the slot; recv: data arrived
  uint64_t StepDoneNs(int step) const;   // send: network done; recv: GPU consumed
  int DrawPeerWaitRetries();

  ProxyOpWork work_;
  int rank_;
  bool nccl_quirks_;
  uint64_t rng_state_;
  void* op_handle_ = nullptr;
  bool in_progress_ = false;
  bool op_stopped_ = false;
  int posted_ = 0;
  int received_ = 0;     // recv: transfers whose irecv completed
  int transmitted_ = 0;  // send: isend posted; recv: flushed and handed to the GPU
  int done_ = 0;
  int peer_wait_retries_left_ = 0;
  bool held_ = false;
  size_t trans_size_ = 0;  // NCCL's sub->transSize: last bytes moved, reported with every state
  void* step_handles_[kSteps] = {};
  void* net_handles_[kSteps] = {};
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_NET_PROXY_OP_H_
