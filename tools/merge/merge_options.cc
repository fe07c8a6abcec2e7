// katrace-merge argument parsing (see merge_options.h).
#include "tools/merge/merge_options.h"

#include <cstdio>
#include <utility>

#include "common/duration.h"
#include "common/ends_with.h"
#include "common/event_mask.h"
#include "common/in_place_path.h"
#include "katrace/event_kinds.h"

namespace katrace::tools {

const char kMergeUsage[] =
    "usage: katrace-merge -o OUT [options] FILE...\n"
    "\n"
    "Merges per-process katrace traces into one trace for Perfetto: every file is rebased on\n"
    "its recorded clock base onto one timeline (t = 0 at the earliest base), ranks stay\n"
    "separate processes (pids) sorted by rank, flows and metadata are kept (flow ids are made\n"
    "unique per file). A rank whose pid an earlier file of another process already holds moves\n"
    "to the lowest free pid, with one line naming both files; only copies of one capture (same\n"
    "host, OS pid and clock base) are merged once, the complete one. A rank that a merged\n"
    "input holds is left out of the inputs after it, merged inputs first (a merged trace\n"
    "merged again with one of its own inputs, two merged traces that share ranks). Files that\n"
    "cannot be read are reported and left out.\n"
    "\n"
    "Formats: the inputs may be Chrome JSON (.json) or Perfetto protobuf (.pftrace), each\n"
    "optionally .gz, mixed as they come (each file is read by its content). The output's\n"
    "format follows OUT's name: .pftrace or .pftrace.gz writes Perfetto protobuf, anything\n"
    "else Chrome JSON; --format says it for '-' or another name. Both hold the same events;\n"
    "an arrow whose slice at one end --kinds leaves out is left out of both.\n"
    "\n"
"options:\n"
    "  -o, --output OUT   output file; gzip when it ends in .gz or with --gzip; '-' = stdout\n"
    "  --gzip             gzip the output, adding .gz to its name (as KATRACE_GZIP does)\n"
    "  --format F         json or perfetto (default: OUT's extension; must agree with it)\n"
    "  --ranks LIST       keep only these ranks (the inputs' pids), e.g. 0-7,12\n"
    "  --from T, --to T   keep only events overlapping this window of the merged timeline;\n"
    "                     T counts from its start: 1.5s, 200ms, 35us, 100ns, 2m (a bare\n"
    "                     number is seconds, as for KATRACE_DELAY)\n"
    "  --kinds LIST       keep only these events, named as in KATRACE_MASK: kinds (coll,\n"
    "                     KernelStep, ...; any case), the sets api, proxy, net, host, gpu,\n"
    "                     ce, all, none, default, and -name to remove one, joined by , + |\n"
    "                     or spaces, left to right; a kind also keeps the slices derived from\n"
    "                     it (coll and p2p: their GPU extents, CollGpu; kernelstep: its\n"
    "                     wait and transfer halves; proxystep: ProxyStepState), which can\n"
    "                     also be named alone (collgpu, a Coll's; kernelstepwait,\n"
    "                     kernelsteptransfer, proxystepstate);\n"
    "                     flow, counter and instant keep those events (all includes them).\n"
    "                     E.g. coll,gpu,flow or all,-proxystep. Without --kinds every event\n"
    "                     is kept; metadata always is\n"
    "  --align-hosts      put the files of each host on the clock of the first rank's host:\n"
    "                     the host is shifted by the median difference of the GPU ends of\n"
    "                     the collectives (same communicator and sequence number) it\n"
    "                     shares with a host already aligned, for clocks that NTP keeps\n"
    "                     apart by more than a collective lasts; reads every input once more\n"
    "  --warn-mb N        warn when the output passes N MB (default 300: Perfetto's web UI\n"
    "                     struggles past a few hundred MB of JSON; protobuf is read faster)\n"
    "  -q, --quiet        no summary line\n"
    "  -h, --help         this text\n"
    "\n"
    "Events whose ts (or a slice's dur) is not a usable time are left out, counted per file\n"
    "with the first one named.\n"
    "\n"
    "exit status: 0 merged, 1 merged but some inputs were unreadable or cut, or had events left\n"
    "out (unusable times, protobuf problems), or a host --align-hosts could not align, 2 bad\n"
    "usage or no output\n";

namespace {

// "--from: '1x' has an unknown unit 'x' (want ...)".
bool ParseTime(const char* option, const std::string& value, std::optional<int64_t>* out, std::string* error) {
  int64_t ns = 0;
  if (!ParseDuration(value, &ns, error)) {
    *error = std::string(option) + ": '" + value + "' " + *error + " (want " + kDurationSyntax + ")";
    return false;
  }
  *out = ns;
  return true;
}

// The words --kinds takes besides the kind grammar's: events that are not slices of a kind.
const std::vector<std::string> kMergeExtraKinds = {"flow", "counter", "instant"};

}  // namespace

bool ParseMergeKinds(const std::string& text, std::optional<std::set<std::string>>* kinds,
                     std::string* error) {
  KindSelection selection;
  if (!ParseKindSelection(text, kMergeExtraKinds, &selection, error)) {
    *error = "--kinds: '" + text + "': " + *error;
    return false;
  }
  // The trace's `cat`s are the table's names, so the selection becomes the set of names to keep.
  std::set<std::string> cats;
  size_t everything = 0;
  for (const KindInfo& k : kKindInfo) {
    ++everything;
    if ((selection.mask & static_cast<int>(k.type_bit)) != 0) cats.insert(k.name);
  }
  for (size_t i = 0; i < sizeof(kDerivedKinds) / sizeof(kDerivedKinds[0]); ++i, ++everything) {
    if ((selection.derived >> i) & 1) cats.insert(kDerivedKinds[i].name);
  }
  for (size_t i = 0; i < kMergeExtraKinds.size(); ++i, ++everything) {
    if ((selection.extras >> i) & 1) cats.insert(kMergeExtraKinds[i]);
  }
  // Everything (`all`) is no selection: events of a category the table does not know stay too.
  if (cats.size() == everything) {
    kinds->reset();
  } else {
    *kinds = std::move(cats);
  }
  return true;
}

int ParseMergeOptions(int argc, char** argv, MergeOptions* options) {
  bool format_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string value, error;
    bool ok = true;
    if (arg == "-h" || arg == "--help") {
      std::fputs(kMergeUsage, stdout);
      return -1;
    } else if (arg == "--gzip") {
      options->gzip = true;
    } else if (arg == "--align-hosts") {
      options->align_hosts = true;
    } else if (arg == "-q" || arg == "--quiet") {
      options->quiet = true;
    } else if (TakeOption(argc, argv, &i, "-o", &value, &ok) ||
               TakeOption(argc, argv, &i, "--output", &value, &ok)) {
      if (!ok) error = "-o needs a file name";
      options->output = value;
    } else if (TakeOption(argc, argv, &i, "--format", &value, &ok)) {
      TraceFormat format = TraceFormat::kJson;
      if (!ok || !ParseTraceFormat(value, &format) || format == TraceFormat::kNvtxt) {
        error = "--format: '" + value + "': want json or perfetto";
      }
      format_given = true;
      options->format = format;
    } else if (TakeOption(argc, argv, &i, "--ranks", &value, &ok)) {
      if (!ok) error = "--ranks needs a list";
      if (ok && options->ranks.Parse(value, &error)) options->ranks_text = value;
    } else if (TakeOption(argc, argv, &i, "--from", &value, &ok)) {
      if (!ok) error = "--from needs a time";
      if (ok) ParseTime("--from", value, &options->from_ns, &error);
    } else if (TakeOption(argc, argv, &i, "--to", &value, &ok)) {
      if (!ok) error = "--to needs a time";
      if (ok) ParseTime("--to", value, &options->to_ns, &error);
    } else if (TakeOption(argc, argv, &i, "--kinds", &value, &ok)) {
      if (!ok) error = "--kinds needs a list";
      if (ok) ParseMergeKinds(value, &options->kinds, &error);
    } else if (TakeOption(argc, argv, &i, "--warn-mb", &value, &ok)) {
      uint64_t mb = 0;
      if (!ok || !ParseUint64(value, &mb)) error = "--warn-mb needs a number";
      options->warn_bytes = mb * 1000 * 1000;
    } else if (arg.size() > 1 && arg[0] == '-') {
      error = "unknown option " + arg;
    } else {
      options->inputs.push_back(arg);
    }
    if (!error.empty()) {
      std::fprintf(stderr, "katrace-merge: %s\n", error.c_str());
      return 2;
    }
  }
  std::string error;
  if (options->output.empty()) error = "no output file (-o OUT)";
  if (options->inputs.empty()) error = "no input files";
  if (options->from_ns && options->to_ns && *options->to_ns < *options->from_ns) {
    error = "--to is before --from";
  }
  if (!error.empty()) {
    std::fprintf(stderr, "katrace-merge: %s\n%s", error.c_str(), kMergeUsage);
    return 2;
  }
  // A file whose name says one format and holds the other would be misread by every reader that
  // goes by the name (Perfetto's UI among them): --format must agree with a name of ours.
  const bool named = options->output != "-" && TraceExtensionLength(options->output) != 0;
  const TraceFormat by_name = TraceFormatOfPath(options->output);
  if (named && by_name == TraceFormat::kNvtxt) {
    std::fprintf(stderr, "katrace-merge: cannot write %s: katrace-merge writes Chrome JSON or Perfetto "
                 "protobuf (name the output .json, .pftrace, or either with .gz)\n",
                 options->output.c_str());
    return 2;
  }
  if (named && format_given && by_name != options->format) {
    std::fprintf(stderr, "katrace-merge: --format %s but the output %s is named as %s\n",
                 TraceFormatName(options->format), options->output.c_str(), TraceFormatName(by_name));
    return 2;
  }
  if (named) options->format = by_name;
  // As KATRACE_GZIP does: the name says what the file holds (a device or a pipe keeps its name).
  if (options->gzip && options->output != "-" && !EndsWith(options->output, ".gz") &&
      !IsWrittenInPlace(options->output)) {
    options->output += ".gz";
  }
  if (OutputIsAnInput(options->output, options->inputs, &error)) {
    std::fprintf(stderr, "katrace-merge: %s\n", error.c_str());
    return 2;
  }
  if (options->output != "-" && EndsWith(options->output, ".gz")) options->gzip = true;
  return 0;
}

}  // namespace katrace::tools
