#include "plugin/export/export_progress.h"

#include <stdio.h>
#include <time.h>

namespace katrace {
namespace exporting {
namespace {

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

constexpr uint64_t kQuietNs = 1000000000ull;
constexpr uint64_t kEveryNs = 2000000000ull;

}  // namespace

ExportProgress::ExportProgress(bool enabled, std::string label) : enabled_(enabled), label_(std::move(label)) {
  start_ns_ = NowNs();
  next_ns_ = start_ns_ + kQuietNs;
}

void ExportProgress::Phase(const char* name, uint64_t blocks, uint64_t bytes) {
  phase_ = name;
  total_blocks_ = blocks;
  total_bytes_ = bytes;
  blocks_.store(0, std::memory_order_relaxed);
  bytes_.store(0, std::memory_order_relaxed);
}

void ExportProgress::Poll() {
  if (!enabled_) return;
  uint64_t now = NowNs();
  if (now < next_ns_) return;
  next_ns_ = now + kEveryNs;
  fprintf(stderr, "katrace-export: %s: %s %llu/%llu blocks, %.1f/%.1f MB (%.1f s)\n", label_.c_str(), phase_,
          static_cast<unsigned long long>(blocks_.load(std::memory_order_relaxed)),
          static_cast<unsigned long long>(total_blocks_),
          static_cast<double>(bytes_.load(std::memory_order_relaxed)) / 1e6, static_cast<double>(total_bytes_) / 1e6,
          static_cast<double>(now - start_ns_) / 1e9);
}

}  // namespace exporting
}  // namespace katrace
