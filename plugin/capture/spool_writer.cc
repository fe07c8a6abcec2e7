#include "plugin/capture/spool_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/in_place_path.h"
#include "common/paths.h"
#include "common/trace_format.h"
#include "plugin/capture/block_frame.h"
#include "plugin/capture/crash_dump.h"
#include "plugin/capture/host_clock.h"
#include "plugin/clock.h"
#include "plugin/logger.h"

namespace katrace {
namespace {

constexpr uint32_t kPollMicros = 500;  // the longest sleep between rounds: clocks, counters, periodic work

// The writer's own records (Process, Clock, Counters, Marker, Flight, End), framed as the
// capture's are (plugin/capture/record_appender.h frames those into the thread buffers).
template <typename Body>
void AppendWriterRecord(std::vector<uint8_t>* out, spool::RecordType type, const Body& body, const std::string& text = {}) {
  uint16_t size = spool::RecordSize(sizeof(Body) + text.size());
  size_t at = out->size();
  out->resize(at + size, 0);
  spool::RecordHeader h{};
  h.type = type;
  h.size = size;
  memcpy(out->data() + at, &h, sizeof(h));
  memcpy(out->data() + at + sizeof(h), &body, sizeof(Body));
  if (!text.empty()) memcpy(out->data() + at + sizeof(h) + sizeof(Body), text.data(), text.size());
}

// One calibration pair. The clock reads are bracketed by tick reads and the tightest of a few
// tries is kept (the writer can be preempted between two reads), so host events and realtime-
// seeded GPU stamps line up to within tens of ns.
spool::ClockBody ReadClockPair() {
  spool::ClockBody best{};
  uint64_t best_width = UINT64_MAX;
  for (int attempt = 0; attempt < 8; ++attempt) {
    uint64_t before = NowTicks();
    uint64_t mono = NowMonotonicNs();
    uint64_t after = NowTicks();
    uint64_t real = NowRealtimeNs();
    if (after - before < best_width) {
      best_width = after - before;
      best.ticks = before + (after - before) / 2;
      best.monotonic_ns = mono;
      best.realtime_ns = real;
    }
  }
  return best;
}

// "<stem>.<tag>.json" for a trace "<stem>.json" (or any trace extension of ours, .gz too), else
// "<trace>.<tag>": a dump's trace sits next to the run's and says which dump it is. A trace that
// is a device or a pipe (/dev/null, /dev/stdout) has no "next to": a dump is a file of its own,
// made under the trace's name in $TMPDIR, never a new file in /dev.
std::string TaggedTracePath(const std::string& trace, const std::string& tag) {
  const std::string base = IsWrittenInPlace(trace) ? InTempDir(trace) : trace;
  const size_t ext = TraceExtensionLength(base);
  return base.substr(0, base.size() - ext) + "." + tag + base.substr(base.size() - ext);
}

std::vector<uint8_t> FlightRecord(const FlightRingStats& st, const char* reason) {
  std::vector<uint8_t> out;
  spool::FlightBody body{};
  body.evicted_blocks = st.evicted_blocks;
  body.evicted_raw_bytes = st.evicted_raw_bytes;
  body.refused_blocks = st.refused_blocks;
  body.sticky_dropped = st.sticky_dropped;
  body.cut_ticks = st.cut_ticks;
  body.dump_realtime_ns = NowRealtimeNs();
  std::string text = reason != nullptr ? std::string(reason).substr(0, 256) : "";
  body.reason_length = static_cast<uint32_t>(text.size());
  AppendWriterRecord(&out, spool::RecordType::kFlight, body, text);
  return out;
}

}  // namespace

SpoolWriter::SpoolWriter(const SpoolWriterOptions& options, std::function<void(spool::CountersBody*)> counters,
                         std::function<void()> periodic)
    : options_(options), counters_(std::move(counters)), periodic_(std::move(periodic)) {}

SpoolWriter::~SpoolWriter() { Close(); }

std::vector<uint8_t> SpoolWriter::ProcessRecord(const std::string& trace_path) const {
  std::vector<uint8_t> out;
  spool::ProcessBody p = process_;
  std::string text = host_.substr(0, 1024) + trace_path.substr(0, 4096);
  p.host_length = static_cast<uint32_t>(host_.size() < 1024 ? host_.size() : 1024);
  p.trace_path_length = static_cast<uint32_t>(text.size() - p.host_length);
  AppendWriterRecord(&out, spool::RecordType::kProcess, p, text);
  return out;
}

bool SpoolWriter::Start(const std::string& trace_path, const spool::ProcessBody& process, const std::string& host,
                        std::string* note, std::string* error) {
  process_ = process;
  host_ = host;
  trace_path_ = trace_path;
  writer_tid_ = static_cast<uint32_t>(syscall(SYS_gettid));
  if (options_.flight) {
    // Nothing on disk: every dump writes its own Process record, naming its own trace.
    note->clear();
    try {
      ring_ = std::make_unique<FlightRing>(options_.flight_bytes);
    } catch (const std::bad_alloc&) {
      *error = "cannot allocate the flight recorder's " + std::to_string(options_.flight_bytes >> 20) +
               " MiB (KATRACE_FLIGHT_MB)";
      return false;
    }
  } else {
    if (!file_.Create(trace_path, process.os_pid, options_.compress, note, error)) return false;
    // Process identity first, then the first clock pair, so a reader can place everything after.
    std::vector<uint8_t> own = ProcessRecord(trace_path);
    file_.WriteBlock(0, writer_tid_, own.data(), static_cast<uint32_t>(own.size()));
  }
  scratch_.reset(new uint8_t[options_.buffer_bytes]);
  WriteOwnRecords();
  if (options_.flight && options_.flight_dump_on_crash) ArmCrashDump();
  last_flush_ns_ = NowMonotonicNs();
  running_.store(true, std::memory_order_release);
  thread_ = std::thread([this] { Run(); });
  return true;
}

void SpoolWriter::ArmCrashDump() {
  CrashDumpSetup setup;
  setup.ring = ring_.get();
  setup.frozen_ring = ring_.get();
  setup.os_pid = static_cast<uint64_t>(process_.os_pid);
  setup.writer_tid = writer_tid_;
  // Named now, so the handler only opens it: one that exists already (an earlier run's) is
  // never overwritten, the pid then tells this one apart.
  std::string trace = TaggedTracePath(trace_path_, "crash");
  std::string spool = trace + ".kspool";
  if (access(spool.c_str(), F_OK) == 0) {
    trace = TaggedTracePath(trace_path_, "crash-" + std::to_string(process_.os_pid));
    spool = trace + ".kspool";
  }
  std::string dir = spool.rfind('/') == std::string::npos ? "." : spool.substr(0, spool.rfind('/') + 1);
  if (access(dir.c_str(), W_OK) != 0) spool = InTempDir(spool);
  setup.spool_path = spool;
  setup.lead = ProcessRecord(trace);
  setup.flight_body_offset = setup.lead.size() + sizeof(spool::RecordHeader);
  std::vector<uint8_t> flight = FlightRecord(FlightRingStats{}, "fatal signal");
  setup.lead.insert(setup.lead.end(), flight.begin(), flight.end());
  std::string error;
  if (!InstallCrashDump(setup, &error)) {
    LogWarn(error + "; the flight recorder is not dumped on a crash, the job goes on");
    return;
  }
  crash_spool_ = spool;
}

ThreadBuffer* SpoolWriter::Acquire(uint32_t os_tid) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!running_.load(std::memory_order_acquire)) return nullptr;
  ThreadBuffer* b = nullptr;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
  } else {
    size_t n = nbuffers_.load(std::memory_order_relaxed);
    if (n >= kMaxBuffers || (n + 1) * options_.buffer_bytes > options_.budget_bytes) return nullptr;
    owned_.push_back(std::make_unique<ThreadBuffer>(static_cast<uint32_t>(n + 1), options_.buffer_bytes, &doorbell_));
    b = owned_.back().get();
    buffers_[n] = b;
    nbuffers_.store(n + 1, std::memory_order_release);
  }
  b->os_tid.store(os_tid, std::memory_order_relaxed);
  b->orphaned.store(false, std::memory_order_release);
  return b;
}

void SpoolWriter::Orphan(ThreadBuffer* buffer) {
  std::lock_guard<std::mutex> lock(mu_);
  buffer->orphaned.store(true, std::memory_order_release);
}

void SpoolWriter::MoveBuffer(ThreadBuffer* b) {
  uint64_t n = b->Take(scratch_.get());
  // The records are in scratch_ now: their thread may write over them while they are compressed
  // and written, rather than wait for the file.
  b->Release();
  // Due at a quarter full, found at half or more: the writer has fallen behind this thread, and
  // compressing (the writer's largest cost) would soon make its callbacks wait. The block goes
  // out uncompressed: the spool grows, the job is not slowed. Not in flight mode, where the
  // ring's size is the budget and compression is what buys its history.
  const bool behind = !options_.flight && n >= b->capacity() / 2;
  if (n != 0) {
    Emit(b->stream(), b->os_tid.load(std::memory_order_relaxed), scratch_.get(), static_cast<uint32_t>(n), !behind);
  }
  if (behind && options_.compress) {
    uncompressed_bytes_.fetch_add(n, std::memory_order_relaxed);
    uncompressed_blocks_.fetch_add(1, std::memory_order_release);
  }
}

void SpoolWriter::MoveBuffers(bool all) {
  size_t n = nbuffers_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) {
    ThreadBuffer* b = buffers_[i];
    uint64_t pending = b->Pending();
    if (pending != 0 && (all || pending >= b->capacity() / 4)) MoveBuffer(b);
    if (b->orphaned.load(std::memory_order_acquire) && b->Pending() == 0) {
      std::lock_guard<std::mutex> lock(mu_);
      if (b->orphaned.load(std::memory_order_relaxed)) {
        b->orphaned.store(false, std::memory_order_relaxed);
        b->os_tid.store(0, std::memory_order_relaxed);
        free_.push_back(b);
      }
    }
  }
}

void SpoolWriter::WriteOwnRecords() {
  std::vector<uint8_t> own;
  AppendWriterRecord(&own, spool::RecordType::kClock, ReadClockPair());
  spool::CountersBody counters{};
  counters_(&counters);
  counters.io_errors += file_.io_errors();
  for (int k = 0; k < spool::kCounterKinds; ++k) counters.dropped[k] += file_.lost_starts(k);
  AppendWriterRecord(&own, spool::RecordType::kCounters, counters);
  Emit(0, writer_tid_, own.data(), static_cast<uint32_t>(own.size()));
}

void SpoolWriter::Emit(uint32_t stream, uint32_t os_tid, const uint8_t* raw, uint32_t raw_bytes, bool compress) {
  if (!options_.flight) {
    file_.WriteBlock(stream, os_tid, raw, raw_bytes, compress);
    return;
  }
  if (raw_bytes == 0) return;
  uint32_t crc = FrameBlock(stream, os_tid, 0, raw, raw_bytes, options_.compress && compress, &frame_, &coded_);
  uint64_t dropped_before = ring_->sticky_dropped();
  ring_->Add(frame_.data(), static_cast<uint32_t>(frame_.size()), crc, raw, raw_bytes);
  if (ring_->sticky_dropped() != dropped_before) {
    WarnOnce(&sticky_warned_, "the flight recorder's area for names and communicators (" +
                                  std::to_string(ring_->plan().sticky_bytes >> 10) +
                                  " KiB of KATRACE_FLIGHT_MB) is full: once their blocks are evicted, later names "
                                  "and communicators are missing from dumps (counted in each dump)");
  }
}

bool SpoolWriter::WriteFlightDump(const char* reason, std::string* spool_path, std::string* trace_path) {
  int fd = -1;
  int first_errno = 0;
  for (int attempt = 0; attempt < 1000 && fd < 0; ++attempt) {
    *trace_path = TaggedTracePath(trace_path_, "flight-" + std::to_string(next_dump_++));
    *spool_path = *trace_path + ".kspool";
    fd = open(spool_path->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) {
      // Not writable next to the trace: the same name in $TMPDIR.
      first_errno = errno;
      *spool_path = InTempDir(*spool_path);
      fd = open(spool_path->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0 && errno != EEXIST) break;
    }
  }
  if (fd < 0) {
    LogWarn(std::string("flight recorder: cannot write a dump (") + reason + ") to '" + *spool_path + "' (" +
            strerror(first_errno != 0 ? first_errno : errno) + "); the ring is kept, the job goes on");
    return false;
  }
  std::vector<uint8_t> lead = ProcessRecord(*trace_path);
  std::vector<uint8_t> flight = FlightRecord(ring_->stats(), reason);
  lead.insert(lead.end(), flight.begin(), flight.end());
  std::vector<uint8_t> tail;
  AppendWriterRecord(&tail, spool::RecordType::kEnd, spool::EndBody{NowTicks()});
  bool ok = ring_->WriteSpool(fd, static_cast<uint64_t>(process_.os_pid), writer_tid_, lead.data(),
                              static_cast<uint32_t>(lead.size()), tail.data(), static_cast<uint32_t>(tail.size()));
  int err = errno;
  if (close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    unlink(spool_path->c_str());
    LogWarn(std::string("flight recorder: the dump (") + reason + ") to '" + *spool_path + "' failed (" + strerror(err) +
            "); the ring is kept, the job goes on");
    return false;
  }
  return true;
}

std::string SpoolWriter::DumpNow(const char* reason) {
  MoveBuffers(true);
  WriteOwnRecords();
  if (!options_.flight) return file_.path();
  std::string spool, trace;
  if (!WriteFlightDump(reason, &spool, &trace)) return "";
  if (dump_listener_) dump_listener_(spool, trace);
  return spool;
}

void SpoolWriter::WriteMarker(const spool::MarkerBody& marker) {
  std::vector<uint8_t> own;
  AppendWriterRecord(&own, spool::RecordType::kMarker, marker);
  Emit(0, writer_tid_, own.data(), static_cast<uint32_t>(own.size()));
}

void SpoolWriter::Run() {
  while (!stop_.load(std::memory_order_acquire)) {
    uint64_t now = NowMonotonicNs();
    bool due = now - last_flush_ns_ >= options_.flush_interval_ns;
    MoveBuffers(due);
    if (due) {
      WriteOwnRecords();
      last_flush_ns_ = now;
    }
    periodic_();
    doorbell_.Sleep(kPollMicros);
  }
}

void SpoolWriter::Close() {
  if (!running_.exchange(false, std::memory_order_acq_rel)) return;
  stop_.store(true, std::memory_order_release);
  doorbell_.Ring();
  if (thread_.joinable()) thread_.join();
  MoveBuffers(true);
  WriteOwnRecords();
  if (options_.flight) {
    if (!crash_spool_.empty()) UninstallCrashDump();
    if (options_.flight_dump_at_exit && !WriteFlightDump("exit", &exit_dump_spool_, &exit_dump_trace_)) {
      exit_dump_spool_.clear();
      exit_dump_trace_.clear();
    }
    return;
  }
  std::vector<uint8_t> own;
  AppendWriterRecord(&own, spool::RecordType::kEnd, spool::EndBody{NowTicks()});
  file_.WriteBlock(0, writer_tid_, own.data(), static_cast<uint32_t>(own.size()));
  file_.Close();
}

}  // namespace katrace
