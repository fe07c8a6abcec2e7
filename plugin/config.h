// Configuration read once per process from the environment. Every bad value is reported (one line
// naming the variable, the value and what is used instead) and replaced by its default.
#ifndef KATRACE_PLUGIN_CONFIG_H_
#define KATRACE_PLUGIN_CONFIG_H_

#include <stdint.h>

#include <functional>
#include <string>
#include <vector>

#include "common/event_mask.h"  // kDefaultMask; the mask grammar, shared with katrace-sim
#include "katrace/event_kinds.h"

namespace katrace {

struct Config {
  int mask = kDefaultMask;
  bool mask_from_env = false;
  // Output path template: {rank}, {pid}, {host} are substituted. ".gz" at the end, or gzip=true,
  // writes gzip.
  std::string output = "katrace-{host}-{pid}.json";
  bool gzip = false;
  bool summary = true;
  std::string summary_path;  // empty: next to the trace, "<trace>.summary.txt"
  bool nvtx = true;
  uint32_t pool_size[kKindCount] = {};
  // Capture buffers: one per thread (a power of two), all of them within the budget.
  uint64_t thread_buffer_bytes = 1u << 20;
  uint64_t buffer_budget_bytes = 64u << 20;
  bool drop_when_full = false;  // KATRACE_ON_FULL=drop; default wait
  bool compress_spool = true;   // KATRACE_SPOOL_COMPRESS=lz4|none
  bool export_trace = true;     // KATRACE_EXPORT=on|off: build the trace at the end, or keep the spool
  bool keep_spool = false;      // KATRACE_KEEP_SPOOL=1: keep the spool after a successful export
  std::string clock = "auto";   // KATRACE_CLOCK=auto|tsc|monotonic
};

// Lookup of an environment variable; returns nullptr when unset. Injected so tests need not
// touch the real environment.
using EnvLookup = std::function<const char*(const char*)>;
using WarnSink = std::function<void(const std::string&)>;

Config ReadConfig(const EnvLookup& env, const WarnSink& warn);

// Substitutes {rank}, {pid}, {host} (and {comm} when given) in |tmpl|.
std::string ExpandOutputTemplate(const std::string& tmpl, int rank, int pid, const std::string& host);

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CONFIG_H_
