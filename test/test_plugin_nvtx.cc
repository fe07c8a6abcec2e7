// NVTX ranges reach an attached NVTX tool (a recording fixture loaded through
// NVTX_INJECTION64_PATH, as Nsight Systems is) in a "katrace" domain.
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include "test/support/plugin_test.h"

namespace katrace_test {
namespace {

class NvtxTest : public PluginTest {};

TEST_F(NvtxTest, HostRangesReachAnAttachedToolInTheKatraceDomain) {
  std::string tool = BuildPath("test/libnvtx-recorder.so");
  if (access(tool.c_str(), R_OK) != 0) GTEST_SKIP() << "no NVTX headers at build time (no CUDA toolkit): " << tool;
  setenv("NVTX_INJECTION64_PATH", tool.c_str(), 1);
  Comm c = InitComm(0x17, 0, 1);
  CollWithChannels(c.ctx, nullptr, 1, 1);
  void* p2p = nullptr;
  auto d = P2pDescr(nullptr, "Send", 1, 64, 0);
  v6().startEvent(c.ctx, &p2p, &d);
  v6().stopEvent(p2p);
  v6().finalize(c.ctx);
  unsetenv("NVTX_INJECTION64_PATH");
  void* lib = dlopen(tool.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr) << "NVTX did not load the tool: " << tool;
  auto created = reinterpret_cast<int (*)(const char*)>(dlsym(lib, "nvtx_recorder_domain_created"));
  auto started = reinterpret_cast<int (*)(const char*)>(dlsym(lib, "nvtx_recorder_started"));
  auto ended = reinterpret_cast<uint64_t (*)()>(dlsym(lib, "nvtx_recorder_ended"));
  ASSERT_TRUE(created && started && ended);
  EXPECT_EQ(created("katrace"), 1);
  EXPECT_EQ(started("AllReduce"), 1);
  EXPECT_EQ(started("Send"), 1);
  EXPECT_EQ(ended(), 2u);
  dlclose(lib);
  ExpectValidTrace(trace_path_);
}

}  // namespace
}  // namespace katrace_test
