#include "plugin/capture/flight_ring.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <string>

#include "plugin/capture/block_frame.h"
#include "plugin/logger.h"

namespace katrace {
namespace {

// The stream the sticky records are written in: no capture buffer has it (those are 1..4096,
// the writer's own records 0), so its records' ticks do not hold back any other stream's order.
constexpr uint32_t kStickyStream = 0xfffffffeu;

bool WriteFully(int fd, const void* data, uint64_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<uint64_t>(w);
  }
  return true;
}

// One uncompressed block of |raw| records, numbered |number|.
bool WriteRawBlock(int fd, uint32_t stream, uint32_t tid, uint64_t number, const uint8_t* raw, uint32_t bytes) {
  uint32_t payload_crc = 0;
  const spool::BlockHeader h = RawBlockHeader(stream, tid, number, raw, bytes, &payload_crc);
  return WriteFully(fd, &h, sizeof(h)) && WriteFully(fd, raw, bytes);
}

// The host ticks of an event record (Start, State, Stop); false for the others.
bool EventTicks(const spool::RecordHeader& h, const uint8_t* body, size_t body_bytes, uint64_t* ticks) {
  size_t at;
  switch (h.type) {
    case spool::RecordType::kStart: at = offsetof(spool::StartBody, ticks); break;
    case spool::RecordType::kState: at = offsetof(spool::StateBody, ticks); break;
    case spool::RecordType::kStop: at = offsetof(spool::StopBody, ticks); break;
    default: return false;
  }
  if (body_bytes < at + sizeof(uint64_t)) return false;
  memcpy(ticks, body + at, sizeof(uint64_t));
  return true;
}

bool IsSticky(spool::RecordType type) {
  return type == spool::RecordType::kString || type == spool::RecordType::kComm ||
         type == spool::RecordType::kCommEnd;
}

}  // namespace

FlightRingPlan PlanFlightRing(uint64_t budget_bytes) {
  FlightRingPlan p;
  // A sixteenth for names and communicators: a job has a few hundred strings and communicators,
  // far below it, while the ring keeps most of the budget for history.
  p.sticky_bytes = budget_bytes / 16 < (64u << 10) ? (64u << 10) : budget_bytes / 16;
  p.max_marks = p.sticky_bytes / 64;
  p.max_blocks = budget_bytes / 1024 < 1024 ? 1024 : budget_bytes / 1024;
  uint64_t overhead = p.sticky_bytes + p.max_marks * sizeof(uint64_t) * 2 + p.max_blocks * 40;
  p.ring_bytes = budget_bytes > overhead + (64u << 10) ? budget_bytes - overhead : (64u << 10);
  return p;
}

FlightRing::FlightRing(uint64_t budget_bytes)
    : plan_(PlanFlightRing(budget_bytes)),
      ring_(new uint8_t[plan_.ring_bytes]),
      slots_(new Slot[plan_.max_blocks]),
      sticky_(new uint8_t[plan_.sticky_bytes]),
      marks_(new Mark[plan_.max_marks]) {
  static_assert(sizeof(Slot) == 40, "the plan counts 40 bytes per descriptor");
}

uint64_t FlightRing::KeepSticky(const uint8_t* raw, uint32_t raw_bytes, uint64_t number) {
  uint64_t used = sticky_used_.load(std::memory_order_relaxed);
  const uint64_t before = used;
  uint64_t max_ticks = 0;
  for (uint32_t at = 0; at + sizeof(spool::RecordHeader) <= raw_bytes;) {
    spool::RecordHeader h;
    memcpy(&h, raw + at, sizeof(h));
    if (h.size < sizeof(h) || h.size % 8 != 0 || h.size > raw_bytes - at) break;
    uint64_t ticks = 0;
    if (EventTicks(h, raw + at + sizeof(h), h.size - sizeof(h), &ticks) && ticks > max_ticks) max_ticks = ticks;
    bool first_clock = h.type == spool::RecordType::kClock && !first_clock_kept_;
    if (IsSticky(h.type) || first_clock) {
      if (used + h.size <= plan_.sticky_bytes) {
        memcpy(sticky_.get() + used, raw + at, h.size);
        used += h.size;
        if (first_clock) first_clock_kept_ = true;
      } else {
        sticky_dropped_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    at += h.size;
  }
  if (used == before) return max_ticks;
  uint64_t n = nmarks_.load(std::memory_order_relaxed);
  if (n == plan_.max_marks) {  // cannot say which block they came from: give them back
    sticky_dropped_.fetch_add(1, std::memory_order_relaxed);
    return max_ticks;
  }
  marks_[n] = Mark{number, used};
  sticky_used_.store(used, std::memory_order_release);
  nmarks_.store(n + 1, std::memory_order_release);
  return max_ticks;
}

void FlightRing::RaiseCut(uint64_t ticks) {
  if (ticks > cut_ticks_.load(std::memory_order_relaxed)) cut_ticks_.store(ticks, std::memory_order_relaxed);
}

void FlightRing::Add(const uint8_t* frame, uint32_t frame_bytes, uint32_t payload_crc, const uint8_t* raw,
                     uint32_t raw_bytes) {
  adding_tid_.store(static_cast<uint32_t>(syscall(SYS_gettid)), std::memory_order_seq_cst);
  if (frozen_.load(std::memory_order_seq_cst)) {
    refused_blocks_.fetch_add(1, std::memory_order_relaxed);
    adding_tid_.store(0, std::memory_order_seq_cst);
    return;
  }
  const uint64_t number = next_number_++;
  const uint64_t max_ticks = KeepSticky(raw, raw_bytes, number);
  const uint64_t cap = plan_.ring_bytes;
  if (frame_bytes > cap) {
    // Never held, and its sticky records were kept: from here on it reads as evicted.
    refused_blocks_.fetch_add(1, std::memory_order_relaxed);
    // Said, or a ring smaller than a thread's block (KATRACE_THREAD_BUFFER_KB large, a small
    // KATRACE_FLIGHT_MB, no compression) holds nothing, and a dump of it reads "0 events, 0 lost".
    WarnOnce(&oversize_warned_, "the flight recorder refuses a block of " + std::to_string(frame_bytes >> 10) +
                                    " KiB, larger than its whole ring (" + std::to_string(cap >> 10) +
                                    " KiB of KATRACE_FLIGHT_MB): such blocks are missing from every dump (counted "
                                    "there as refused_blocks); raise KATRACE_FLIGHT_MB or lower KATRACE_THREAD_BUFFER_KB");
    RaiseCut(max_ticks);
    adding_tid_.store(0, std::memory_order_seq_cst);
    return;
  }
  uint64_t pos = write_pos_;
  if (pos % cap + frame_bytes > cap) pos += cap - pos % cap;  // a frame never straddles the end
  uint64_t first = first_.load(std::memory_order_relaxed);
  const uint64_t end = end_.load(std::memory_order_relaxed);
  // Evicted: the frames the new one overwrites, and the oldest when every descriptor is taken.
  while (first < end && ((pos + frame_bytes > cap && slots_[first % plan_.max_blocks].pos < pos + frame_bytes - cap) ||
                         end - first >= plan_.max_blocks)) {
    evicted_blocks_.fetch_add(1, std::memory_order_relaxed);
    evicted_raw_bytes_.fetch_add(slots_[first % plan_.max_blocks].raw_bytes, std::memory_order_relaxed);
    RaiseCut(slots_[first % plan_.max_blocks].max_ticks);
    ++first;
    first_.store(first, std::memory_order_release);
  }
  memcpy(ring_.get() + pos % cap, frame, frame_bytes);
  slots_[end % plan_.max_blocks] = Slot{pos, number, max_ticks, frame_bytes, payload_crc, raw_bytes, 0};
  end_.store(end + 1, std::memory_order_release);
  write_pos_ = pos + frame_bytes;
  adding_tid_.store(0, std::memory_order_seq_cst);
}

uint64_t FlightRing::StickyPrefix(uint64_t oldest_held) const {
  // Marks are in block order: the sticky records of blocks older than the oldest held one are a
  // prefix of the area (the held blocks still carry theirs).
  uint64_t n = nmarks_.load(std::memory_order_acquire);
  uint64_t lo = 0, hi = n;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (marks_[mid].number < oldest_held) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo == 0 ? 0 : marks_[lo - 1].sticky_end;
}

bool FlightRing::WriteSpool(int fd, uint64_t os_pid, uint32_t tid, const uint8_t* lead, uint32_t lead_bytes,
                            const uint8_t* tail, uint32_t tail_bytes) const {
  spool::FileHeader fh{};
  memcpy(fh.magic, spool::kFileMagic, sizeof(fh.magic));
  fh.version = spool::kFormatVersion;
  fh.header_bytes = sizeof(fh);
  fh.os_pid = os_pid;
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  fh.created_realtime_ns = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  if (!WriteFully(fd, &fh, sizeof(fh))) return false;
  uint64_t number = 0;
  if (lead_bytes != 0 && !WriteRawBlock(fd, 0, tid, number++, lead, lead_bytes)) return false;
  const uint64_t first = first_.load(std::memory_order_acquire);
  const uint64_t end = end_.load(std::memory_order_acquire);
  const uint64_t oldest = first < end ? slots_[first % plan_.max_blocks].number : next_number_;
  const uint64_t sticky = StickyPrefix(oldest);
  if (sticky != 0 && !WriteRawBlock(fd, kStickyStream, tid, number++, sticky_.get(), static_cast<uint32_t>(sticky))) {
    return false;
  }
  const uint64_t cap = plan_.ring_bytes;
  for (uint64_t i = first; i < end; ++i) {
    const Slot s = slots_[i % plan_.max_blocks];
    const uint8_t* frame = ring_.get() + s.pos % cap;
    spool::BlockHeader h;
    memcpy(&h, frame, sizeof(h));
    // A frame the writer was overwriting (a crash in its Add) is left out, not written torn.
    if (h.magic != spool::kBlockMagic || sizeof(h) + static_cast<uint64_t>(h.stored_bytes) != s.bytes ||
        Crc32(0, frame + sizeof(h), h.stored_bytes) != s.payload_crc) {
      continue;
    }
    Renumber(&h, number++, s.payload_crc);
    if (!WriteFully(fd, &h, sizeof(h)) || !WriteFully(fd, frame + sizeof(h), h.stored_bytes)) return false;
  }
  return tail_bytes == 0 || WriteRawBlock(fd, 0, tid, number, tail, tail_bytes);
}

void FlightRing::Freeze() {
  frozen_.store(true, std::memory_order_seq_cst);
  const uint32_t self = static_cast<uint32_t>(syscall(SYS_gettid));
  for (int i = 0; i < 100; ++i) {
    uint32_t adding = adding_tid_.load(std::memory_order_seq_cst);
    if (adding == 0 || adding == self) break;
    timespec ms{0, 1000 * 1000};
    nanosleep(&ms, nullptr);
  }
}

void FlightRing::Thaw() { frozen_.store(false, std::memory_order_seq_cst); }

FlightRingStats FlightRing::stats() const {
  FlightRingStats s;
  const uint64_t first = first_.load(std::memory_order_acquire);
  const uint64_t end = end_.load(std::memory_order_acquire);
  s.added_blocks = next_number_;
  s.held_blocks = end - first;
  for (uint64_t i = first; i < end; ++i) s.held_bytes += slots_[i % plan_.max_blocks].bytes;
  s.evicted_blocks = evicted_blocks_.load(std::memory_order_relaxed);
  s.evicted_raw_bytes = evicted_raw_bytes_.load(std::memory_order_relaxed);
  s.refused_blocks = refused_blocks_.load(std::memory_order_relaxed);
  s.sticky_bytes = sticky_used_.load(std::memory_order_relaxed);
  s.sticky_dropped = sticky_dropped_.load(std::memory_order_relaxed);
  s.cut_ticks = cut_ticks_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace katrace
