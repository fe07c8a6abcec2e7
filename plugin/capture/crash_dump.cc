#include "plugin/capture/crash_dump.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "common/paths.h"
#include "common/trace_format.h"

namespace katrace {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGABRT};
constexpr int kNumSignals = sizeof(kSignals) / sizeof(kSignals[0]);
// strerror() is not async-signal-safe: the texts of the errnos a handler may meet are copied at
// Install (glibc's are all below this).
constexpr int kErrnoTexts = 134;

// One place the handler may write the dump: the spool, the records that lead it (its Process
// record names the trace built from it), and the line said once it is written.
struct Target {
  std::string path;
  std::vector<uint8_t> lead;
  size_t flight_body_offset = 0;
  std::string written;  // "katrace: fatal signal: the flight recorder was written to ..."
};

// Everything the handler reads, set up before the handlers are installed and freed only after
// they are removed. (A handler that began on another thread just before the session closed may
// then read freed memory: the process is dying of that signal anyway, and dies of it.)
struct Armed {
  CrashDumpSetup setup;
  // Tried in order until one can be created. The name chosen at Install may be taken by the time
  // of the crash (another process of the job given the same KATRACE_OUTPUT: in flight mode none
  // of them had a file on disk to tell them apart, and they tend to crash together), or its
  // directory gone or full: the dump is what the user needs most then, so it goes under this
  // process's pid next to it, then to $TMPDIR, rather than nowhere without a word.
  std::vector<Target> targets;
  std::vector<std::string> errno_text;
  struct sigaction previous[kNumSignals];
};
std::atomic<Armed*> g_armed{nullptr};
// 0 idle, 1 a thread is dumping, 2 done: a second crashing thread waits for the first's dump.
std::atomic<int> g_dump_state{0};

int IndexOf(int sig) {
  for (int i = 0; i < kNumSignals; ++i) {
    if (kSignals[i] == sig) return i;
  }
  return -1;
}

void Say(const char* text, size_t n) {
  while (n > 0) {
    ssize_t w = write(STDERR_FILENO, text, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    text += w;
    n -= static_cast<size_t>(w);
  }
}
void Say(const char* text) { Say(text, strlen(text)); }
void Say(const std::string& text) { Say(text.data(), text.size()); }

const char* ErrnoText(const Armed* a, int err) {
  return err > 0 && err < static_cast<int>(a->errno_text.size()) ? a->errno_text[err].c_str() : "unknown error";
}

// The lead of |setup| with its Process record naming |trace| instead; "" lead when it cannot be
// read (then the target is not offered).
Target Retarget(const CrashDumpSetup& setup, const std::string& trace, const std::string& spool) {
  Target t;
  const std::vector<uint8_t>& lead = setup.lead;
  spool::RecordHeader h;
  spool::ProcessBody p;
  if (lead.size() < sizeof(h) + sizeof(p)) return t;
  memcpy(&h, lead.data(), sizeof(h));
  memcpy(&p, lead.data() + sizeof(h), sizeof(p));
  const size_t text_at = sizeof(h) + sizeof(p);
  if (h.type != spool::RecordType::kProcess || h.size > lead.size() || setup.flight_body_offset < h.size ||
      text_at + p.host_length + p.trace_path_length > h.size) {
    return t;
  }
  const std::string host(reinterpret_cast<const char*>(lead.data() + text_at), p.host_length);
  const std::string path = trace.substr(0, 4096);
  p.trace_path_length = static_cast<uint32_t>(path.size());
  spool::RecordHeader nh = h;
  nh.size = spool::RecordSize(sizeof(p) + host.size() + path.size());
  t.lead.assign(nh.size, 0);
  memcpy(t.lead.data(), &nh, sizeof(nh));
  memcpy(t.lead.data() + sizeof(nh), &p, sizeof(p));
  memcpy(t.lead.data() + text_at, host.data(), host.size());
  memcpy(t.lead.data() + text_at + host.size(), path.data(), path.size());
  t.lead.insert(t.lead.end(), lead.begin() + h.size, lead.end());
  t.flight_body_offset = setup.flight_body_offset - h.size + nh.size;
  t.path = spool;
  return t;
}

std::string WrittenLine(const std::string& spool) {
  return "katrace: fatal signal: the flight recorder was written to " + spool +
         "; build the trace with: katrace-export " + spool + "\n";
}

// The primary name first, then this process's own names beside it, then the same in $TMPDIR.
std::vector<Target> PlanTargets(const CrashDumpSetup& setup) {
  std::vector<Target> near, far;
  Target primary;
  primary.path = setup.spool_path;
  primary.lead = setup.lead;
  primary.flight_body_offset = setup.flight_body_offset;
  near.push_back(primary);
  // The trace the primary lead names: the alternatives are named after it.
  spool::RecordHeader h;
  spool::ProcessBody p;
  std::string trace;
  if (setup.lead.size() >= sizeof(h) + sizeof(p)) {
    memcpy(&h, setup.lead.data(), sizeof(h));
    memcpy(&p, setup.lead.data() + sizeof(h), sizeof(p));
    const size_t at = sizeof(h) + sizeof(p) + p.host_length;
    if (h.type == spool::RecordType::kProcess && at + p.trace_path_length <= h.size && h.size <= setup.lead.size()) {
      trace.assign(reinterpret_cast<const char*>(setup.lead.data() + at), p.trace_path_length);
    }
  }
  // The primary spool sits next to its trace, or in $TMPDIR when that directory was not writable.
  const bool beside_trace = !trace.empty() && setup.spool_path == trace + ".kspool";
  if (!trace.empty()) {
    const size_t ext = TraceExtensionLength(trace);
    const std::string stem = trace.substr(0, trace.size() - ext);
    const std::string pid = "-" + std::to_string(setup.os_pid);
    const std::string tagged = stem.size() >= pid.size() && stem.compare(stem.size() - pid.size(), pid.size(), pid) == 0
                                   ? stem
                                   : stem + pid;
    for (const std::string& s : {tagged, tagged + "-2", tagged + "-3"}) {
      if (s == stem) continue;
      const std::string t = s + trace.substr(trace.size() - ext);
      Target alt = Retarget(setup, t, beside_trace ? t + ".kspool" : InTempDir(t + ".kspool"));
      if (!alt.lead.empty()) near.push_back(alt);
    }
  }
  for (const Target& t : near) {
    Target moved = t;
    moved.path = InTempDir(t.path);
    bool known = false;
    for (const Target& n : near) known = known || n.path == moved.path;
    if (!known) far.push_back(moved);
  }
  near.insert(near.end(), far.begin(), far.end());
  for (Target& t : near) t.written = WrittenLine(t.path);
  return near;
}

void WriteSpoolFrom(Armed* a, int sig) {
  FlightRingStats st = a->setup.ring->stats();
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  int first_errno = 0;
  for (Target& t : a->targets) {
    int fd = open(t.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
      if (first_errno == 0) first_errno = errno;
      continue;
    }
    spool::FlightBody body{};
    uint8_t* lead = t.lead.data();
    memcpy(&body, lead + t.flight_body_offset, sizeof(body));
    body.evicted_blocks = st.evicted_blocks;
    body.evicted_raw_bytes = st.evicted_raw_bytes;
    body.refused_blocks = st.refused_blocks;
    body.sticky_dropped = st.sticky_dropped;
    body.cut_ticks = st.cut_ticks;
    body.dump_realtime_ns = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
    body.signal = sig;
    memcpy(lead + t.flight_body_offset, &body, sizeof(body));
    bool ok = a->setup.ring->WriteSpool(fd, a->setup.os_pid, a->setup.writer_tid, lead,
                                        static_cast<uint32_t>(t.lead.size()), nullptr, 0);
    const int write_errno = errno;
    if (close(fd) != 0 && ok) ok = false;
    if (ok) {
      Say(t.written);
    } else {
      // Kept: what reached the file is whole blocks up to the torn one, which the export finds.
      Say("katrace: fatal signal: the flight recorder's dump to ");
      Say(t.path);
      Say(" is incomplete (");
      Say(ErrnoText(a, write_errno));
      Say("); build what it holds with: katrace-export ");
      Say(t.path);
      Say("\n");
    }
    return;
  }
  Say("katrace: fatal signal: the flight recorder could not be written to ");
  Say(a->targets.empty() ? "" : a->targets.front().path.c_str());
  Say(" (");
  Say(ErrnoText(a, first_errno));
  Say(") nor anywhere else (its directory under this process's pid, $TMPDIR): no crash dump\n");
}

void OnFatalSignal(int sig, siginfo_t*, void*) {
  const int saved_errno = errno;
  Armed* a = g_armed.load(std::memory_order_acquire);
  int i = IndexOf(sig);
  // A child forked from the process that armed the handlers carries them, and the parent's ring:
  // a dump from it would be the parent's, under the parent's name (taking the name the parent's
  // own crash dump needs). It only passes the signal on.
  if (a != nullptr && a->setup.os_pid != static_cast<uint64_t>(getpid())) {
    if (i >= 0) sigaction(sig, &a->previous[i], nullptr);
  } else if (a != nullptr && i >= 0) {
    int idle = 0;
    if (g_dump_state.compare_exchange_strong(idle, 1)) {
      a->setup.frozen_ring->Freeze();
      WriteSpoolFrom(a, sig);
      a->setup.frozen_ring->Thaw();
      g_dump_state.store(2);
    } else {
      // Another thread crashed first: let its dump finish before this signal kills the process.
      for (int n = 0; n < 2000 && g_dump_state.load() == 1; ++n) {
        timespec ms{0, 1000 * 1000};
        nanosleep(&ms, nullptr);
      }
    }
    // The previous disposition, and the signal again: pending until this handler returns, then
    // delivered to it (a fault re-executes and faults again, which ends the same way).
    sigaction(sig, &a->previous[i], nullptr);
  } else if (i >= 0) {
    signal(sig, SIG_DFL);
  }
  errno = saved_errno;
  raise(sig);
}

}  // namespace

bool InstallCrashDump(const CrashDumpSetup& setup, std::string* error) {
  if (g_armed.load() != nullptr) {
    *error = "a crash dump is already installed";
    return false;
  }
  Armed* a = new Armed();
  a->setup = setup;
  a->targets = PlanTargets(setup);
  a->errno_text.resize(kErrnoTexts);
  for (int e = 1; e < kErrnoTexts; ++e) a->errno_text[e] = strerror(e);
  g_dump_state.store(0);
  g_armed.store(a, std::memory_order_release);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = OnFatalSignal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < kNumSignals; ++i) {
    if (sigaction(kSignals[i], &sa, &a->previous[i]) != 0) {
      *error = std::string("cannot install the crash handler for ") + strsignal(kSignals[i]) + " (" + strerror(errno) + ")";
      for (int k = 0; k < i; ++k) sigaction(kSignals[k], &a->previous[k], nullptr);
      g_armed.store(nullptr);
      delete a;
      return false;
    }
  }
  return true;
}

void UninstallCrashDump() {
  Armed* a = g_armed.load(std::memory_order_acquire);
  if (a == nullptr) return;
  for (int i = 0; i < kNumSignals; ++i) {
    struct sigaction now;
    // An application that installed its own handler after ours keeps it.
    if (sigaction(kSignals[i], nullptr, &now) == 0 && (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == OnFatalSignal) {
      sigaction(kSignals[i], &a->previous[i], nullptr);
    }
  }
  g_armed.store(nullptr, std::memory_order_release);
  delete a;
}

}  // namespace katrace
