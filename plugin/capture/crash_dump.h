// The flight recorder's crash dump: handlers for SIGSEGV, SIGBUS and SIGABRT that write the ring
// to a spool named when the session started, then put the previous disposition back and raise
// the signal again, so it proceeds as it would have (a core dump, the application's own handler).
// Where that name is taken by then (another process given the same KATRACE_OUTPUT crashed first)
// or its directory cannot take it, the dump goes under this process's pid beside it
// ("<stem>.crash-<pid>.json.kspool", naming its own trace), then to $TMPDIR; every outcome,
// none written included, is one stderr line.
// Inside the handler: open, write, close, clock_gettime, nanosleep and sigaction only; every
// byte it needs beyond the ring (path, Process record, message) is prepared at Install.
// Best effort, by nature: a process that corrupted its own memory may not get this far. The
// handlers take the thread's alternate signal stack when it has one (SA_ONSTACK); a thread that
// overflowed its stack without one cannot run any handler.
#ifndef KATRACE_PLUGIN_CAPTURE_CRASH_DUMP_H_
#define KATRACE_PLUGIN_CAPTURE_CRASH_DUMP_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "plugin/capture/flight_ring.h"

namespace katrace {

struct CrashDumpSetup {
  const FlightRing* ring = nullptr;
  FlightRing* frozen_ring = nullptr;  // the same ring: frozen while the handler reads it
  std::string spool_path;             // created exclusively by the handler
  // Records written first: the Process record (naming the crash trace) and a Flight record whose
  // counters and signal the handler fills in at |flight_body_offset|.
  std::vector<uint8_t> lead;
  size_t flight_body_offset = 0;
  uint64_t os_pid = 0;
  uint32_t writer_tid = 0;  // names the thread of the lead block
};

// Installs the handlers (once per process at a time). False with |*error| when sigaction fails.
bool InstallCrashDump(const CrashDumpSetup& setup, std::string* error);
// Puts back the handlers found at Install, where ours are still the ones installed.
void UninstallCrashDump();

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CAPTURE_CRASH_DUMP_H_
