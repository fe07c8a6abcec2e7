// Flight recorder dumps become traces off the writer thread: a dump is queued here and exported
// by one background thread, one at a time, like any spool. The writer thread only queues, so
// capture goes on while a dump is being exported. An exported dump's spool is removed when the
// session ends, not at once: whoever asked for the dump (the hang report) may still be reading
// it. It is kept when its export failed, or with KATRACE_KEEP_SPOOL=1.
#ifndef KATRACE_PLUGIN_FLIGHT_EXPORTS_H_
#define KATRACE_PLUGIN_FLIGHT_EXPORTS_H_

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "plugin/config.h"

namespace katrace {

// Exports |spool| to |trace| now, on this thread, and says what became of it in one stderr line.
// |with_summary|: the dump at the end stands for the run, so it gets the run's summary tables
// (KATRACE_SUMMARY); a dump while the job runs gets only its line. True when the spool may go
// (exported, and KATRACE_KEEP_SPOOL is off); the caller removes it.
bool ExportFlightDump(const std::string& spool, const std::string& trace, const Config& config, bool with_summary);

class FlightExports {
 public:
  explicit FlightExports(const Config& config) : config_(config) {}
  ~FlightExports() { Drain(); }
  FlightExports(const FlightExports&) = delete;
  FlightExports& operator=(const FlightExports&) = delete;

  // Any thread; never waits for an export. With KATRACE_EXPORT=off the dump is only announced.
  void Submit(const std::string& spool, const std::string& trace);
  // Waits until every queued dump is exported, stops the thread and removes the exported spools.
  void Drain();

 private:
  void Run();

  const Config config_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<std::string, std::string>> queue_;  // under mu_
  bool stopping_ = false;                                  // under mu_
  std::vector<std::string> exported_;                      // spools to remove at Drain, under mu_
  std::thread thread_;                                     // started by the first Submit
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_FLIGHT_EXPORTS_H_
