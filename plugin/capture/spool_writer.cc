#include "plugin/capture/spool_writer.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <string.h>

#include "plugin/capture/host_clock.h"
#include "plugin/clock.h"

namespace katrace {
namespace {

constexpr useconds_t kPollMicros = 500;

template <typename Body>
void AppendRecord(std::vector<uint8_t>* out, spool::RecordType type, const Body& body, const std::string& text = {}) {
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

}  // namespace

SpoolWriter::SpoolWriter(const SpoolWriterOptions& options, std::function<void(spool::CountersBody*)> counters,
                         std::function<void()> periodic)
    : options_(options), counters_(std::move(counters)), periodic_(std::move(periodic)) {}

SpoolWriter::~SpoolWriter() { Close(); }

bool SpoolWriter::Start(const std::string& trace_path, const spool::ProcessBody& process, const std::string& host,
                        std::string* note, std::string* error) {
  if (!file_.Create(trace_path, process.os_pid, options_.compress, note, error)) return false;
  scratch_.reset(new uint8_t[options_.buffer_bytes]);
  // Process identity first, then the first clock pair, so a reader can place everything after.
  std::vector<uint8_t> own;
  spool::ProcessBody p = process;
  std::string text = host.substr(0, 1024) + trace_path.substr(0, 4096);
  p.host_length = static_cast<uint32_t>(host.size() < 1024 ? host.size() : 1024);
  p.trace_path_length = static_cast<uint32_t>(text.size() - p.host_length);
  AppendRecord(&own, spool::RecordType::kProcess, p, text);
  writer_tid_ = static_cast<uint32_t>(syscall(SYS_gettid));
  file_.WriteBlock(0, writer_tid_, own.data(), static_cast<uint32_t>(own.size()));
  WriteOwnRecords();
  last_flush_ns_ = NowMonotonicNs();
  running_.store(true, std::memory_order_release);
  thread_ = std::thread([this] { Run(); });
  return true;
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
    owned_.push_back(std::make_unique<ThreadBuffer>(static_cast<uint32_t>(n + 1), options_.buffer_bytes));
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
  if (n != 0) file_.WriteBlock(b->stream(), b->os_tid.load(std::memory_order_relaxed), scratch_.get(), static_cast<uint32_t>(n));
  b->Release();
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
  AppendRecord(&own, spool::RecordType::kClock, ReadClockPair());
  spool::CountersBody counters{};
  counters_(&counters);
  counters.io_errors += file_.io_errors();
  AppendRecord(&own, spool::RecordType::kCounters, counters);
  file_.WriteBlock(0, writer_tid_, own.data(), static_cast<uint32_t>(own.size()));
}

std::string SpoolWriter::DumpNow(const char* /*reason*/) {
  MoveBuffers(true);
  WriteOwnRecords();
  return file_.path();
}

void SpoolWriter::WriteMarker(const spool::MarkerBody& marker) {
  std::vector<uint8_t> own;
  AppendRecord(&own, spool::RecordType::kMarker, marker);
  file_.WriteBlock(0, writer_tid_, own.data(), static_cast<uint32_t>(own.size()));
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
    usleep(kPollMicros);
  }
}

void SpoolWriter::Close() {
  if (!running_.exchange(false, std::memory_order_acq_rel)) return;
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
  MoveBuffers(true);
  WriteOwnRecords();
  std::vector<uint8_t> own;
  struct {
    uint64_t ticks;
  } end{NowTicks()};
  AppendRecord(&own, spool::RecordType::kEnd, end);
  file_.WriteBlock(0, writer_tid_, own.data(), static_cast<uint32_t>(own.size()));
  file_.Close();
}

}  // namespace katrace
