// The last stage of the export: hands the encoder's filled text buffers to the OutputSink on a
// thread of its own, so the write syscalls (the kernel's copy into the page cache, or zlib for a
// .gz trace) no longer run on the thread that lays out and encodes, which is the export's
// slowest. The encoder fills one JsonOut while the previous ones are written; at most kBuffers
// exist (a full queue blocks the encoder), so memory stays a few MiB whatever the trace's size.
// Bytes reach the sink in the order they were handed over. Without a thread (a one-thread export)
// every buffer is written inline, exactly as before.
#ifndef KATRACE_PLUGIN_EXPORT_WRITE_BEHIND_H_
#define KATRACE_PLUGIN_EXPORT_WRITE_BEHIND_H_

#include <stddef.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "plugin/export/json_out.h"
#include "plugin/export/output_sink.h"

namespace katrace {
namespace exporting {

class WriteBehind {
 public:
  static constexpr size_t kBuffers = 4;

  WriteBehind(OutputSink* sink, bool threaded);
  ~WriteBehind();  // finishes: whatever was handed over is written
  WriteBehind(const WriteBehind&) = delete;
  WriteBehind& operator=(const WriteBehind&) = delete;

  // Takes |*full|'s bytes for writing and leaves an empty buffer in its place (blocks while
  // every buffer waits to be written).
  void Hand(std::unique_ptr<JsonOut>* full);
  // Returns once everything handed over is in the sink, and stops the thread: the sink may then
  // be committed. Nothing may be handed over after it.
  void Finish();

 private:
  void Loop();

  OutputSink* sink_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<JsonOut>> queued_;  // filled, in order
  std::vector<std::unique_ptr<JsonOut>> spare_;  // written, cleared
  size_t created_ = 1;                           // the encoder's own counts
  bool closing_ = false;
  std::thread thread_;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_WRITE_BEHIND_H_
