// The export's progress lines on stderr (katrace-export, or the plugin exporting a long run):
// nothing during the first second (short exports stay quiet), then one line about every two
// seconds with blocks and bytes done of the total. (The trace tools' own is tools::Progress.)
// Counters are atomics so decode workers can add to them; only one thread calls Poll.
#ifndef KATRACE_PLUGIN_EXPORT_EXPORT_PROGRESS_H_
#define KATRACE_PLUGIN_EXPORT_EXPORT_PROGRESS_H_

#include <stdint.h>

#include <atomic>
#include <string>

namespace katrace {
namespace exporting {

class ExportProgress {
 public:
  ExportProgress(bool enabled, std::string label);
  // A new phase ("scanning", "writing") over |blocks| blocks of |bytes| bytes.
  void Phase(const char* name, uint64_t blocks, uint64_t bytes);
  void Add(uint64_t blocks, uint64_t bytes) {
    blocks_.fetch_add(blocks, std::memory_order_relaxed);
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
  void Poll();

 private:
  bool enabled_;
  std::string label_;
  const char* phase_ = "";
  uint64_t total_blocks_ = 0, total_bytes_ = 0;
  std::atomic<uint64_t> blocks_{0}, bytes_{0};
  uint64_t start_ns_ = 0, next_ns_ = 0;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_EXPORT_PROGRESS_H_
