// katrace-stats argument parsing (see stats_options.h).
#include "tools/stats/stats_options.h"

#include <cstdio>

#include "tools/common/cli_args.h"

namespace katrace::tools {

const char kStatsUsage[] =
    "usage: katrace-stats [options] FILE...\n"
    "\n"
    "Summarises katrace traces (.json or .pftrace, each optionally .gz; one or many ranks) in\n"
    "the shape of Nsight Systems' summaries: Time (%), Busy, Total Time, Instances, Avg, Med,\n"
    "Min, Max, StdDev, Name. A .pftrace gives the same tables as the JSON trace of its capture.\n"
    "Busy is the time at least one of the row's slices ran (concurrent ones count once) and\n"
    "Time (%) = Busy / the table's span, so rows need not add up to 100; Total Time is the sum of\n"
    "the durations. The straggler tables, of delays rather than slices, give Time (%) as the\n"
    "share of the sum of Total Time. Each duration column has one unit, named in its header.\n"
    "Ranks are the traces' pids (one per rank, several in a file of a multi-rank process or a\n"
    "merged trace). A rank in two inputs (a file given twice, a merged trace beside one of its\n"
    "own inputs: ranks are matched as katrace-merge matches them) counts once, from the first\n"
    "input that holds it, merged inputs first; the others leave it out, one line each, exit 1.\n"
    "Reports (all by default):\n"
    "  host       host-side activity, rows \"<kind> <name>\" (the plugin's own summary)\n"
    "  gpu        GPU-side activity (KernelCh, KernelStep with its wait and transfer, CollGpu;\n"
    "             one kernel reported by several tasks is one row, e.g. KernelCh Send+Recv)\n"
    "  coll       collectives: GPU time per function, size, algorithm and protocol\n"
    "  channel    KernelStep wait and transfer time per channel\n"
    "  peer       KernelStep wait and transfer time per peer\n"
    "  bw         algorithm and bus bandwidth per collective size\n"
    "  straggler  per collective instance (comm, func, seq) the rank that arrived last and by\n"
    "             how much; the channels and peers that are consistently slowest\n"
    "Incomplete events are left out of every table (the straggler report still takes an\n"
    "incomplete Coll's start as its arrival: a rank that hung there did arrive), and so are\n"
    "slices whose ts or dur is not a usable time (counted, with the first one named).\n"
    "\n"
    "options:\n"
    "  --report LIST      only these reports, e.g. host,gpu\n"
    "  --format F         text (default), csv or json\n"
    "  -o, --output FILE  write there instead of stdout (a name ending in .gz: gzip)\n"
    "  --top N            rows in the worst-instance and slowest-link lists (default 10)\n"
    "  --nranks N         communicator size for bus bandwidth (default: from the footer, else\n"
    "                     1 + the highest rank or peer seen)\n"
    "  --arrival WHAT     straggler arrival: host (Coll start, default) or gpu (GPU start)\n"
    "  --sort-mem SIZE    memory for sorting arrivals across ranks (default 256M)\n"
    "  --align-hosts      put the files of each host on the clock of the first input's host\n"
    "                     before comparing ranks (as katrace-merge --align-hosts does): the\n"
    "                     straggler report compares arrivals of different hosts, whose clocks\n"
    "                     NTP keeps milliseconds apart; reads every input once more\n"
    "  --hang             the inputs are hang reports (<trace>.hang.json, KATRACE_HANG_TIMEOUT):\n"
    "                     merge them into \"rank R waits on peer P on channel C since T\" lines,\n"
    "                     oldest first, and a one-line verdict\n"
    "  -h, --help         this text\n"
    "\n"
    "exit status: 0 all files read, 1 some files unreadable or cut (the rest are summarised),\n"
    "events left out for their times or protobuf problems, a report incomplete (a sort\n"
    "that could not spill to $TMPDIR), or a host --align-hosts could not align; 2 bad usage,\n"
    "or the output is also an input or cannot be written\n";

int ParseStatsOptions(int argc, char** argv, StatsOptions* options) {
  static const std::set<std::string> kReports = {"host",    "gpu", "coll",     "channel",
                                                 "peer",    "bw",  "straggler"};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string value, error;
    bool ok = true;
    uint64_t number = 0;
    if (arg == "-h" || arg == "--help") {
      std::fputs(kStatsUsage, stdout);
      return -1;
    } else if (arg == "--align-hosts") {
      options->align_hosts = true;
    } else if (TakeOption(argc, argv, &i, "-o", &value, &ok) ||
               TakeOption(argc, argv, &i, "--output", &value, &ok)) {
      if (!ok) error = "-o needs a file name";
      options->output = value;
    } else if (TakeOption(argc, argv, &i, "--format", &value, &ok)) {
      if (ok && value == "text") {
        options->format = StatsFormat::kText;
      } else if (ok && value == "csv") {
        options->format = StatsFormat::kCsv;
      } else if (ok && value == "json") {
        options->format = StatsFormat::kJson;
      } else {
        error = "--format takes text, csv or json";
      }
    } else if (TakeOption(argc, argv, &i, "--report", &value, &ok)) {
      if (!ok) error = "--report needs a list";
      for (const std::string& report : SplitList(value)) {
        if (kReports.count(report) == 0) {
          error = "unknown report '" + report +
                  "'; known: host, gpu, coll, channel, peer, bw, straggler";
        }
        options->reports.insert(report);
      }
    } else if (TakeOption(argc, argv, &i, "--top", &value, &ok)) {
      if (!ok || !ParseUint64(value, &number)) error = "--top needs a number";
      options->top_n = number;
    } else if (TakeOption(argc, argv, &i, "--nranks", &value, &ok)) {
      if (!ok || !ParseUint64(value, &number) || number == 0) error = "--nranks needs a number";
      options->nranks = static_cast<int64_t>(number);
    } else if (TakeOption(argc, argv, &i, "--arrival", &value, &ok)) {
      if (ok && (value == "host" || value == "gpu")) {
        options->gpu_arrival = value == "gpu";
      } else {
        error = "--arrival takes host or gpu";
      }
    } else if (arg == "--hang") {
      options->hang = true;
    } else if (TakeOption(argc, argv, &i, "--sort-mem", &value, &ok)) {
      if (!ok) error = "--sort-mem needs a size";
      if (ok && ParseByteSize(value, &number, &error)) options->sort_memory_bytes = number;
    } else if (arg.size() > 1 && arg[0] == '-') {
      error = "unknown option " + arg;
    } else {
      options->inputs.push_back(arg);
    }
    if (!error.empty()) {
      std::fprintf(stderr, "katrace-stats: %s\n", error.c_str());
      return 2;
    }
  }
  if (options->inputs.empty()) {
    std::fprintf(stderr, "katrace-stats: no input files\n%s", kStatsUsage);
    return 2;
  }
  std::string error;
  if (OutputIsAnInput(options->output, options->inputs, &error)) {
    std::fprintf(stderr, "katrace-stats: %s\n", error.c_str());
    return 2;
  }
  return 0;
}

}  // namespace katrace::tools
