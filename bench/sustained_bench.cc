// Sustained cost per collective through the exported ABI of a real plugin .so, the way NCCL's
// enqueue path calls it: GroupApi (start, two states, stop), CollApi (start, stop), Group (start,
// stop), Coll (start, stop) and one KernelCh (start, KernelChStop, stop): 13 callbacks per
// collective, back to back on one thread with no pause, so the plugin's capture and its writer
// must keep up with the producer for the whole run. Each plugin named on the command line is run
// in turn in this one process, so their ratio is measured under the same machine load.
//
//   sustained_bench COLLECTIVES PLUGIN.so[@NAME=VALUE] [PLUGIN.so[@NAME=VALUE]...]
//
// The plugin's own configuration comes from the environment (KATRACE_MASK, KATRACE_OUTPUT...);
// "@NAME=VALUE" sets one more variable for that run only, so one plugin can be compared with
// itself configured two ways in one process (katrace reads its configuration per session).
// Prints per plugin: ns per collective while capturing, and the time finalize took (for katrace:
// closing the spool and building the trace).
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>

#include <string>
#include <vector>

#include "bench/enqueue_collective.h"
#include "nccl_profiler/v6.h"

namespace {

using katrace_bench::EnqueueCollective;
using katrace_bench::NowNs;

struct Result {
  double ns_per_coll;
  double finalize_ms;
};

// The count of |kind| in the footer object |object| ("events" or "drops") near the end of a
// katrace trace; -1 when absent.
long long FooterCount(const std::string& tail, const std::string& object, const std::string& kind) {
  size_t at = tail.rfind("\"" + object + "\":{");
  if (at == std::string::npos) return -1;
  size_t end = tail.find('}', at);
  size_t k = tail.find("\"" + kind + "\":", at);
  if (k == std::string::npos || k > end) return -1;
  return atoll(tail.c_str() + k + kind.size() + 3);
}

// katrace writes its trace at finalize: check that it holds every Coll and KernelCh and lost none.
void ReportTrace(uint64_t collectives) {
  const char* path = getenv("KATRACE_OUTPUT");
  FILE* f = path != nullptr ? fopen(path, "rb") : nullptr;
  if (f == nullptr) return;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  long from = size > 65536 ? size - 65536 : 0;
  fseek(f, from, SEEK_SET);
  std::string tail(static_cast<size_t>(size - from), '\0');
  size_t got = fread(&tail[0], 1, tail.size(), f);
  fclose(f);
  tail.resize(got);
  long long drops = 0;
  for (const char* kind : {"Coll", "KernelCh", "GroupApi", "CollApi", "Group"}) drops += std::max(0LL, FooterCount(tail, "drops", kind));
  // Callbacks that waited for the spool writer to free buffer space: when they are many, the
  // figure above measures the writer's disk and page cache more than the callbacks.
  const size_t waits_at = tail.rfind("\"waits\":");
  const long long waits = waits_at == std::string::npos ? -1 : atoll(tail.c_str() + waits_at + 8);
  printf("  trace %s: Coll %lld, KernelCh %lld (of %llu each), GroupApi %lld, CollApi %lld, Group %lld, lost %lld, "
         "waits for buffer space %lld\n",
         path, FooterCount(tail, "events", "Coll"), FooterCount(tail, "events", "KernelCh"),
         static_cast<unsigned long long>(collectives), FooterCount(tail, "events", "GroupApi"),
         FooterCount(tail, "events", "CollApi"), FooterCount(tail, "events", "Group"), drops, waits);
  // Bytes on disk per recorded event (per NCCL event: a Coll and a KernelCh per collective under
  // the mask coll,kernelch), to compare the trace formats.
  const long long coll = FooterCount(tail, "events", "Coll"), kch = FooterCount(tail, "events", "KernelCh");
  if (coll > 0 && kch >= 0) {
    printf("  trace size %.1f MB: %.1f B per event\n", static_cast<double>(size) / 1e6,
           static_cast<double>(size) / static_cast<double>(coll + kch));
  }
}

bool Run(const char* path, uint64_t collectives, Result* out) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    fprintf(stderr, "cannot load %s: %s\n", path, dlerror());
    return false;
  }
  auto* p = static_cast<ncclProfiler_v6_t*>(dlsym(lib, "ncclProfiler_v6"));
  if (p == nullptr) {
    fprintf(stderr, "%s exports no ncclProfiler_v6\n", path);
    return false;
  }
  static int mask = 0;
  void* ctx = nullptr;
  p->init(&ctx, 0x5eed, &mask, "sustained", 1, 1, 0, nullptr);
  uint64_t gpu = 0;  // set by EnqueueCollective
  uint64_t t0 = NowNs();
  for (uint64_t i = 0; i < collectives; ++i) EnqueueCollective(p, ctx, i, &gpu);
  uint64_t t1 = NowNs();
  p->finalize(ctx);
  uint64_t t2 = NowNs();
  dlclose(lib);
  out->ns_per_coll = static_cast<double>(t1 - t0) / static_cast<double>(collectives);
  out->finalize_ms = static_cast<double>(t2 - t1) / 1e6;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s COLLECTIVES PLUGIN.so [PLUGIN.so...]\n", argv[0]);
    return 2;
  }
  uint64_t n = strtoull(argv[1], nullptr, 10);
  std::vector<Result> results;
  for (int i = 2; i < argc; ++i) {
    Result r{};
    std::string plugin = argv[i], name;
    const size_t at = plugin.find('@');
    if (at != std::string::npos) {
      const std::string assignment = plugin.substr(at + 1);
      plugin.resize(at);
      const size_t eq = assignment.find('=');
      if (eq == std::string::npos || eq == 0) {
        fprintf(stderr, "%s: '%s' is not NAME=VALUE\n", argv[0], assignment.c_str());
        return 2;
      }
      name = assignment.substr(0, eq);
      setenv(name.c_str(), assignment.substr(eq + 1).c_str(), 1);
    }
    const bool ok = Run(plugin.c_str(), n, &r);
    if (!name.empty()) unsetenv(name.c_str());
    if (!ok) return 1;
    printf("%-48s %10.1f ns/collective (13 callbacks)   finalize %8.1f ms\n", argv[i], r.ns_per_coll, r.finalize_ms);
    ReportTrace(n);
    if (const char* path = getenv("KATRACE_OUTPUT")) unlink(path);
    results.push_back(r);
  }
  for (size_t i = 1; i < results.size(); ++i) {
    printf("ratio %s / %s: %.2fx\n", argv[2], argv[2 + i], results[0].ns_per_coll / results[i].ns_per_coll);
  }
  return 0;
}
