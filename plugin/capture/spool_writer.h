// The spool writer: one thread that moves the records captured in the per-thread buffers into
// the spool file as framed blocks. A buffer is moved as soon as it is a quarter full, and every
// buffer with anything in it at least every 100 ms, so a hung job's last events reach the disk.
// A buffer it finds half full or more is written uncompressed, so that compression never makes
// the capture wait. Each 100 ms it also writes a host clock calibration pair and the loss counters. Memory is
// bounded by the buffer budget: at most budget / buffer size buffers exist; the buffer of a thread
// that exited is drained and handed to the next new thread. In flight mode the same blocks go to
// a FlightRing in memory instead of the file, and only dumps reach the disk.
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
#include "plugin/capture/flight_ring.h"
#include "plugin/capture/spool_file.h"
#include "plugin/capture/thread_buffer.h"
#include "plugin/capture/writer_doorbell.h"

namespace katrace {

struct SpoolWriterOptions {
  uint64_t buffer_bytes = 1u << 20;  // per thread, a power of two
  uint64_t budget_bytes = 64u << 20;  // all buffers together
  bool compress = true;
  uint64_t flush_interval_ns = 100 * 1000 * 1000;
  // Flight recorder (KATRACE_MODE=flight): blocks stay in a ring of flight_bytes in memory and
  // reach the disk only in a dump (DumpNow, Close with flight_dump_at_exit, a fatal signal with
  // flight_dump_on_crash); no spool file exists until then.
  bool flight = false;
  uint64_t flight_bytes = 64u << 20;
  bool flight_dump_at_exit = false;
  bool flight_dump_on_crash = true;
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
  // In flight mode, a new spool "<trace stem>.flight-<n>.json.kspool" with the ring's contents
  // (its Process record names "<trace stem>.flight-<n>.json" as its trace), handed to the dump
  // listener; "" when it could not be written (logged). |reason| is static text, kept in the dump.
  std::string DumpNow(const char* reason);

  // Writer thread only (from |periodic|): a capture switch the writer made (a time edge, the
  // control file, the signal), in its own stream.
  void WriteMarker(const spool::MarkerBody& marker);
  // Called (on the writer thread, or in Close) with each flight dump's spool and trace path.
  // Set it before Start.
  void SetDumpListener(std::function<void(const std::string& spool, const std::string& trace)> listener) {
    dump_listener_ = std::move(listener);
  }
  // Flight mode, after Close: the spool and trace of the dump at exit ("" when none was made).
  const std::string& exit_dump_spool() const { return exit_dump_spool_; }
  const std::string& exit_dump_trace() const { return exit_dump_trace_; }
  // Flight mode: where a crash dump would go ("" when none is armed).
  const std::string& crash_dump_spool() const { return crash_spool_; }
  bool flight() const { return options_.flight; }
  // Flight mode, writer thread or after Close.
  FlightRingStats flight_stats() const { return ring_ ? ring_->stats() : FlightRingStats{}; }

  // What a waiting callback watches: once false, nobody will make room any more.
  const std::atomic<bool>* running_flag() const { return &running_; }
  const std::string& path() const { return file_.path(); }
  uint64_t blocks() const { return file_.blocks(); }
  uint64_t bytes() const { return file_.bytes(); }
  uint64_t raw_bytes() const { return file_.raw_bytes(); }
  uint64_t io_errors() const { return file_.io_errors(); }
  // Blocks (and their bytes) left uncompressed because the writer had fallen behind a thread.
  // Counted once the block was written (released), so a reader that sees the count also sees
  // what writing it did.
  uint64_t uncompressed_blocks() const { return uncompressed_blocks_.load(std::memory_order_acquire); }
  uint64_t uncompressed_bytes() const { return uncompressed_bytes_.load(std::memory_order_relaxed); }

 private:
  void Run();
  // Moves the buffers that are due; |all| moves every non-empty one.
  void MoveBuffers(bool all);
  void MoveBuffer(ThreadBuffer* b);
  void WriteOwnRecords();  // clock pair + counters, in the writer's own stream (0)
  // One block of raw records: to the spool file, or into the flight ring; |compress| false keeps
  // it uncompressed whatever the options say.
  void Emit(uint32_t stream, uint32_t os_tid, const uint8_t* raw, uint32_t raw_bytes, bool compress = true);
  std::vector<uint8_t> ProcessRecord(const std::string& trace_path) const;
  // Writes a flight dump named with |tag| (e.g. "flight-3"); false (logged) when it cannot.
  bool WriteFlightDump(const char* reason, std::string* spool_path, std::string* trace_path);
  void ArmCrashDump();

  SpoolWriterOptions options_;
  std::function<void(spool::CountersBody*)> counters_;
  std::function<void()> periodic_;
  SpoolFile file_;
  WriterDoorbell doorbell_;  // before the buffers that ring it, so it outlives them
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
  std::atomic<uint64_t> uncompressed_blocks_{0}, uncompressed_bytes_{0};  // written by the writer thread
  // Flight mode.
  std::unique_ptr<FlightRing> ring_;
  std::vector<uint8_t> frame_, coded_;
  spool::ProcessBody process_{};
  std::string host_, trace_path_;
  int next_dump_ = 1;
  std::function<void(const std::string&, const std::string&)> dump_listener_;
  std::string exit_dump_spool_, exit_dump_trace_, crash_spool_;
  std::atomic<bool> sticky_warned_{false};
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CAPTURE_SPOOL_WRITER_H_
