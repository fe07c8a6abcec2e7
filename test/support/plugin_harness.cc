#include "test/support/plugin_harness.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mutex>

#include "common/paths.h"

namespace katrace_test {
namespace {

std::mutex g_log_mu;
std::vector<std::string> g_lines;
std::vector<std::string> g_warnings;

std::string BuildDir() {
  char exe[PATH_MAX] = {};
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  std::string path(exe, n > 0 ? static_cast<size_t>(n) : 0);
  // $(BUILD)/test/<binary> -> $(BUILD)
  for (int i = 0; i < 2; ++i) path = path.substr(0, path.find_last_of('/'));
  return path;
}

}  // namespace

std::string PluginPath() {
  const char* env = getenv("KATRACE_TEST_PLUGIN");
  return env != nullptr ? env : BuildDir() + "/libnccl-profiler-katrace.so";
}

// katrace-sim and katrace-export run threads: this tree's. The other tools run on one thread and
// come from SUITE_TOOLS_DIR (test/module.mk says why).
std::string ToolPath(const std::string& name) {
  const bool threaded = name == "katrace-sim" || name == "katrace-export";
  return threaded ? BuildDir() + "/bin/" + name : std::string(KATRACE_SUITE_TOOLS_DIR) + "/" + name;
}

std::string BuildPath(const std::string& relative) { return BuildDir() + "/" + relative; }

Plugin& LoadPlugin() {
  static Plugin plugin = [] {
    Plugin p;
    p.lib = dlopen(PluginPath().c_str(), RTLD_NOW | RTLD_LOCAL);
    if (p.lib == nullptr) {
      fprintf(stderr, "cannot load %s: %s\n", PluginPath().c_str(), dlerror());
      abort();
    }
    p.v6 = static_cast<ncclProfiler_v6_t*>(dlsym(p.lib, "ncclProfiler_v6"));
    p.v5 = static_cast<ncclProfiler_v5_t*>(dlsym(p.lib, "ncclProfiler_v5"));
    p.v4 = static_cast<ncclProfiler_v4_t*>(dlsym(p.lib, "ncclProfiler_v4"));
    return p;
  }();
  return plugin;
}

void CapturingLogger(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_lines.push_back(buf);
  if (level == NCCL_LOG_WARN) g_warnings.push_back(buf);
}

std::vector<std::string> CapturedWarnings() {
  std::lock_guard<std::mutex> lock(g_log_mu);
  return g_warnings;
}

std::vector<std::string> CapturedLines() {
  std::lock_guard<std::mutex> lock(g_log_mu);
  return g_lines;
}

void ClearCapturedLogs() {
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_lines.clear();
  g_warnings.clear();
}

std::string MakeTempDir() {
  std::string tmpl = katrace::TempDir() + "/katrace-test-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) abort();
  return buf.data();
}

static ncclProfilerEventDescr_v6_t Blank(uint64_t type, void* parent) {
  ncclProfilerEventDescr_v6_t d;
  memset(&d, 0, sizeof(d));
  d.type = type;
  d.parentObj = parent;
  return d;
}

ncclProfilerEventDescr_v6_t GroupApiDescr() {
  ncclProfilerEventDescr_v6_t d = Blank(ncclProfileGroupApi, nullptr);
  d.groupApi.groupDepth = 1;
  return d;
}

ncclProfilerEventDescr_v6_t CollApiDescr(void* parent, const char* func, size_t count) {
  ncclProfilerEventDescr_v6_t d = Blank(ncclProfileCollApi, parent);
  d.collApi.func = func;
  d.collApi.count = count;
  d.collApi.datatype = "ncclFloat32";
  return d;
}

ncclProfilerEventDescr_v6_t CollDescr(void* parent, const char* func, uint64_t seq, size_t count, uint8_t nchannels) {
  ncclProfilerEventDescr_v6_t d = Blank(ncclProfileColl, parent);
  d.coll.seqNumber = seq;
  d.coll.func = func;
  d.coll.count = count;
  d.coll.datatype = "ncclFloat32";
  d.coll.nChannels = nchannels;
  d.coll.nWarps = 16;
  d.coll.algo = "RING";
  d.coll.proto = "SIMPLE";
  return d;
}

ncclProfilerEventDescr_v6_t P2pDescr(void* parent, const char* func, int peer, size_t count, uint8_t nchannels) {
  ncclProfilerEventDescr_v6_t d = Blank(ncclProfileP2p, parent);
  d.p2p.func = func;
  d.p2p.peer = peer;
  d.p2p.count = count;
  d.p2p.datatype = "ncclInt8";
  d.p2p.nChannels = nchannels;
  return d;
}

ncclProfilerEventDescr_v6_t KernelChDescr(void* parent, uint8_t channel, uint64_t gpu_start) {
  ncclProfilerEventDescr_v6_t d = Blank(ncclProfileKernelCh, parent);
  d.kernelCh.channelId = channel;
  d.kernelCh.pTimer = gpu_start;
  return d;
}

ncclProfilerEventDescr_v6_t ProxyOpDescr(void* parent, uint8_t channel, int peer, bool send, int pid) {
  ncclProfilerEventDescr_v6_t d = Blank(ncclProfileProxyOp, parent);
  d.proxyOp.pid = pid;
  d.proxyOp.channelId = channel;
  d.proxyOp.peer = peer;
  d.proxyOp.nSteps = 4;
  d.proxyOp.chunkSize = 1 << 20;
  d.proxyOp.isSend = send ? 1 : 0;
  return d;
}

ncclProfilerEventDescr_v6_t ProxyStepDescr(void* parent, int step) {
  ncclProfilerEventDescr_v6_t d = Blank(ncclProfileProxyStep, parent);
  d.proxyStep.step = step;
  return d;
}

ncclProfilerEventDescr_v6_t KernelStepDescr(void* parent, uint8_t channel, bool send, int peer, uint32_t step,
                                            uint64_t start_ts, uint64_t ready_ts) {
  ncclProfilerEventDescr_v6_t d = Blank(ncclProfileKernelStep, parent);
  d.kernelStep.channelId = channel;
  d.kernelStep.isSend = send ? 1 : 0;
  d.kernelStep.peer = peer;
  d.kernelStep.step = step;
  d.kernelStep.size = 1 << 17;
  d.kernelStep.startTs = start_ts;
  d.kernelStep.readyTs = ready_ts;
  return d;
}

int* NcclMask() {
  static int shared_mask = 0;
  return &shared_mask;
}

Comm InitComm(uint64_t comm_hash, int rank, int nranks) {
  Comm c;
  LoadPlugin().v6->init(&c.ctx, comm_hash, NcclMask(), "test", 1, nranks, rank, CapturingLogger);
  c.mask = __atomic_load_n(NcclMask(), __ATOMIC_RELAXED);
  return c;
}

uint64_t GpuNow() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace katrace_test
