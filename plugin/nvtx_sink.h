// Host-side NVTX ranges (Group, Coll, P2p) in a "katrace" domain, so katrace's view lines up with
// an Nsight Systems timeline. Only active when an NVTX tool is attached (NVTX_INJECTION64_PATH is
// set); otherwise every call is one predictable branch.
#ifndef KATRACE_PLUGIN_NVTX_SINK_H_
#define KATRACE_PLUGIN_NVTX_SINK_H_

#include <stdint.h>

namespace katrace {

class NvtxSink {
 public:
  // |wanted|: the KATRACE_NVTX setting. The sink enables itself only if a tool is attached.
  void Init(bool wanted);
  bool enabled() const { return enabled_; }
  uint64_t Start(const char* name);
  void End(uint64_t range);

 private:
  bool enabled_ = false;
  void* domain_ = nullptr;
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_NVTX_SINK_H_
