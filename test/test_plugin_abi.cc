// What NCCL sees of the .so: the exported symbols, the three ABI versions, and a complete trace
// of a realistic call sequence.
#include <stdio.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "test/support/plugin_test.h"

namespace katrace_test {
namespace {

class AbiTest : public PluginTest {};

TEST_F(AbiTest, ExportsExactlyTheThreeProfilerTables) {
  std::string cmd = "nm -D --defined-only '" + PluginPath() + "'";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char line[512];
  std::vector<std::string> symbols;
  while (fgets(line, sizeof(line), p) != nullptr) {
    std::string s(line);
    s = s.substr(s.find_last_of(' ') + 1);
    s.erase(s.find_last_not_of("\n") + 1);
    symbols.push_back(s);
  }
  ASSERT_EQ(pclose(p), 0);
  std::sort(symbols.begin(), symbols.end());
  EXPECT_EQ(symbols, (std::vector<std::string>{"ncclProfiler_v4", "ncclProfiler_v5", "ncclProfiler_v6"}));
  ASSERT_NE(p_->v6, nullptr);
  ASSERT_NE(p_->v5, nullptr);
  ASSERT_NE(p_->v4, nullptr);
  EXPECT_STREQ(p_->v6->name, "katrace");
}

TEST_F(AbiTest, FullHierarchyProducesANestedTraceWithGpuTracksAndFlows) {
  Comm c = InitComm(0xabcdef, 0, 2);
  ASSERT_NE(c.ctx, nullptr);
  EXPECT_NE(c.mask & ncclProfileColl, 0);
  setenv("KATRACE_MASK", "all", 1);  // read once per session: no effect now
  // The trace holds the kinds of NCCL's live mask: ProxyStep is not a default one.
  __atomic_fetch_or(NcclMask(), ncclProfileProxyStep, __ATOMIC_RELAXED);
  void* group = nullptr;
  auto g = GroupApiDescr();
  v6().startEvent(c.ctx, &group, &g);
  v6().recordEventState(group, ncclProfilerGroupStartApiStop, nullptr);
  void* api = nullptr;
  auto a = CollApiDescr(group, "AllReduce", 1024);
  v6().startEvent(c.ctx, &api, &a);
  v6().stopEvent(api);
  v6().recordEventState(group, ncclProfilerGroupEndApiStart, nullptr);
  void* coll = nullptr;
  auto cd = CollDescr(api, "AllReduce", 7, 1024, 2);
  v6().startEvent(c.ctx, &coll, &cd);
  ASSERT_NE(coll, nullptr);
  v6().stopEvent(coll);
  v6().stopEvent(group);
  // Proxy thread: GPU work and a proxy op with steps, after the host side finished.
  std::thread proxy([&] {
    uint64_t t0 = GpuNow();
    void* k[2] = {};
    for (int ch = 0; ch < 2; ++ch) {
      auto kd = KernelChDescr(coll, static_cast<uint8_t>(ch), t0 + 1024u * ch);
      v6().startEvent(c.ctx, &k[ch], &kd);
    }
    void* op = nullptr;
    auto od = ProxyOpDescr(coll, 0, 1, true, getpid());
    v6().startEvent(c.ctx, &op, &od);
    v6().recordEventState(op, ncclProfilerProxyOpInProgress_v4, nullptr);
    for (int s = 0; s < 3; ++s) {
      void* step = nullptr;
      auto sd = ProxyStepDescr(op, s);
      v6().startEvent(c.ctx, &step, &sd);
      ncclProfilerEventStateArgs_v6_t sa{};
      v6().recordEventState(step, ncclProfilerProxyStepSendGPUWait, &sa);
      v6().recordEventState(step, ncclProfilerProxyStepSendPeerWait_v4, &sa);
      v6().recordEventState(step, ncclProfilerProxyStepSendPeerWait_v4, &sa);
      sa.proxyStep.transSize = 4096;
      v6().recordEventState(step, ncclProfilerProxyStepSendWait, &sa);
      v6().stopEvent(step);
    }
    v6().stopEvent(op);
    for (int ch = 0; ch < 2; ++ch) {
      void* ks = nullptr;
      auto sd = KernelStepDescr(coll, static_cast<uint8_t>(ch), true, 1, 0, t0 + 100, t0 + 1124);
      v6().startEvent(c.ctx, &ks, &sd);
      ncclProfilerEventStateArgs_v6_t sa{};
      sa.kernelStep.pTimer = t0 + 3000;
      v6().recordEventState(ks, static_cast<ncclProfilerEventState_v6_t>(ncclProfilerKernelStepStop), &sa);
      v6().stopEvent(ks);
    }
    for (int ch = 0; ch < 2; ++ch) {
      ncclProfilerEventStateArgs_v6_t ka{};
      ka.kernelCh.pTimer = t0 + 8192;
      v6().recordEventState(k[ch], ncclProfilerKernelChStop, &ka);
      v6().stopEvent(k[ch]);
    }
  });
  proxy.join();
  v6().finalize(c.ctx);
  unsetenv("KATRACE_MASK");

  nlohmann::json trace = ExpectValidTrace(trace_path_);
  const auto& footer = Footer(trace);
  EXPECT_EQ(footer["events"]["Coll"], 1);
  EXPECT_EQ(footer["events"]["KernelCh"], 2);
  EXPECT_EQ(footer["events"]["KernelStep"], 2);
  EXPECT_EQ(footer["events"]["ProxyStep"], 3);
  EXPECT_EQ(footer["incomplete"], 0);
  auto colls = Slices(trace, "Coll");
  ASSERT_EQ(colls.size(), 1u);
  EXPECT_EQ(colls[0]["name"], "AllReduce");
  EXPECT_EQ(colls[0]["args"]["seq"], 7);
  EXPECT_EQ(colls[0]["args"]["algo"], "RING");
  ASSERT_TRUE(colls[0]["args"].contains("gpu_start"));
  uint64_t coll_id = colls[0]["args"]["id"];
  for (const auto& k : Slices(trace, "KernelCh")) EXPECT_EQ(k["args"]["parent"], coll_id);
  auto steps = Slices(trace, "KernelStep");
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_NE(steps[0]["tid"], steps[1]["tid"]) << "channels must not share a KernelStep track";
  EXPECT_EQ(Slices(trace, "KernelStepWait").size(), 2u);
  EXPECT_EQ(Slices(trace, "CollGpu").size(), 1u);
  auto states = Slices(trace, "ProxyStepState");
  EXPECT_EQ(states.size(), 9u) << "SendPeerWait repeats must be folded into one state";
  auto proxy_steps = Slices(trace, "ProxyStep");
  EXPECT_EQ(proxy_steps[0]["name"], "SendStep");
  EXPECT_EQ(proxy_steps[0]["args"]["trans_size"], 4096);
  int flows = 0;
  for (const auto& e : trace["traceEvents"]) flows += e["ph"] == "s";
  EXPECT_EQ(flows, 1);
}

TEST_F(AbiTest, V5TableRecordsTheSameEventsAndClearsV6OnlyMaskBits) {
  int mask = 0;
  void* ctx = nullptr;
  setenv("KATRACE_MASK", "all", 1);
  ASSERT_EQ(p_->v5->init(&ctx, 0x55, &mask, "v5", 1, 1, 0, CapturingLogger), ncclSuccess);
  unsetenv("KATRACE_MASK");
  EXPECT_EQ(mask, 0xfff) << "a v5 core knows neither CE nor KernelStep bits";
  ncclProfilerEventDescr_v5_t d{};
  d.type = ncclProfileColl;
  d.coll.func = "AllGather";
  d.coll.nChannels = 1;
  d.coll.datatype = "ncclInt8";
  d.coll.count = 100;
  void* coll = nullptr;
  p_->v5->startEvent(ctx, &coll, &d);
  ASSERT_NE(coll, nullptr);
  p_->v5->stopEvent(coll);
  ncclProfilerEventDescr_v5_t k{};
  k.type = ncclProfileKernelCh;
  k.parentObj = coll;
  k.kernelCh.pTimer = GpuNow();
  void* kh = nullptr;
  p_->v5->startEvent(ctx, &kh, &k);
  ncclProfilerEventStateArgs_v5_t a{};
  a.kernelCh.pTimer = k.kernelCh.pTimer + 1000;
  p_->v5->recordEventState(kh, ncclProfilerKernelChStop, &a);
  p_->v5->stopEvent(kh);
  p_->v5->finalize(ctx);
  nlohmann::json trace = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(trace)["events"]["Coll"], 1);
  EXPECT_EQ(Footer(trace)["events"]["KernelCh"], 1);
  EXPECT_EQ(Slices(trace, "Coll")[0]["args"]["bytes"], 100);
}

// A kind asked for by name that the ABI NCCL loaded cannot report is said, once, not left to
// an empty trace; "all" (above) asks for nothing in particular and is not.
TEST_F(AbiTest, V5SaysWhenTheMaskAsksForAKindItCannotReport) {
  int mask = 0;
  void* ctx = nullptr;
  setenv("KATRACE_MASK", "coll,kernelstep", 1);
  ASSERT_EQ(p_->v5->init(&ctx, 0x56, &mask, "v5", 1, 1, 0, CapturingLogger), ncclSuccess);
  unsetenv("KATRACE_MASK");
  EXPECT_EQ(mask, static_cast<int>(ncclProfileColl));
  p_->v5->finalize(ctx);
  int said = 0;
  for (const auto& w : CapturedWarnings()) {
    said += w.find("KATRACE_MASK asks for KernelStep, which NCCL's profiler API v5") != std::string::npos;
  }
  EXPECT_EQ(said, 1);
}

TEST_F(AbiTest, V4TableUsesItsArgumentOrderAndGroupParents) {
  int mask = 0;
  void* ctx = nullptr;
  ASSERT_EQ(p_->v4->init(&ctx, &mask, "v4", 0x44, 1, 2, 1, CapturingLogger), ncclSuccess);
  EXPECT_EQ(mask & ~0xff, 0);
  ncclProfilerEventDescr_v4_t g{};
  g.type = ncclProfileGroup;
  void* group = nullptr;
  p_->v4->startEvent(ctx, &group, &g);
  ncclProfilerEventDescr_v4_t d{};
  d.type = ncclProfileColl;
  d.parentObj = group;
  d.coll.func = "ReduceScatter";
  d.coll.nChannels = 0;
  void* coll = nullptr;
  p_->v4->startEvent(ctx, &coll, &d);
  p_->v4->stopEvent(coll);
  p_->v4->stopEvent(group);
  p_->v4->finalize(ctx);
  nlohmann::json trace = ExpectValidTrace(trace_path_);
  auto colls = Slices(trace, "Coll");
  ASSERT_EQ(colls.size(), 1u);
  EXPECT_EQ(colls[0]["args"]["rank"], 1);
  EXPECT_EQ(colls[0]["args"]["comm"], "0000000000000044");
  EXPECT_EQ(colls[0]["args"]["parent"], Slices(trace, "Group")[0]["args"]["id"]);
}

TEST_F(AbiTest, GzipOutputIsReadableAndAtomicallyRenamed) {
  std::string gz = dir_ + "/trace.json.gz";
  setenv("KATRACE_OUTPUT", gz.c_str(), 1);
  Comm c = InitComm(1, 0, 1);
  CollWithChannels(c.ctx, nullptr, 0, 2);
  EXPECT_EQ(access(gz.c_str(), F_OK), -1) << "the final name appears only when the trace is complete";
  EXPECT_EQ(access((gz + ".kspool").c_str(), F_OK), 0) << "the capture spools while the job runs";
  v6().finalize(c.ctx);
  std::string tmp = gz + ".tmp." + std::to_string(getpid());
  EXPECT_EQ(access(tmp.c_str(), F_OK), -1);
  EXPECT_EQ(access((gz + ".kspool").c_str(), F_OK), -1) << "the spool is removed after a successful export";
  nlohmann::json trace = ExpectValidTrace(gz);
  EXPECT_EQ(Footer(trace)["events"]["KernelCh"], 2);
}

}  // namespace
}  // namespace katrace_test
