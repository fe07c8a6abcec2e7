#include "plugin/config.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <algorithm>
#include <string>

#include "common/duration.h"
#include "common/in_place_path.h"
#include "common/text.h"
#include "plugin/handle_codec.h"

namespace katrace {
namespace {

// A pool slot index travels in 21 bits of the handle, the top value meaning "untracked" (see
// handle_codec.h).
constexpr uint32_t kMaxPoolSize = kUntrackedSlot;

bool ParseUnsigned(const std::string& text, uint64_t max, uint64_t* out) {
  std::string t = Trim(text);
  if (t.empty() || t[0] == '-' || t[0] == '+') return false;
  errno = 0;
  char* end = nullptr;
  // Decimal, or hexadecimal after 0x: a leading zero is not octal ("010" is ten, as a user means).
  const bool hex = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
  unsigned long long v = strtoull(t.c_str(), &end, hex ? 16 : 10);
  if (errno != 0 || end == t.c_str() || *end != '\0' || v > max) return false;
  *out = v;
  return true;
}

bool ParseBool(const std::string& text, bool* out) {
  std::string t = Lower(Trim(text));
  if (t == "1" || t == "true" || t == "yes" || t == "on") return *out = true, true;
  if (t == "0" || t == "false" || t == "no" || t == "off") return *out = false, true;
  return false;
}

void ReadBool(const EnvLookup& env, const WarnSink& warn, const char* var, bool* out) {
  const char* v = env(var);
  if (v == nullptr) return;
  if (!ParseBool(v, out)) {
    warn(std::string(var) + "='" + v + "' is not a boolean (use 0/1); using " + (*out ? "1" : "0"));
  }
}

}  // namespace

bool ParseCaptureSpan(const std::string& text, bool allow_collectives, CaptureSpan* out, std::string* error) {
  // A count of collectives is a whole number and one of the names of that unit; anything else is
  // a time, in the one duration grammar of every katrace option (common/duration.h).
  const std::string t = Lower(Trim(text));
  const size_t number_end = std::min(t.find_first_not_of("0123456789."), t.size());
  const std::string unit = Trim(t.substr(number_end));
  if (unit == "colls" || unit == "coll" || unit == "collectives") {
    const std::string number = t.substr(0, number_end);
    if (!allow_collectives) {
      *error = "is a count of collectives, where only a time is taken (" + std::string(kDurationSyntax) + ")";
      return false;
    }
    if (number.empty() || number.size() > 15 || number.find('.') != std::string::npos) {
      *error = "is not a whole number of collectives (e.g. 2000colls)";
      return false;
    }
    out->unit = CaptureSpan::kCollectives;
    out->value = strtoull(number.c_str(), nullptr, 10);
    return true;
  }
  int64_t ns = 0;
  if (!ParseDuration(text, &ns, error)) {
    *error += " (want " + std::string(kDurationSyntax) +
              (allow_collectives ? "; or a count of collectives, e.g. 2000colls)" : ")");
    return false;
  }
  out->unit = CaptureSpan::kNanoseconds;
  out->value = static_cast<uint64_t>(ns);
  return true;
}

std::string ExpandOutputTemplate(const std::string& tmpl, int rank, int pid, const std::string& host) {
  std::string out;
  for (size_t i = 0; i < tmpl.size();) {
    auto take = [&](const char* key, const std::string& value) {
      size_t n = strlen(key);
      if (tmpl.compare(i, n, key) != 0) return false;
      out += value;
      i += n;
      return true;
    };
    if (take("{rank}", std::to_string(rank)) || take("{pid}", std::to_string(pid)) ||
        take("{host}", host)) {
      continue;
    }
    out += tmpl[i++];
  }
  return out;
}

namespace {

// A directory for the trace rather than its name: a name ending in '/' (templates allowed), or a
// directory that exists. The trace then takes the default name inside it.
bool NamesADirectory(const char* output) {
  const size_t n = strlen(output);
  if (output[n - 1] == '/') return true;
  struct stat st;
  return strchr(output, '{') == nullptr && stat(output, &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

Config ReadConfig(const EnvLookup& env, const WarnSink& warn) {
  Config c;
  for (int i = 0; i < kKindCount; ++i) c.pool_size[i] = kKindInfo[i].default_pool;

  const char* mask_var = env("KATRACE_MASK") ? "KATRACE_MASK" : "NCCL_PROFILE_EVENT_MASK";
  if (const char* v = env(mask_var)) {
    std::string error;
    int mask = 0;
    if (ParseEventMask(v, &mask, &error)) {
      c.mask = mask;
      c.mask_from_env = true;
    } else {
      warn(std::string(mask_var) + "='" + v + "': " + error + "; using the default mask " +
           std::to_string(kDefaultMask) + " (coll,p2p,api,proxyop,kernelch,kernelstep)");
    }
  }

  if (const char* v = env("KATRACE_OUTPUT")) {
    if (*v == '\0') {
      warn("KATRACE_OUTPUT is empty; using '" + c.output + "'");
    } else if (NamesADirectory(v)) {
      c.output = std::string(v) + (v[strlen(v) - 1] == '/' ? "" : "/") + c.output;
    } else {
      c.output = v;
    }
  } else if (const char* prefix = env("NCCL_PROFILE_DUMP_FILE")) {
    if (*prefix != '\0') c.output = std::string(prefix) + "_{rank}.json";
  }
  if (const char* v = env("KATRACE_FORMAT")) {
    TraceFormat f;
    if (ParseTraceFormat(Trim(v), &f)) {
      c.format = f;
      // The name follows the format (the spool, the temporary file and the summary follow the
      // name): "trace.json" becomes "trace.pftrace"; a name without a trace extension of ours
      // (a device, a pipe) is kept as it is.
      if (TraceExtensionLength(c.output) != 0) c.output = WithTraceFormat(c.output, f);
    } else {
      warn(std::string("KATRACE_FORMAT='") + v + "' is not json, perfetto or nvtxt; using " +
           TraceFormatName(TraceFormatOfPath(c.output)));
    }
  }
  c.gzip = c.output.size() > 3 && c.output.compare(c.output.size() - 3, 3, ".gz") == 0;
  ReadBool(env, warn, "KATRACE_GZIP", &c.gzip);
  // A device or pipe keeps its name (gzip goes into it): "/dev/null.gz" would be a new file in /dev.
  if (c.gzip && !(c.output.size() > 3 && c.output.compare(c.output.size() - 3, 3, ".gz") == 0) &&
      !IsWrittenInPlace(c.output)) {
    c.output += ".gz";
  }
  ReadBool(env, warn, "KATRACE_SUMMARY", &c.summary);
  if (const char* v = env("KATRACE_SUMMARY_FILE")) c.summary_path = v;
  ReadBool(env, warn, "KATRACE_NVTX", &c.nvtx);

  auto read_size = [&](const std::string& var, uint32_t* out) {
    const char* v = env(var.c_str());
    if (v == nullptr) return;
    uint64_t n = 0;
    if (!ParseUnsigned(v, kMaxPoolSize, &n) || n == 0) {
      warn(var + "='" + v + "' is not a pool size in 1.." + std::to_string(kMaxPoolSize) +
           "; using " + std::to_string(*out));
      return;
    }
    *out = static_cast<uint32_t>(n);
  };
  if (const char* v = env("KATRACE_POOL_SIZE")) {
    uint64_t all = 0;
    if (ParseUnsigned(v, kMaxPoolSize, &all) && all != 0) {
      for (uint32_t& p : c.pool_size) p = static_cast<uint32_t>(all);
    } else {
      warn(std::string("KATRACE_POOL_SIZE='") + v + "' is not a pool size in 1.." + std::to_string(kMaxPoolSize) +
           "; keeping each kind's default");
    }
  }
  for (int i = 0; i < kKindCount; ++i) {
    // NCCL's example plugin names keep working; ours win when both are set.
    read_size(std::string("NCCL_PROFILE_") + kKindInfo[i].pool_env + "_POOL_SIZE", &c.pool_size[i]);
    read_size(std::string("KATRACE_POOL_") + kKindInfo[i].pool_env, &c.pool_size[i]);
  }
  if (env("KATRACE_QUEUE_RECORDS") != nullptr) {
    warn("KATRACE_QUEUE_RECORDS is no longer used: callbacks write to per-thread buffers "
         "(KATRACE_BUFFER_MB, KATRACE_THREAD_BUFFER_KB)");
  }
  auto read_range = [&](const char* var, uint64_t lo, uint64_t hi, uint64_t* out) {
    const char* v = env(var);
    if (v == nullptr) return false;
    uint64_t n = 0;
    if (!ParseUnsigned(v, hi, &n) || n < lo) {
      warn(std::string(var) + "='" + v + "' is not in " + std::to_string(lo) + ".." + std::to_string(hi) +
           "; using " + std::to_string(*out));
      return false;
    }
    *out = n;
    return true;
  };
  uint64_t kb = c.thread_buffer_bytes >> 10;
  if (read_range("KATRACE_THREAD_BUFFER_KB", 64, 65536, &kb)) {
    uint64_t pow2 = 64;
    while (pow2 * 2 <= kb) pow2 *= 2;
    if (pow2 != kb) warn("KATRACE_THREAD_BUFFER_KB=" + std::to_string(kb) + " rounded down to " + std::to_string(pow2));
    kb = pow2;
  }
  c.thread_buffer_bytes = kb << 10;
  uint64_t mb = c.buffer_budget_bytes >> 20;
  read_range("KATRACE_BUFFER_MB", 1, 1u << 20, &mb);
  c.buffer_budget_bytes = mb << 20;
  if (c.buffer_budget_bytes < c.thread_buffer_bytes) {
    warn("KATRACE_BUFFER_MB=" + std::to_string(mb) + " is smaller than one thread buffer (" + std::to_string(kb) +
         " KiB); using one thread buffer's worth");
    c.buffer_budget_bytes = c.thread_buffer_bytes;
  }
  if (const char* v = env("KATRACE_ON_FULL")) {
    std::string t = Lower(Trim(v));
    if (t == "drop" || t == "wait") {
      c.drop_when_full = t == "drop";
    } else {
      warn(std::string("KATRACE_ON_FULL='") + v + "' is neither 'wait' nor 'drop'; using 'wait'");
    }
  }
  if (const char* v = env("KATRACE_SPOOL_COMPRESS")) {
    std::string t = Lower(Trim(v));
    if (t == "lz4" || t == "none") {
      c.compress_spool = t == "lz4";
    } else {
      warn(std::string("KATRACE_SPOOL_COMPRESS='") + v + "' is neither 'lz4' nor 'none'; using 'lz4'");
    }
  }
  ReadBool(env, warn, "KATRACE_EXPORT", &c.export_trace);
  ReadBool(env, warn, "KATRACE_KEEP_SPOOL", &c.keep_spool);
  if (const char* v = env("KATRACE_CLOCK")) {
    std::string t = Lower(Trim(v));
    if (t == "auto" || t == "tsc" || t == "monotonic") {
      c.clock = t;
    } else {
      warn(std::string("KATRACE_CLOCK='") + v + "' is not auto, tsc or monotonic; using 'auto'");
    }
  }

  auto read_span = [&](const char* var, bool allow_collectives, const char* fallback, CaptureSpan* out) {
    const char* v = env(var);
    if (v == nullptr) return;
    std::string error;
    if (!ParseCaptureSpan(v, allow_collectives, out, &error)) {
      warn(std::string(var) + "='" + v + "' " + error + "; " + fallback);
      *out = CaptureSpan{};
    }
  };
  read_span("KATRACE_DELAY", true, "capturing from the start", &c.delay);
  read_span("KATRACE_DURATION", true, "capturing to the end", &c.duration);
  if (c.duration.unit != CaptureSpan::kNone && c.duration.value == 0) {
    warn(std::string("KATRACE_DURATION='") + env("KATRACE_DURATION") + "' is zero; capturing to the end");
    c.duration = CaptureSpan{};
  }
  uint64_t sample = c.sample_every;
  read_range("KATRACE_SAMPLE", 1, 1u << 30, &sample);
  c.sample_every = static_cast<uint32_t>(sample);
  if (const char* v = env("KATRACE_CONTROL")) {
    if (*v == '\0') {
      warn("KATRACE_CONTROL is empty; no control file");
    } else {
      c.control_path = v;
    }
  }
  if (const char* v = env("KATRACE_SIGNAL")) {
    std::string t = Lower(Trim(v));
    if (t.compare(0, 3, "sig") == 0) t = t.substr(3);
    if (t == "usr1") {
      c.toggle_signal = SIGUSR1;
    } else if (t == "usr2") {
      c.toggle_signal = SIGUSR2;
    } else if (!(t.empty() || t == "off" || t == "none" || t == "0")) {
      warn(std::string("KATRACE_SIGNAL='") + v + "' is neither USR1 nor USR2 (the only signals katrace takes over); no signal");
    }
  }
  if (const char* v = env("KATRACE_MODE")) {
    std::string t = Lower(Trim(v));
    if (t == "flight" || t == "trace") {
      c.flight = t == "flight";
    } else {
      warn(std::string("KATRACE_MODE='") + v + "' is neither 'trace' nor 'flight'; using 'trace'");
    }
  }
  uint64_t flight_mb = c.flight_bytes >> 20;
  read_range("KATRACE_FLIGHT_MB", 1, 1u << 20, &flight_mb);
  c.flight_bytes = flight_mb << 20;
  ReadBool(env, warn, "KATRACE_FLIGHT_AT_EXIT", &c.flight_dump_at_exit);
  ReadBool(env, warn, "KATRACE_FLIGHT_ON_CRASH", &c.flight_dump_on_crash);
  CaptureSpan hang;
  read_span("KATRACE_HANG_TIMEOUT", false, "no hang watchdog", &hang);
  c.hang_timeout_ns = hang.value;
  // The watchdog looks every 20 ms (hang_watchdog.cc); a timeout near that calls every busy
  // moment a hang.
  constexpr uint64_t kMinHangTimeoutNs = 100ull * 1000 * 1000;
  if (c.hang_timeout_ns != 0 && c.hang_timeout_ns < kMinHangTimeoutNs) {
    warn(std::string("KATRACE_HANG_TIMEOUT='") + env("KATRACE_HANG_TIMEOUT") +
         "' is shorter than the watchdog can tell from a busy job (it looks every 20 ms); using 100ms");
    c.hang_timeout_ns = kMinHangTimeoutNs;
  }
  return c;
}

}  // namespace katrace
