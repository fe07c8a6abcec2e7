// Test support: the first event of a hand-written katrace JSON trace of one rank, its process_name
// metadata carrying the identity the tools read (format, version, rank, host, clock bases).
#ifndef KATRACE_TEST_SUPPORT_RANK_HEADER_H_
#define KATRACE_TEST_SUPPORT_RANK_HEADER_H_

#include <string>

#include <nlohmann/json.hpp>

namespace katrace_test {

inline nlohmann::json KatraceRankHeader(int rank) {
  return {{"name", "process_name"},
          {"ph", "M"},
          {"pid", rank},
          {"tid", 0},
          {"args",
           {{"name", "rank " + std::to_string(rank)},
            {"katrace",
             {{"format", "katrace-trace"},
              {"version", 1},
              {"rank", rank},
              {"host", "h"},
              {"os_pid", 1},
              {"base_realtime_ns", 1700000000000000000},
              {"base_monotonic_ns", 1},
              {"ranks", nlohmann::json::array({{{"pid", rank}, {"world_rank", rank}}})}}}}}};
}

}  // namespace katrace_test

#endif  // KATRACE_TEST_SUPPORT_RANK_HEADER_H_
