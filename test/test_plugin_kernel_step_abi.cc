// KernelStep through the real .so in NVIDIA/nccl PR #2316's byte layout: a descriptor written
// byte by byte at the fork's offsets (channelId @24, isSend @25, peer @26, step @28, size @32,
// startTs @40, readyTs @48; isSend a byte), never through katrace's own struct, is read right.
#include <string.h>

#include "test/support/plugin_test.h"

namespace katrace_test {
namespace {

void Put(uint8_t* raw, size_t at, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) raw[at + i] = static_cast<uint8_t>(value >> (8 * i));  // little-endian
}

struct ForkStep {
  uint8_t channel;
  uint8_t is_send;
  uint8_t peer;
  uint32_t step;
  uint32_t size;
  uint64_t start_ts, ready_ts, stop_ts;
};

// The descriptor as the fork's core fills it. Bytes the layout leaves unused (the pad at 27,
// 36..39 and everything past readyTs) hold garbage, so a read at a wrong offset shows.
ncclProfilerEventDescr_v6_t ForkDescriptor(void* parent, const ForkStep& s) {
  uint8_t raw[112];
  memset(raw, 0xEE, sizeof(raw));
  Put(raw, 0, ncclProfileKernelStep, 8);
  Put(raw, 8, reinterpret_cast<uint64_t>(parent), 8);
  Put(raw, 16, 0, 4);  // rank
  Put(raw, 20, 0, 4);  // padding before the union
  raw[24] = s.channel;
  raw[25] = s.is_send;
  raw[26] = s.peer;
  Put(raw, 28, s.step, 4);
  Put(raw, 32, s.size, 4);
  Put(raw, 40, s.start_ts, 8);
  Put(raw, 48, s.ready_ts, 8);
  static_assert(sizeof(ncclProfilerEventDescr_v6_t) == sizeof(raw), "the v6 descriptor is 112 bytes");
  ncclProfilerEventDescr_v6_t d;
  memcpy(&d, raw, sizeof(d));
  return d;
}

class KernelStepAbiTest : public PluginTest {};

TEST_F(KernelStepAbiTest, Pr2316ByteLayoutDescriptorIsReadRight) {
  Comm c = InitComm(0x2316, 0, 2);
  ASSERT_NE(c.mask & ncclProfileKernelStep, 0);
  void* coll = nullptr;
  auto cd = CollDescr(nullptr, "AllReduce", 1, 1 << 20, 1);
  v6().startEvent(c.ctx, &coll, &cd);
  ASSERT_NE(coll, nullptr);
  v6().stopEvent(coll);
  const uint64_t t0 = GpuNow();
  // The channel's kernel work, around both slices.
  void* kernel_ch = nullptr;
  auto kd = KernelChDescr(coll, 3, t0);
  v6().startEvent(c.ctx, &kernel_ch, &kd);
  // A send to peer 200 with a measured wait, and a receive from peer 255 (the largest the byte
  // names) without one; step and size use all four bytes so a shifted read shows.
  const ForkStep steps[2] = {
      {3, 1, 200, 0x01020304u, 0x00A0B0C0u, t0 + 100, t0 + 1100, t0 + 5100},
      {3, 0, 255, 7u, 131072u, 0, t0 + 2100, t0 + 6100},
  };
  for (const ForkStep& s : steps) {
    void* h = nullptr;
    auto d = ForkDescriptor(coll, s);
    v6().startEvent(c.ctx, &h, &d);
    ASSERT_NE(h, nullptr);
    // The stop state's args: pTimer, a u64 at offset 0.
    uint8_t raw_args[8];
    Put(raw_args, 0, s.stop_ts, 8);
    ncclProfilerEventStateArgs_v6_t a;
    memcpy(&a, raw_args, sizeof(a));
    v6().recordEventState(h, static_cast<ncclProfilerEventState_v6_t>(ncclProfilerKernelStepStop), &a);
    v6().stopEvent(h);
  }
  ncclProfilerEventStateArgs_v6_t ka{};
  ka.kernelCh.pTimer = t0 + 8192;
  v6().recordEventState(kernel_ch, ncclProfilerKernelChStop, &ka);
  v6().stopEvent(kernel_ch);
  v6().finalize(c.ctx);

  auto trace = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(trace)["events"]["KernelStep"], 2);
  EXPECT_EQ(Footer(trace)["incomplete"], 0);
  auto slices = Slices(trace, "KernelStep");
  ASSERT_EQ(slices.size(), 2u);
  for (const ForkStep& s : steps) {
    const nlohmann::json* found = nullptr;
    for (const auto& e : slices) {
      if (e["args"]["peer"] == s.peer) found = &e;
    }
    ASSERT_NE(found, nullptr) << "no step with peer " << int(s.peer);
    const auto& a = (*found)["args"];
    EXPECT_EQ(a["channel"], s.channel);
    EXPECT_EQ(a["send"], s.is_send != 0);
    EXPECT_EQ(a["step"], s.step);
    EXPECT_EQ(a["size"], s.size);
    EXPECT_EQ(a["gpu_start_ns"], s.start_ts);
    EXPECT_EQ(a["gpu_ready_ns"], s.ready_ts);
    EXPECT_EQ(a["gpu_stop_ns"], s.stop_ts);
    EXPECT_EQ(a["parent"], Slices(trace, "Coll")[0]["args"]["id"]);
  }
}

}  // namespace
}  // namespace katrace_test
