// Base fixture for tests of the real plugin: a private output directory per test, the
// environment reset, and helpers that replay NCCL's call patterns.
#ifndef KATRACE_TEST_SUPPORT_PLUGIN_TEST_H_
#define KATRACE_TEST_SUPPORT_PLUGIN_TEST_H_

#include <stdint.h>
#include <stdlib.h>

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "test/support/plugin_harness.h"
#include "test/support/trace_validation.h"

namespace katrace_test {

// The plugin's default mask as the v6 init writes it (docs: coll,p2p,api,proxyop,kernelch,kernelstep).
inline int kDefaultMaskForTest() {
  return ncclProfileGroupApi | ncclProfileCollApi | ncclProfileP2pApi | ncclProfileKernelLaunch | ncclProfileColl |
         ncclProfileP2p | ncclProfileProxyOp | ncclProfileKernelCh | ncclProfileKernelStep;
}

// KATRACE_TEST_SCALE (0 < scale <= 1; test/run_tests.sh sets 0.1 for sanitizer builds) shrinks
// the long tests: |n| scaled, but never below |floor|.
inline uint64_t TestScaled(uint64_t n, uint64_t floor) {
  const char* text = getenv("KATRACE_TEST_SCALE");
  const double scale = text == nullptr ? 1.0 : atof(text);
  if (!(scale > 0 && scale < 1)) return n;
  const uint64_t scaled = static_cast<uint64_t>(static_cast<double>(n) * scale);
  return scaled < floor ? floor : scaled;
}
// Scaled runs are the sanitizer builds, whose shadow memory makes RSS bounds meaningless.
inline bool ScaledRun() { return TestScaled(10, 1) < 10; }

class PluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static const char* const kVars[] = {"KATRACE_MASK", "NCCL_PROFILE_EVENT_MASK", "KATRACE_OUTPUT",
                                        "NCCL_PROFILE_DUMP_FILE", "KATRACE_GZIP", "KATRACE_SUMMARY",
                                        "KATRACE_SUMMARY_FILE", "KATRACE_POOL_SIZE", "KATRACE_POOL_COLL",
                                        "KATRACE_POOL_KERNEL_CH", "KATRACE_QUEUE_RECORDS",
                                        "KATRACE_EXPORT", "KATRACE_KEEP_SPOOL", "KATRACE_ON_FULL",
                                        "KATRACE_BUFFER_MB", "KATRACE_THREAD_BUFFER_KB",
                                        "KATRACE_SPOOL_COMPRESS", "KATRACE_CLOCK", "KATRACE_FORMAT"};
    for (const char* v : kVars) unsetenv(v);
    dir_ = MakeTempDir();
    trace_path_ = dir_ + "/trace.json";
    setenv("KATRACE_OUTPUT", trace_path_.c_str(), 1);
    setenv("KATRACE_SUMMARY_FILE", (dir_ + "/summary.txt").c_str(), 1);
    ClearCapturedLogs();
    p_ = &LoadPlugin();
  }

  ncclProfiler_v6_t& v6() { return *p_->v6; }

  // Start + stop of a Coll with |nch| KernelCh children, the NCCL order: Coll stops before its
  // KernelCh children start on the proxy thread.
  void CollWithChannels(void* ctx, void* parent, uint64_t seq, int nch) {
    void* coll = nullptr;
    auto d = CollDescr(parent, "AllReduce", seq, 1024, static_cast<uint8_t>(nch));
    v6().startEvent(ctx, &coll, &d);
    v6().stopEvent(coll);
    for (int c = 0; c < nch; ++c) KernelCh(ctx, coll, c);
  }

  // GPU stamps as a real GPU gives them: taken before the host sees them (the proxy reads a stamp
  // after the kernel wrote it), never ahead of realtime, so every one is a true upper bound of
  // the clock offset the export fits. The channel's work lasts until its stop is polled.
  void KernelCh(void* ctx, void* coll, int channel) {
    void* k = nullptr;
    auto d = KernelChDescr(coll, static_cast<uint8_t>(channel), GpuNow());
    v6().startEvent(ctx, &k, &d);
    ncclProfilerEventStateArgs_v6_t a{};
    a.kernelCh.pTimer = GpuNow();
    v6().recordEventState(k, ncclProfilerKernelChStop, &a);
    v6().stopEvent(k);
  }

  std::string dir_;
  std::string trace_path_;
  Plugin* p_ = nullptr;
};

}  // namespace katrace_test

#endif  // KATRACE_TEST_SUPPORT_PLUGIN_TEST_H_
