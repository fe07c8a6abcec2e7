// Hang injection (--hang RANK:CHANNEL:N, --hang-for DURATION): on one rank's proxy thread, the
// channel stops progressing after N operations, as a kernel stuck on one channel would. The
// (N+1)-th operation's KernelCh on that channel starts and never stops, one KernelStep of it
// (send, towards the channel's send peer) starts and never stops, and its ProxyOps on that
// channel freeze with their posted ProxySteps open. Later operations on that channel wait behind
// it; other channels and ranks go on. After the hold the stuck events are abandoned, never
// stopped (the plugin's finalize finds them open), and the channel runs again so the run can end.
// Thread safety: used by one proxy thread.
#ifndef KATRACE_TOOLS_SIM_CHANNEL_HANG_H_
#define KATRACE_TOOLS_SIM_CHANNEL_HANG_H_

#include <cstdint>

namespace katrace::sim {

struct HangSpec {
  int rank = -1;  // -1: no hang
  int channel = 0;
  uint64_t after_ops = 0;
  uint64_t hold_ns = 10ull * 1000 * 1000 * 1000;  // --hang-for
  bool enabled() const { return rank >= 0; }
};

class ChannelHang {
 public:
  enum class Phase { kRunning, kStuck, kReleased };

  explicit ChannelHang(const HangSpec& spec) : spec_(spec) {}

  int channel() const { return spec_.channel; }
  Phase phase() const { return phase_; }
  bool stuck() const { return phase_ == Phase::kStuck; }

  // A KernelCh operation on the hung channel is about to start: true when it is the one that
  // gets stuck (the clock of the hold starts now).
  bool StartsStuck(uint64_t now_ns) {
    if (phase_ != Phase::kRunning || started_ops_++ != spec_.after_ops) return false;
    phase_ = Phase::kStuck;
    stuck_since_ns_ = now_ns;
    return true;
  }
  // True once, when the hold has run out.
  bool ReleaseDue(uint64_t now_ns) {
    if (phase_ != Phase::kStuck || now_ns - stuck_since_ns_ < spec_.hold_ns) return false;
    phase_ = Phase::kReleased;
    return true;
  }

 private:
  HangSpec spec_;
  Phase phase_ = Phase::kRunning;
  uint64_t started_ops_ = 0;
  uint64_t stuck_since_ns_ = 0;
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_CHANNEL_HANG_H_
