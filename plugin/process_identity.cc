#include "plugin/process_identity.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "common/in_place_path.h"
#include "common/trace_format.h"

namespace katrace {

std::string HostName() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return "unknown-host";
  return host;
}

bool LauncherRank(int* rank) {
  static const char* const kVars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK", "PMIX_RANK",
                                      "MV2_COMM_WORLD_RANK"};
  for (const char* var : kVars) {
    const char* v = getenv(var);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    long r = strtol(v, &end, 10);
    if (*end == '\0' && r >= 0 && r < (1L << 30)) {
      *rank = static_cast<int>(r);
      return true;
    }
  }
  return false;
}

int CurrentCudaDevice() {
  // RTLD_NOLOAD: only a driver the process already has. cuCtxGetDevice(CUdevice*) returns
  // CUDA_SUCCESS (0) and the device of the current context.
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (driver == nullptr) return -1;
  using CtxGetDevice = int (*)(int*);
  auto get = reinterpret_cast<CtxGetDevice>(dlsym(driver, "cuCtxGetDevice"));
  int device = -1;
  if (get == nullptr || get(&device) != 0 || device < 0) device = -1;
  dlclose(driver);
  return device;
}

namespace {

// Whether |path| is a trace (or its spool) that this process wrote in an earlier session, e.g.
// before NCCL unloaded and reloaded the plugin: its header names our pid.
bool WrittenByThisProcess(const std::string& path, int os_pid) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  char head[4096] = {};
  in.read(head, sizeof(head) - 1);
  std::string text(head, static_cast<size_t>(in.gcount()));
  return text.find("\"os_pid\":" + std::to_string(os_pid) + ",") != std::string::npos;
}

// When this process started, in nanoseconds of the realtime clock (0 when /proc cannot say): its
// start in clock ticks after boot, plus where boot lies on the realtime clock now. One tick (10
// ms) late, so that a trace another process finished just before this one started is never
// taken for this process's.
int64_t ProcessStartRealtimeNs() {
  std::ifstream self("/proc/self/stat");
  std::string line;
  std::getline(self, line);
  // The command name (field 2) may hold spaces: the fields after it follow its closing ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(line.substr(close + 1));
  std::string field;
  uint64_t ticks = 0;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 22) ticks = strtoull(field.c_str(), nullptr, 10);
  }
  const long per_second = sysconf(_SC_CLK_TCK);
  timespec real, boot;
  if (ticks == 0 || per_second <= 0 || clock_gettime(CLOCK_REALTIME, &real) != 0 ||
      clock_gettime(CLOCK_BOOTTIME, &boot) != 0) {
    return 0;
  }
  const int64_t boot_on_realtime = (real.tv_sec - boot.tv_sec) * 1000000000ll + (real.tv_nsec - boot.tv_nsec);
  return boot_on_realtime + static_cast<int64_t>((ticks + 1) * (1000000000ull / static_cast<uint64_t>(per_second)));
}

// |path| was written since this process started: by an earlier session of this process
// (whatever its format: a gzip or NVTXT header says nothing readable), by a session of a second
// copy of the plugin that is still capturing (its spool), or by another process running now.
// Its name is not this session's to take.
bool WrittenSinceThisProcessStarted(const std::string& path) {
  static const int64_t started = ProcessStartRealtimeNs();
  struct stat st;
  if (started == 0 || stat(path.c_str(), &st) != 0) return false;
  return st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec >= started;
}

}  // namespace

std::string SessionTracePath(const std::string& expanded, int os_pid, std::string* last_path) {
  if (IsWrittenInPlace(expanded)) return expanded;  // a device or pipe is written in place
  auto with_suffix = [&](int64_t n) {
    // Before the trace extension, whatever the format: "t.2.pftrace.gz", not "t.pftrace.gz.2".
    const size_t ext = TraceExtensionLength(expanded);
    return expanded.substr(0, expanded.size() - ext) + "." + std::to_string(n) +
           expanded.substr(expanded.size() - ext);
  };
  auto taken = [&](const std::string& p) {
    return WrittenByThisProcess(p, os_pid) || WrittenSinceThisProcessStarted(p) ||
           WrittenSinceThisProcessStarted(p + ".kspool");
  };
  bool earlier = expanded == *last_path || taken(expanded);
  *last_path = expanded;
  if (!earlier) return expanded;
  for (int n = 2; n < 10000; ++n) {
    std::string p = with_suffix(n);
    struct stat st;
    if (stat(p.c_str(), &st) != 0 && stat((p + ".kspool").c_str(), &st) != 0) return p;
  }
  return with_suffix(os_pid);
}

}  // namespace katrace
