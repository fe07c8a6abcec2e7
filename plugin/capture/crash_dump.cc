#include "plugin/capture/crash_dump.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

namespace katrace {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGABRT};
constexpr int kNumSignals = sizeof(kSignals) / sizeof(kSignals[0]);

// Everything the handler reads, set up before the handlers are installed and freed only after
// they are removed. (A handler that began on another thread just before the session closed may
// then read freed memory: the process is dying of that signal anyway, and dies of it.)
struct Armed {
  CrashDumpSetup setup;
  std::string message;  // one stderr line, prepared whole
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

void WriteSpoolFrom(Armed* a, int sig) {
  FlightRingStats st = a->setup.ring->stats();
  spool::FlightBody body{};
  uint8_t* lead = a->setup.lead.data();
  memcpy(&body, lead + a->setup.flight_body_offset, sizeof(body));
  body.evicted_blocks = st.evicted_blocks;
  body.evicted_raw_bytes = st.evicted_raw_bytes;
  body.refused_blocks = st.refused_blocks;
  body.sticky_dropped = st.sticky_dropped;
  body.cut_ticks = st.cut_ticks;
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  body.dump_realtime_ns = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  body.signal = sig;
  memcpy(lead + a->setup.flight_body_offset, &body, sizeof(body));
  int fd = open(a->setup.spool_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return;
  bool ok = a->setup.ring->WriteSpool(fd, a->setup.os_pid, a->setup.writer_tid, lead,
                                      static_cast<uint32_t>(a->setup.lead.size()), nullptr, 0);
  close(fd);
  if (ok) {
    ssize_t ignored = write(STDERR_FILENO, a->message.data(), a->message.size());
    (void)ignored;
  }
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
  a->message = "katrace: fatal signal: the flight recorder was written to " + setup.spool_path +
               "; build the trace with: katrace-export " + setup.spool_path + "\n";
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
