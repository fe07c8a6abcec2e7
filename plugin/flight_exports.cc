#include "plugin/flight_exports.h"

#include <stdio.h>
#include <unistd.h>

#include <system_error>

#include "plugin/session_export.h"

namespace katrace {

bool ExportFlightDump(const std::string& spool, const std::string& trace, const Config& config, bool with_summary) {
  if (!config.export_trace) {
    fprintf(stderr, "katrace: flight recorder dump kept in %s (KATRACE_EXPORT=off); build the trace with: katrace-export %s\n",
            spool.c_str(), spool.c_str());
    return false;
  }
  SessionExport job;
  job.spool = spool;
  job.trace = trace;
  job.label = "flight recorder trace";
  job.kept_as = "dump";
  job.summary = with_summary;
  job.progress = false;  // in the background, while the job runs: one line when done
  return ExportSessionSpool(job, config) && !config.keep_spool;
}

void FlightExports::Submit(const std::string& spool, const std::string& trace) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  queue_.emplace_back(spool, trace);
  if (!thread_.joinable()) {
    try {
      thread_ = std::thread([this] { Run(); });
    } catch (const std::system_error&) {
      // No thread to be had: the dump stays a spool, and says so.
      queue_.pop_back();
      fprintf(stderr, "katrace: flight recorder dump kept in %s (no thread to export it); build the trace with: katrace-export %s\n",
              spool.c_str(), spool.c_str());
      return;
    }
  }
  cv_.notify_one();
}

void FlightExports::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;
    std::pair<std::string, std::string> job = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    bool remove = ExportFlightDump(job.first, job.second, config_, false);
    lock.lock();
    if (remove) exported_.push_back(job.first);
  }
}

void FlightExports::Drain() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& spool : exported_) unlink(spool.c_str());
  exported_.clear();
}

}  // namespace katrace
