// Throttled progress lines on stderr.
#include "tools/common/progress.h"

#include <cstdio>
#include <utility>

namespace katrace::tools {
namespace {
constexpr auto kInterval = std::chrono::seconds(2);
}  // namespace

Progress::Progress(std::string tool, std::string label, uint64_t total_bytes, uint64_t min_bytes)
    : tool_(std::move(tool)),
      label_(std::move(label)),
      total_bytes_(total_bytes),
      enabled_(min_bytes > 0 && total_bytes >= min_bytes),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void Progress::Update(uint64_t done_bytes) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < kInterval) return;
  last_ = now;
  printed_ = true;
  const double percent =
      total_bytes_ == 0 ? 100.0 : 100.0 * static_cast<double>(done_bytes) / total_bytes_;
  std::fprintf(stderr, "%s: %s: %.0f%% of %s\n", tool_.c_str(), label_.c_str(), percent,
               HumanBytes(total_bytes_).c_str());
}

void Progress::Done() {
  if (!printed_) return;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "%s: %s: done in %.1f s\n", tool_.c_str(), label_.c_str(), seconds);
}

}  // namespace katrace::tools
