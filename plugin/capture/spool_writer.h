// The spool writer: one thread that moves the records captured in the per-thread buffers into
// the spool file as framed blocks. A buffer is moved as soon as it is a quarter full, and every
// buffer with anything in it at least every 100 ms, so a hung job's last events reach the disk.
// Each 100 ms it also writes a host clock calibration pair and the loss counters. Memory is
// bounded by the buffer budget: at most budget / buffer size buffers exist; the buffer of a thread
// that exited is drained and handed to the next new thread.
#ifndef KATRACE_PLUGIN_CAPTURE_SPOOL_WRITER_H_
#define KATRACE_PLUGIN_CAPTURE_SPOOL_WRITER_H_

#include <stdint.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "katrace/spool_format.h"
#include "plugin/capture/spool_file.h"
#include "plugin/capture/thread_buffer.h"

namespace katrace {

struct SpoolWriterOptions {
  uint64_t buffer_bytes = 1u << 20;  // per thread, a power of two
  uint64_t budget_bytes = 64u << 20;  // all buffers together
  bool compress = true;
  uint64_t flush_interval_ns = 100 * 1000 * 1000;
};

class SpoolWriter {
 public:
  // |counters| fills the cumulative counters (called on the writer thread); |periodic| runs on
  // the writer thread about every millisecond (the profiler frees retired pools there).
  SpoolWriter(const SpoolWriterOptions& options, std::function<void(spool::CountersBody*)> counters,
              std::function<void()> periodic);
  ~SpoolWriter();
  SpoolWriter(const SpoolWriter&) = delete;
  SpoolWriter& operator=(const SpoolWriter&) = delete;

  // Creates the spool and writes |process| (with |host| and |trace_path| as its text), then
  // starts the thread. False with |*error| when the spool cannot be created; the capture then
  // records nothing (and counts it), the job goes on.
  bool Start(const std::string& trace_path, const spool::ProcessBody& process, const std::string& host,
             std::string* note, std::string* error);

  // A buffer for the calling thread, or nullptr when the budget is spent. Takes a lock: once per
  // thread and session.
  ThreadBuffer* Acquire(uint32_t os_tid);
  // The thread that owned |buffer| exited: drain it and reuse it.
  void Orphan(ThreadBuffer* buffer);

  // Moves everything still buffered, writes the final clock pair, counters and the End record,
  // and closes the file. Callbacks after this find no room and drop (counted).
  void Close();

  // Writer thread only (call it from |periodic|): makes everything captured so far readable and
  // returns the spool that holds it: this spool, with every buffer moved and the counters written.
  // |reason| is static text for the log.
  std::string DumpNow(const char* reason);

  // Writer thread only (from |periodic|): a capture switch the writer made (a time edge, the
  // control file, the signal), in its own stream.
  void WriteMarker(const spool::MarkerBody& marker);

  bool running() const { return running_.load(std::memory_order_acquire); }
  // What a waiting callback watches: once false, nobody will make room any more.
  const std::atomic<bool>* running_flag() const { return &running_; }
  const std::string& path() const { return file_.path(); }
  uint64_t blocks() const { return file_.blocks(); }
  uint64_t bytes() const { return file_.bytes(); }
  uint64_t raw_bytes() const { return file_.raw_bytes(); }
  uint64_t io_errors() const { return file_.io_errors(); }

 private:
  void Run();
  // Moves the buffers that are due; |all| moves every non-empty one.
  void MoveBuffers(bool all);
  void MoveBuffer(ThreadBuffer* b);
  void WriteOwnRecords();  // clock pair + counters, in the writer's own stream (0)

  SpoolWriterOptions options_;
  std::function<void(spool::CountersBody*)> counters_;
  std::function<void()> periodic_;
  SpoolFile file_;
  std::mutex mu_;                                      // registry changes only
  std::vector<std::unique_ptr<ThreadBuffer>> owned_;  // under mu_
  std::vector<ThreadBuffer*> free_;                    // drained buffers of exited threads, under mu_
  static constexpr size_t kMaxBuffers = 4096;
  ThreadBuffer* buffers_[kMaxBuffers] = {};            // published to the writer thread
  std::atomic<size_t> nbuffers_{0};
  std::unique_ptr<uint8_t[]> scratch_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{false};
  uint32_t writer_tid_ = 0;
  uint64_t last_flush_ns_ = 0;
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CAPTURE_SPOOL_WRITER_H_
