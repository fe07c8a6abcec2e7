// Test support: the real libnccl-profiler-katrace.so opened with dlopen and driven through its
// exported ncclProfiler_v* tables, exactly as NCCL does, plus descriptor builders and a logger
// that captures what the plugin tells NCCL's log.
#ifndef KATRACE_TEST_SUPPORT_PLUGIN_HARNESS_H_
#define KATRACE_TEST_SUPPORT_PLUGIN_HARNESS_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "nccl_profiler/v4.h"
#include "nccl_profiler/v5.h"
#include "nccl_profiler/v6.h"

namespace katrace_test {

// Path of the plugin built next to the test binary ($(BUILD)/libnccl-profiler-katrace.so).
std::string PluginPath();
// Path of a tool binary, e.g. ToolPath("katrace-check"): $(BUILD)/bin's, or for the tools that run
// on one thread SUITE_TOOLS_DIR's (test/module.mk).
std::string ToolPath(const std::string& name);
// Path of anything else under $(BUILD), e.g. BuildPath("test/libnvtx-recorder.so").
std::string BuildPath(const std::string& relative);

struct Plugin {
  void* lib = nullptr;
  ncclProfiler_v6_t* v6 = nullptr;
  ncclProfiler_v5_t* v5 = nullptr;
  ncclProfiler_v4_t* v4 = nullptr;
};
// Opened once per test process (NCCL also keeps it loaded across communicators).
Plugin& LoadPlugin();

// NCCL-style logger that records every line; WARN lines are also kept apart.
void CapturingLogger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...);
std::vector<std::string> CapturedWarnings();
std::vector<std::string> CapturedLines();
void ClearCapturedLogs();

// A fresh temporary directory for one test's outputs.
std::string MakeTempDir();

// Descriptor builders (v6 layout).
ncclProfilerEventDescr_v6_t GroupApiDescr();
ncclProfilerEventDescr_v6_t CollApiDescr(void* parent, const char* func, size_t count);
ncclProfilerEventDescr_v6_t CollDescr(void* parent, const char* func, uint64_t seq, size_t count, uint8_t nchannels);
ncclProfilerEventDescr_v6_t P2pDescr(void* parent, const char* func, int peer, size_t count, uint8_t nchannels);
ncclProfilerEventDescr_v6_t KernelChDescr(void* parent, uint8_t channel, uint64_t gpu_start);
ncclProfilerEventDescr_v6_t ProxyOpDescr(void* parent, uint8_t channel, int peer, bool send, int pid);
ncclProfilerEventDescr_v6_t ProxyStepDescr(void* parent, int step);
ncclProfilerEventDescr_v6_t KernelStepDescr(void* parent, uint8_t channel, bool send, int peer, uint32_t step,
                                            uint64_t start_ts, uint64_t ready_ts);

// One communicator's context from the v6 init, with the shared mask.
struct Comm {
  void* ctx = nullptr;
  int mask = 0;
};
Comm InitComm(uint64_t comm_hash, int rank, int nranks);
// NCCL's process-global activation mask that InitComm passes: tests set it as an application
// (or NCCL's own profiler control) would, to report kinds beyond the configured ones.
int* NcclMask();

// Realtime ns, as a %globaltimer stamp would be.
uint64_t GpuNow();

}  // namespace katrace_test

#endif  // KATRACE_TEST_SUPPORT_PLUGIN_HARNESS_H_
