// Progress lines on stderr for big inputs ("katrace-stats: big.json.gz: 42% of 1.2 GB"), at most
// one every two seconds, so a long run shows it is alive without flooding a log.
#ifndef KATRACE_TOOLS_COMMON_PROGRESS_H_
#define KATRACE_TOOLS_COMMON_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "common/human_bytes.h"  // HumanBytes, which the progress lines print (and merger.cc uses)

namespace katrace::tools {

class Progress {
 public:
  // Silent unless |total_bytes| >= |min_bytes| and |min_bytes| > 0.
  Progress(std::string tool, std::string label, uint64_t total_bytes, uint64_t min_bytes);
  void Update(uint64_t done_bytes);
  // A last "done" line, only when progress was shown.
  void Done();

 private:
  std::string tool_;
  std::string label_;
  uint64_t total_bytes_;
  bool enabled_;
  bool printed_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_PROGRESS_H_
