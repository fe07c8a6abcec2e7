#include "plugin/process_identity.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

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

bool IsRegularOrAbsent(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode);
}

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

}  // namespace

std::string SessionTracePath(const std::string& expanded, int os_pid, std::string* last_path) {
  if (!IsRegularOrAbsent(expanded)) return expanded;  // a device or pipe is written in place
  auto with_suffix = [&](int n) {
    std::string p = expanded;
    size_t dot = p.find(".json");
    std::string suffix = "." + std::to_string(n);
    return dot == std::string::npos ? p + suffix : p.insert(dot, suffix);
  };
  bool earlier = expanded == *last_path || WrittenByThisProcess(expanded, os_pid);
  *last_path = expanded;
  if (!earlier) return expanded;
  for (int n = 2; n < 10000; ++n) {
    std::string p = with_suffix(n);
    struct stat st;
    if (stat(p.c_str(), &st) != 0) return p;
  }
  return with_suffix(os_pid);
}

}  // namespace katrace
