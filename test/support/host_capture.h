// Test support: a hand-written one-rank katrace JSON trace of one host whose clock is off by a
// known amount, with Colls whose GPU work ends at known true times: what --align-hosts
// (katrace-merge, katrace-stats) must undo.
#ifndef KATRACE_TEST_SUPPORT_HOST_CAPTURE_H_
#define KATRACE_TEST_SUPPORT_HOST_CAPTURE_H_

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace katrace_test {

// Writes to |path| the capture of rank |pid| on host |host| whose clock reads |behind_ns| less
// than the true time, started at the true time |true_base_ns|: a Coll of communicator |comm| per
// sequence number in |seqs|, started (host and GPU) at the true time 1 ms x seq and ending its
// GPU work 100 us + |jitter_ns|(seq) later (how far this rank's end is from the others').
template <typename Jitter>
void WriteHostCapture(const std::string& path, int64_t true_base_ns, const std::string& host, int pid,
                      int64_t behind_ns, const std::string& comm, const std::vector<int>& seqs, Jitter&& jitter_ns) {
  using Json = nlohmann::json;
  Json header = {{"format", "katrace-trace"}, {"version", 1},   {"rank", pid},
                 {"host", host},              {"os_pid", 100 + pid}, {"base_realtime_ns", true_base_ns - behind_ns},
                 {"base_monotonic_ns", 5000}, {"ranks", Json::array({{{"pid", pid}, {"world_rank", pid}}})}};
  Json events = Json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0},
                    {"args", {{"name", "rank " + std::to_string(pid)}, {"katrace", header}}}});
  for (int seq : seqs) {
    // Trace µs count from the capture's base on its own clock, so they are the true offsets.
    const double end_us = 1000.0 * seq + 100 + static_cast<double>(jitter_ns(seq)) / 1000;
    events.push_back({{"name", "AllReduce"}, {"cat", "Coll"}, {"ph", "X"}, {"pid", pid}, {"tid", 2},
                      {"ts", 1000.0 * seq}, {"dur", 10.0},
                      {"args", {{"id", seq + 1}, {"comm", comm}, {"rank", pid}, {"func", "AllReduce"},
                                {"seq", seq}, {"gpu_start", 1000.0 * seq}, {"gpu_end", end_us}}}});
  }
  Json footer = header;
  footer.update({{"events", {{"Coll", seqs.size()}}}, {"drops", Json::object()}, {"waits", 0}});
  std::ofstream(path) << Json{{"traceEvents", events}, {"otherData", {{"katrace", footer}}}}.dump();
}

}  // namespace katrace_test

#endif  // KATRACE_TEST_SUPPORT_HOST_CAPTURE_H_
