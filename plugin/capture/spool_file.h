// The spool on disk: opened exclusively (never another process's file, never an earlier run's
// spool), written one framed block per write() so that a block is on disk whole or not at all.
// A failed or short write is cut back off the file, counted and reported once, and the events
// whose Start records it held are counted per kind as lost (the writer adds them to the drops the
// spool's Counters records carry, so the trace and the final message count them); later blocks
// are still tried, so a full disk that frees up loses only what was written while it was full.
//
// Past its first |keep_cached| bytes (1 GiB), a long spool does not keep growing the page cache:
// every |chunk| bytes the writer starts the chunk's writeback (sync_file_range) and gives back the
// pages of the chunk before, which has had a chunk's time to reach the disk. Fresh page-cache
// pages are what a long capture paid most for on a virtual machine that returns freed memory to
// its host (each one a fault in the host too): 10 M sustained collectives, a 1.9 GB spool, cost
// the writer 9 to 10 s of system time and NCCL's thread 730 to 790 ns a collective, against 1.4 s
// and 330 to 370 ns this way. The pages given back are reused by the next chunk while they are
// still warm. A spool of up to 1 GiB is still exported from memory.
#ifndef KATRACE_PLUGIN_CAPTURE_SPOOL_FILE_H_
#define KATRACE_PLUGIN_CAPTURE_SPOOL_FILE_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "katrace/spool_format.h"

namespace katrace {

class SpoolFile {
 public:
  static constexpr uint64_t kKeepCachedBytes = 1ull << 30;
  static constexpr uint64_t kDropBehindChunk = 8u << 20;

  explicit SpoolFile(uint64_t keep_cached = kKeepCachedBytes, uint64_t chunk = kDropBehindChunk)
      : started_to_(keep_cached), dropped_to_(keep_cached), chunk_(chunk) {}
  ~SpoolFile();
  SpoolFile(const SpoolFile&) = delete;
  SpoolFile& operator=(const SpoolFile&) = delete;

  // Creates "<trace_path>.kspool", or a name with the pid (and a counter) when that exists; when
  // the directory is not writable, the same name in $TMPDIR (or /tmp), and |*note| says so. A
  // trace that is a device or a pipe spools in $TMPDIR.
  // False with |*error| when nothing could be created.
  bool Create(const std::string& trace_path, int os_pid, bool compress, std::string* note, std::string* error);

  // Frames |raw| (|raw_bytes| of whole records) as one block and writes it, compressed when the
  // file compresses and |compress| allows it.
  void WriteBlock(uint32_t stream, uint32_t os_tid, const uint8_t* raw, uint32_t raw_bytes, bool compress = true);
  void Close();

  const std::string& path() const { return path_; }
  uint64_t bytes() const { return offset_; }
  uint64_t blocks() const { return sequence_; }
  uint64_t io_errors() const { return io_errors_; }
  uint64_t raw_bytes() const { return raw_total_; }
  // Events of kind |kind| (a Kind value) whose Start record was in a block that could not be
  // written.
  uint64_t lost_starts(int kind) const { return lost_starts_[kind]; }

 private:
  // One block: |frame| (n bytes), then |rest| (rest_n bytes, the payload when it was not copied
  // into the frame). On a failed write the file is cut back to where the block began.
  // False when it failed.
  bool Append(const uint8_t* frame, size_t n, const uint8_t* rest, size_t rest_n, uint32_t raw_bytes);
  // Counts the Start records among |raw|'s records into lost_starts_.
  void CountLostStarts(const uint8_t* raw, uint32_t raw_bytes);
  bool WriteAll(const uint8_t* data, size_t n, int* err);
  // False with errno set when the header could not be written.
  bool WriteHeader(int os_pid);
  void DropBehind();

  int fd_ = -1;
  std::string path_;
  bool compress_ = false;
  uint64_t offset_ = 0;
  uint64_t sequence_ = 0;
  uint64_t io_errors_ = 0;
  uint64_t raw_total_ = 0;
  uint64_t lost_starts_[spool::kCounterKinds] = {};
  uint64_t started_to_;  // the writeback of everything before this was started
  uint64_t dropped_to_;  // the pages before this were given back (from keep_cached on)
  const uint64_t chunk_;
  std::vector<uint8_t> frame_, coded_;  // a block on its way out: framed, and delta-coded before LZ4
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CAPTURE_SPOOL_FILE_H_
