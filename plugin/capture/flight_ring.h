// The flight recorder's memory (KATRACE_MODE=flight): the newest framed spool blocks in a ring of
// bounded bytes, oldest evicted first, and a sticky area for the records the export needs however
// old they are (String, Comm, CommEnd and the first Clock pair), copied from each block's raw
// records before it is framed. A dump writes the sticky records of the blocks already evicted,
// then the held blocks oldest first, renumbered so they read as one spool.
//
// One writer (the spool writer thread) adds blocks. A dump runs on the writer thread, or in a
// fatal signal handler on any thread: that one freezes the ring (the writer then refuses new
// blocks), waits a moment for an Add in progress to finish, and checks each block's CRC before
// writing it, so what it writes is whole blocks only. Best effort: a crash inside the writer's
// own Add may leave the newest block out.
#ifndef KATRACE_PLUGIN_CAPTURE_FLIGHT_RING_H_
#define KATRACE_PLUGIN_CAPTURE_FLIGHT_RING_H_

#include <stdint.h>

#include <atomic>
#include <memory>

#include "katrace/spool_format.h"

namespace katrace {

// How a budget is shared out; everything the ring allocates is in it.
struct FlightRingPlan {
  uint64_t ring_bytes = 0;    // framed blocks
  uint64_t sticky_bytes = 0;  // sticky records
  uint64_t max_blocks = 0;    // block descriptors (tiny blocks evict by count)
  uint64_t max_marks = 0;     // per-block ends in the sticky area
};
FlightRingPlan PlanFlightRing(uint64_t budget_bytes);

struct FlightRingStats {
  uint64_t added_blocks = 0;
  uint64_t held_blocks = 0;
  uint64_t held_bytes = 0;  // framed
  uint64_t evicted_blocks = 0;
  uint64_t evicted_raw_bytes = 0;
  uint64_t refused_blocks = 0;
  uint64_t sticky_bytes = 0;
  uint64_t sticky_dropped = 0;
  uint64_t cut_ticks = 0;  // latest event ticks in a block evicted or refused (0: none)
};

class FlightRing {
 public:
  explicit FlightRing(uint64_t budget_bytes);
  FlightRing(const FlightRing&) = delete;
  FlightRing& operator=(const FlightRing&) = delete;

  // Writer thread. |frame| is a block framed by FrameBlock (header, then payload) whose payload
  // has CRC |payload_crc|; |raw| are its |raw_bytes| decoded records, scanned for sticky ones.
  void Add(const uint8_t* frame, uint32_t frame_bytes, uint32_t payload_crc, const uint8_t* raw, uint32_t raw_bytes);

  // Writes a whole spool to |fd|: the file header (|os_pid|), a block of |lead| (records the
  // caller made: Process, Flight), the sticky records of evicted blocks, the held blocks oldest
  // first, and a block of |tail| (the End record, or nothing). |tid| names the lead's thread.
  // Async-signal-safe: write(), clock_gettime() and arithmetic only. False on a write error.
  bool WriteSpool(int fd, uint64_t os_pid, uint32_t tid, const uint8_t* lead, uint32_t lead_bytes, const uint8_t* tail,
                  uint32_t tail_bytes) const;

  // Async-signal-safe. Stops Add (its blocks are refused and counted) and waits up to about
  // 100 ms for an Add in progress on another thread (one on the calling thread, which the
  // signal interrupted, cannot finish: its block is then left out by its CRC).
  void Freeze();
  void Thaw();

  // Consistent on the writer thread, or while frozen.
  FlightRingStats stats() const;
  const FlightRingPlan& plan() const { return plan_; }
  uint64_t sticky_dropped() const { return sticky_dropped_.load(std::memory_order_relaxed); }

 private:
  struct Slot {
    uint64_t pos;  // logical byte position of the frame (grows; the byte lives at pos % ring)
    uint64_t number;
    uint64_t max_ticks;  // latest ticks of its event records
    uint32_t bytes;
    uint32_t payload_crc;
    uint32_t raw_bytes;
    uint32_t pad;
  };
  struct Mark {
    uint64_t number;      // block number the sticky records came from
    uint64_t sticky_end;  // the sticky area up to here holds that block's and older ones' records
  };
  // Copies the sticky records of |raw| and returns the latest ticks of its event records.
  uint64_t KeepSticky(const uint8_t* raw, uint32_t raw_bytes, uint64_t number);
  uint64_t StickyPrefix(uint64_t oldest_held) const;
  void RaiseCut(uint64_t ticks);

  FlightRingPlan plan_;
  std::unique_ptr<uint8_t[]> ring_;
  std::unique_ptr<Slot[]> slots_;
  std::unique_ptr<uint8_t[]> sticky_;
  std::unique_ptr<Mark[]> marks_;
  std::atomic<uint64_t> first_{0};  // oldest held slot (slots are numbered, index = n % max_blocks)
  std::atomic<uint64_t> end_{0};    // one past the newest
  std::atomic<uint64_t> sticky_used_{0};
  std::atomic<uint64_t> nmarks_{0};
  uint64_t write_pos_ = 0;
  uint64_t next_number_ = 0;
  bool first_clock_kept_ = false;
  std::atomic<uint64_t> evicted_blocks_{0}, evicted_raw_bytes_{0}, refused_blocks_{0}, sticky_dropped_{0};
  std::atomic<uint64_t> cut_ticks_{0};
  std::atomic<bool> frozen_{false};
  std::atomic<uint32_t> adding_tid_{0};  // the thread inside Add, 0 when none
  std::atomic<bool> oversize_warned_{false};  // a block larger than the ring was said
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CAPTURE_FLIGHT_RING_H_
