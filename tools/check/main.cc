// katrace-check: validates katrace traces the way Perfetto's JSON importer will read them, plus
// katrace's own invariants. Exit status 0 = every file clean, 1 = problems, 2 = usage.
#include <cstdio>
#include <string>
#include <vector>

#include "tools/check/trace_checker.h"
#include "tools/common/cli_args.h"

namespace {

// Containment slack is for clock jitter (ns to us); an hour already holds any GPU child in any
// parent, and the bound keeps the extent arithmetic far from int64 overflow.
constexpr uint64_t kMaxSlackNs = uint64_t{3600} * 1000 * 1000 * 1000;

constexpr char kUsage[] =
    "usage: katrace-check [options] FILE...\n"
    "\n"
    "Validates katrace traces (.json, .pftrace, each optionally .gz) the way Perfetto's JSON\n"
    "importer reads them (a .pftrace as the JSON trace of the same capture, its protobuf decoded):\n"
    "valid JSON with a closing ']' and no {} sentinel; required fields and types per phase;\n"
    "per-track nesting of slices (no partial overlap, same-start parent before child); flows\n"
    "that pair up and bind to slices; process/track names and the clock base; GPU stamps in\n"
    "order; KernelCh/KernelStep/CollGpu inside their Coll/P2p's GPU extent; the footer with the\n"
    "drop counters. Prints each problem as FILE:LINE: error: ... [code] and goes on with the\n"
    "other files. A .pftrace has no lines: there the number is the byte offset of the packet,\n"
    "and the message says \"(at byte N)\"; what decodes but makes no sense (an unknown interned\n"
    "id, an event on an undeclared track, a slice or a flow that never ends) is [protobuf].\n"
    "\n"
    "options:\n"
    "  --max-problems N   show at most N problems per code and file (default 20)\n"
    "  --slack-ns N       tolerance for the GPU-extent containment (default 0, at most an\n"
    "                     hour: 3600000000000)\n"
    "  --sort-mem SIZE    memory for the out-of-order checks, e.g. 64M (default 128M); more\n"
    "                     spills to temporary files in $TMPDIR\n"
    "  --strict           warnings fail the check too\n"
    "  -q, --quiet        no line for clean files\n"
    "  -h, --help         this text\n"
    "\n"
    "exit status: 0 all files clean, 1 problems found, 2 bad usage\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace katrace::tools;
  CheckOptions options;
  bool strict = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string value, error;
    bool ok = true;
    uint64_t number = 0;
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "-q" || arg == "--quiet") {
      options.quiet = true;
    } else if (arg == "--strict") {
      strict = true;
    } else if (TakeOption(argc, argv, &i, "--max-problems", &value, &ok)) {
      if (!ok || !ParseUint64(value, &number)) error = "--max-problems needs a number";
      options.max_per_code = number;
    } else if (TakeOption(argc, argv, &i, "--slack-ns", &value, &ok)) {
      if (!ok || !ParseUint64(value, &number)) {
        error = "--slack-ns needs a number";
      } else if (number > kMaxSlackNs) {
        error = "--slack-ns " + value + " is more than an hour (" + std::to_string(kMaxSlackNs) +
                " ns), the most it takes";
      }
      options.slack_ns = static_cast<int64_t>(number);
    } else if (TakeOption(argc, argv, &i, "--sort-mem", &value, &ok)) {
      if (!ok) error = "--sort-mem needs a size";
      if (ok && ParseByteSize(value, &number, &error)) options.sort_memory_bytes = number;
    } else if (arg.size() > 1 && arg[0] == '-') {
      error = "unknown option " + arg;
    } else {
      files.push_back(arg);
    }
    if (!error.empty()) {
      std::fprintf(stderr, "katrace-check: %s\n%s", error.c_str(), kUsage);
      return 2;
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "katrace-check: no input files\n%s", kUsage);
    return 2;
  }
  bool failed = false;
  for (const std::string& file : files) {
    const CheckSummary summary = CheckTraceFile(file, options, stdout);
    failed |= summary.errors > 0 || (strict && summary.warnings > 0);
  }
  std::fflush(stdout);
  return failed ? 1 : 0;
}
