#include "tools/sim/sim_options.h"

#include <limits.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/duration.h"
#include "common/event_mask.h"
#include "katrace/step_ring.h"
#include "tools/sim/event_mask.h"
#include "tools/sim/plugin_loader.h"

namespace katrace::sim {
namespace {

constexpr const char kUsage[] =
    "usage: katrace-sim [options]\n"
    "Drives an NCCL profiler plugin exactly as NCCL core does (application, proxy and\n"
    "host-callback threads, parents, mask snapshots, GPU-like timestamps) and reports what the\n"
    "plugin recorded and how fast.\n"
    "\n"
    "  --plugin PATH     plugin .so (default: ../libnccl-profiler-katrace.so next to this binary)\n"
    "  --abi v4|v5|v6    use this exported version instead of the newest one\n"
    "  --ranks N         ranks, one application + one proxy thread each (default 4, 2..256)\n"
    "  --channels C      channels per communicator (default 4, 1..64)\n"
    "  --iters N         iterations over the op list (default 20)\n"
    "  --ops LIST        allreduce,allgather,reducescatter,sendrecv,alltoall (default all)\n"
    "  --size BYTES      bytes per operation, e.g. 4096, 64K, 1M (default 1M)\n"
    "  --mask MASK       set the shared event mask before init: a number (0x.. ok) or names,\n"
    "                    e.g. coll,kernelch, all or all,-proxystep (katrace's KATRACE_MASK\n"
    "                    grammar); katrace overrides NCCL's mask at init with\n"
    "                    its own KATRACE_MASK (or default), so this also sets KATRACE_MASK\n"
    "                    unless it is already set\n"
    "  --graph           capture each op once in a CUDA graph and replay it --iters times\n"
    "  --bench           never wait for emulated GPU time: maximum callback rate\n"
    "  --nccl-quirks     also replay NCCL's known NULL-handle NetPlugin stops and the stale\n"
    "                    CollApi double stop\n"
    "  --seed N          seed for GPU skew and network retries (default 1)\n"
    "  --tick-ns N       emulated %globaltimer tick (default 1024)\n"
    "  --gpu-clock MODEL what the emulated %globaltimer counts: realtime (default), boot (from\n"
    "                    boot, as CLOCK_BOOTTIME), offset:+5ms / offset:-250us (realtime plus a\n"
    "                    fixed signed duration, within an hour), drift:200ppm (gains that much)\n"
    "  --gpu-jitter D    every GPU stamp moves by up to the duration D either way (default 0;\n"
    "                    e.g. 300ns, at most 1ms)\n"
    "  --bandwidth GBPS  emulated per-rank bandwidth in GB/s (default 20, 0.001..1000000)\n"
    "  --kernel-steps on|off\n"
    "                    KernelStep events (default on): per rank, an emulated device writer\n"
    "                    thread stamps every slice into per-channel rings and the proxy thread\n"
    "                    drains them into the plugin; needs a v6 plugin whose mask has KernelStep\n"
    "  --step-sample K   keep every K-th slice of each role (default 1: all)\n"
    "  --ring-depth-log2 N\n"
    "                    slots per channel ring, as a power of two (1..20; default 14, lowered\n"
    "                    when all ranks' rings would pin more than 1 GiB)\n"
    "  --hang RANK:CHANNEL:N\n"
    "                    inject a hang: that rank's channel stops progressing after N operations\n"
    "                    (its KernelCh, one KernelStep towards the channel's peer and that peer's\n"
    "                    ProxySteps start and never stop; the rest goes on); the hung rank runs\n"
    "                    without emulated KernelStep writers\n"
    "  --hang-for DURATION\n"
    "                    how long the hang lasts before the sim gives up on those events, leaving\n"
    "                    them open, and finishes the run (default 10s, at most 1h)\n"
    "  --quiet           print no report, and no katrace summary (sets KATRACE_SUMMARY=0\n"
    "                    unless it is already set)\n"
    "  --help            this text\n"
    "Durations (D, DURATION): a number with a unit ns, us, ms, s, m or h, e.g. 500ms or 1.5s;\n"
    "a bare number is seconds, as in KATRACE_DELAY and Nsight Systems.\n"
    "Environment: NCCL_DEBUG=WARN or INFO shows the plugin's log lines, as NCCL does (unset, the\n"
    "plugin prints its warnings itself); KATRACE_OUTPUT, when set, is\n"
    "printed as the trace location.\n";

constexpr int64_t kHourNs = 3600ll * 1000 * 1000 * 1000;

// A duration (common/duration.h; |signed_ok|: an offset, which may be negative) within
// |lo|..|hi| ns, or false with |error| = |subject| ("--hang-for: '3x'") and what is wrong.
bool DurationInRange(const std::string& subject, const std::string& text, bool signed_ok, int64_t lo,
                     int64_t hi, const std::string& range_text, int64_t* ns, std::string* error) {
  std::string why;
  int64_t value = 0;
  const bool parsed = signed_ok ? ParseSignedDuration(text, &value, &why) : ParseDuration(text, &value, &why);
  if (!parsed) {
    *error = subject + " " + why + " (want " + kDurationSyntax + ")";
    return false;
  }
  if (value < lo || value > hi) {
    *error = subject + " is not " + range_text;
    return false;
  }
  *ns = value;
  return true;
}

// --gpu-clock's MODEL; false with |error| when it is not one.
bool ParseGpuClockModel(const std::string& value, GpuClockModel* model, std::string* error) {
  GpuClockModel m = *model;
  m.spec = value;
  if (value == "realtime") {
    m.kind = GpuClockKind::kRealtime;
  } else if (value == "boot") {
    m.kind = GpuClockKind::kBoot;
  } else if (value.rfind("offset:", 0) == 0) {
    int64_t ns = 0;
    if (!DurationInRange("--gpu-clock: '" + value + "': the offset", value.substr(7), true, -kHourNs, kHourNs,
                         "within an hour either way (e.g. offset:+5ms)", &ns, error)) {
      return false;
    }
    m.kind = GpuClockKind::kOffset;
    m.offset_ns = ns;
  } else if (value.rfind("drift:", 0) == 0 && value.size() > 9 && value.compare(value.size() - 3, 3, "ppm") == 0) {
    const std::string number = value.substr(6, value.size() - 9);
    char* end = nullptr;
    double ppm = std::strtod(number.c_str(), &end);
    if (number.empty() || end == nullptr || *end != '\0' || !(ppm >= -10000 && ppm <= 10000)) {
      *error = "--gpu-clock: '" + value + "': the drift is not a number of ppm within ±10000";
      return false;
    }
    m.kind = GpuClockKind::kDrift;
    m.drift_ppm = ppm;
  } else {
    *error = "--gpu-clock: '" + value + "' is not realtime, boot, offset:<duration> or drift:<N>ppm";
    return false;
  }
  *model = m;
  return true;
}

std::optional<long long> ParseInteger(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 0);
  if (errno != 0 || end == nullptr || *end != '\0') return std::nullopt;
  return value;
}

// --hang's RANK:CHANNEL:N; the bounds against --ranks and --channels are checked at the end.
bool ParseHangSpec(const std::string& value, HangSpec* hang, std::string* error) {
  const size_t a = value.find(':');
  const size_t b = a == std::string::npos ? a : value.find(':', a + 1);
  std::optional<long long> rank, channel, ops;
  if (b != std::string::npos) {
    rank = ParseInteger(value.substr(0, a));
    channel = ParseInteger(value.substr(a + 1, b - a - 1));
    ops = ParseInteger(value.substr(b + 1));
  }
  if (!rank || !channel || !ops || *rank < 0 || *channel < 0 || *ops < 0 || *rank >= kMaxRanks ||
      *channel >= kMaxChannels || *ops > 1000000000) {
    *error = "--hang: '" + value + "' is not RANK:CHANNEL:N (e.g. 1:2:10: rank 1, channel 2, after 10 operations)";
    return false;
  }
  hang->rank = static_cast<int>(*rank);
  hang->channel = static_cast<int>(*channel);
  hang->after_ops = static_cast<uint64_t>(*ops);
  return true;
}

bool ParseOps(const std::string& text, std::vector<OpKind>* ops, std::string* error) {
  ops->clear();
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string name =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::optional<OpKind> kind = ParseOpKind(name);
    if (!kind) {
      *error = "--ops: unknown operation '" + name +
               "' (known: allreduce, allgather, reducescatter, sendrecv, alltoall)";
      return false;
    }
    ops->push_back(*kind);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return true;
}

bool IntInRange(const std::string& flag, const std::string& value, long long low, long long high,
                long long* out, std::string* error) {
  std::optional<long long> parsed = ParseInteger(value);
  if (!parsed || *parsed < low || *parsed > high) {
    *error = flag + ": '" + value + "' is not an integer in " + std::to_string(low) + ".." +
             std::to_string(high);
    return false;
  }
  *out = *parsed;
  return true;
}

}  // namespace

const char* UsageText() { return kUsage; }

std::optional<size_t> ParseByteSize(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  std::optional<long long> number = ParseInteger(text.substr(0, digits));
  if (!number) return std::nullopt;
  std::string suffix = text.substr(digits);
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  unsigned long long multiplier = 1;
  if (suffix.empty() || suffix == "B") {
    multiplier = 1;
  } else if (suffix == "K" || suffix == "KB" || suffix == "KIB") {
    multiplier = 1ull << 10;
  } else if (suffix == "M" || suffix == "MB" || suffix == "MIB") {
    multiplier = 1ull << 20;
  } else if (suffix == "G" || suffix == "GB" || suffix == "GIB") {
    multiplier = 1ull << 30;
  } else {
    return std::nullopt;
  }
  unsigned long long value = static_cast<unsigned long long>(*number);
  if (value > (1ull << 40) / multiplier) return std::nullopt;
  return static_cast<size_t>(value * multiplier);
}

std::string DefaultPluginPath() {
  char exe[PATH_MAX];
  ssize_t length = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (length <= 0) return "libnccl-profiler-katrace.so";
  exe[length] = '\0';
  std::string path(exe);
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  return dir + "/../libnccl-profiler-katrace.so";
}

ParseOutcome ParseCommandLine(int argc, char** argv, const std::string& default_plugin_path,
                              SimConfig* config, std::string* error) {
  config->plugin_path = default_plugin_path;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_inline_value = false;
    if (arg.rfind("--", 0) == 0) {
      size_t equals = arg.find('=');
      if (equals != std::string::npos) {
        value = arg.substr(equals + 1);
        arg = arg.substr(0, equals);
        has_inline_value = true;
      }
    }
    auto take_value = [&](std::string* out) {
      if (has_inline_value) {
        *out = value;
        return true;
      }
      if (i + 1 >= argc) {
        *error = arg + " needs a value";
        return false;
      }
      *out = argv[++i];
      return true;
    };
    auto no_value = [&] {
      if (!has_inline_value) return true;
      *error = arg + " takes no value";
      return false;
    };

    long long number = 0;
    if (arg == "--help" || arg == "-h") {
      return ParseOutcome::kHelp;
    } else if (arg == "--plugin") {
      if (!take_value(&config->plugin_path)) return ParseOutcome::kError;
      if (config->plugin_path.empty()) {
        *error = "--plugin: empty path";
        return ParseOutcome::kError;
      }
    } else if (arg == "--abi") {
      if (!take_value(&value)) return ParseOutcome::kError;
      config->forced_abi = ParseAbiVersion(value);
      if (!config->forced_abi) {
        *error = "--abi: '" + value + "' is not one of v4, v5, v6";
        return ParseOutcome::kError;
      }
    } else if (arg == "--ranks") {
      if (!take_value(&value) || !IntInRange(arg, value, 2, kMaxRanks, &number, error)) {
        return ParseOutcome::kError;
      }
      config->num_ranks = static_cast<int>(number);
    } else if (arg == "--channels") {
      if (!take_value(&value) || !IntInRange(arg, value, 1, kMaxChannels, &number, error)) {
        return ParseOutcome::kError;
      }
      config->num_channels = static_cast<int>(number);
    } else if (arg == "--iters") {
      if (!take_value(&value) || !IntInRange(arg, value, 0, 100000000, &number, error)) {
        return ParseOutcome::kError;
      }
      config->iters = static_cast<int>(number);
    } else if (arg == "--ops") {
      if (!take_value(&value) || !ParseOps(value, &config->ops, error)) {
        return ParseOutcome::kError;
      }
    } else if (arg == "--size") {
      if (!take_value(&value)) return ParseOutcome::kError;
      std::optional<size_t> size = ParseByteSize(value);
      if (!size || *size == 0) {
        *error = "--size: '" + value + "' is not a byte count (e.g. 4096, 64K, 1M, 1G)";
        return ParseOutcome::kError;
      }
      config->size_bytes = *size;
    } else if (arg == "--mask") {
      if (!take_value(&value)) return ParseOutcome::kError;
      std::string mask_error;
      int mask = 0;
      if (!ParseEventMask(value, &mask, &mask_error)) {
        *error = "--mask: '" + value + "': " + mask_error + " (known: " + EventMaskWords() + ")";
        return ParseOutcome::kError;
      }
      config->mask = mask;
    } else if (arg == "--seed") {
      if (!take_value(&value) || !IntInRange(arg, value, 0, LLONG_MAX, &number, error)) {
        return ParseOutcome::kError;
      }
      config->seed = static_cast<uint64_t>(number);
    } else if (arg == "--tick-ns") {
      if (!take_value(&value) || !IntInRange(arg, value, 1, 1000000, &number, error)) {
        return ParseOutcome::kError;
      }
      config->gpu_tick_ns = static_cast<uint64_t>(number);
    } else if (arg == "--gpu-clock") {
      if (!take_value(&value) || !ParseGpuClockModel(value, &config->gpu_clock, error)) {
        return ParseOutcome::kError;
      }
    } else if (arg == "--gpu-jitter") {
      int64_t ns = 0;
      if (!take_value(&value) ||
          !DurationInRange(arg + ": '" + value + "'", value, false, 0, 1000 * 1000, "at most 1ms", &ns, error)) {
        return ParseOutcome::kError;
      }
      config->gpu_clock.jitter_ns = static_cast<uint64_t>(ns);
    } else if (arg == "--bandwidth") {
      if (!take_value(&value)) return ParseOutcome::kError;
      char* end = nullptr;
      double gbps = std::strtod(value.c_str(), &end);
      // From 1 MB/s (a 1 MiB operation then takes a second; below, times overflow the emulated clock).
      if (value.empty() || end == nullptr || *end != '\0' || !(gbps >= 0.001) || gbps > 1e6) {
        *error = "--bandwidth: '" + value + "' is not a GB/s figure from 0.001 to 1000000";
        return ParseOutcome::kError;
      }
      config->bandwidth_gbytes_per_s = gbps;
    } else if (arg == "--kernel-steps") {
      if (!take_value(&value)) return ParseOutcome::kError;
      if (value == "on") {
        config->kernel_steps.enabled = true;
      } else if (value == "off") {
        config->kernel_steps.enabled = false;
      } else {
        *error = "--kernel-steps: '" + value + "' is not on or off";
        return ParseOutcome::kError;
      }
    } else if (arg == "--step-sample") {
      if (!take_value(&value) || !IntInRange(arg, value, 1, kMaxStepSample, &number, error)) {
        return ParseOutcome::kError;
      }
      config->kernel_steps.sample_every = static_cast<uint32_t>(number);
    } else if (arg == "--ring-depth-log2") {
      if (!take_value(&value) ||
          !IntInRange(arg, value, kStepRingMinDepthLog2, kStepRingMaxDepthLog2, &number, error)) {
        return ParseOutcome::kError;
      }
      config->kernel_steps.ring_depth_log2 = static_cast<uint32_t>(number);
    } else if (arg == "--hang") {
      if (!take_value(&value) || !ParseHangSpec(value, &config->hang, error)) return ParseOutcome::kError;
    } else if (arg == "--hang-for") {
      int64_t ns = 0;
      if (!take_value(&value) || !DurationInRange(arg + ": '" + value + "'", value, false, 1, kHourNs,
                                                  "a positive duration within an hour (e.g. 3s, 500ms)", &ns, error)) {
        return ParseOutcome::kError;
      }
      config->hang.hold_ns = static_cast<uint64_t>(ns);
    } else if (arg == "--graph") {
      if (!no_value()) return ParseOutcome::kError;
      config->graph = true;
    } else if (arg == "--bench") {
      if (!no_value()) return ParseOutcome::kError;
      config->bench = true;
    } else if (arg == "--nccl-quirks") {
      if (!no_value()) return ParseOutcome::kError;
      config->nccl_quirks = true;
    } else if (arg == "--quiet") {
      if (!no_value()) return ParseOutcome::kError;
      config->quiet = true;
    } else {
      *error = "unknown argument '" + std::string(argv[i]) + "' (see --help)";
      return ParseOutcome::kError;
    }
  }
  if (config->hang.enabled() && (config->hang.rank >= config->num_ranks || config->hang.channel >= config->num_channels)) {
    *error = "--hang: rank " + std::to_string(config->hang.rank) + " channel " + std::to_string(config->hang.channel) +
             " is outside the run (" + std::to_string(config->num_ranks) + " ranks, " +
             std::to_string(config->num_channels) + " channels)";
    return ParseOutcome::kError;
  }
  return ParseOutcome::kRun;
}

}  // namespace katrace::sim
