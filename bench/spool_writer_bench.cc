// The spool writer's own capacity: how many records per second one writer thread moves from the
// capture buffers into the spool file. The producer here is as cheap as a producer can be (it
// copies prepared records into its capture buffer through the real appender, with no handles,
// pools or clock reads), so unlike writer_bench, which goes through the ABI, the writer is what
// limits the rate: the count of producer waits says so. The records are the four a sustained
// collective leaves (Coll start and stop, KernelCh start, and its stop with its KernelChStop
// state folded in), with times and ids that advance as they do in a real run, so LZ4 sees
// realistic bytes.
//
//   spool_writer_bench RECORDS DIR [lz4|none] [threads]
//
// Prints records/s and MB/s from the first record to the spool closed on disk (every record
// written), the producer waits, and the spool's bytes per record.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "katrace/event_kinds.h"
#include "katrace/spool_format.h"
#include "nccl_profiler/common.h"
#include "plugin/capture/host_clock.h"
#include "plugin/capture/record_appender.h"
#include "plugin/capture/spool_writer.h"

namespace {

using katrace::AppendPolicy;
using katrace::AppendRecord;
using katrace::CaptureCounters;
using katrace::StartRecord;
using katrace::ThreadBuffer;
namespace spool = katrace::spool;

double Seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

constexpr int kColl = static_cast<int>(katrace::Kind::kColl);
constexpr int kKernelCh = static_cast<int>(katrace::Kind::kKernelCh);
constexpr int kRecordsPerCollective = 4;

// One collective's four records; returns the records appended (always 4 in wait mode).
uint64_t AppendCollective(ThreadBuffer* b, const AppendPolicy& policy, uint64_t n, uint64_t base_id) {
  const uint64_t ticks = n * 1300;  // a collective every ~600 ns at 2.1 GHz
  const uint64_t coll = base_id + 2 * n, ch = coll + 1;
  StartRecord<spool::CollFields> cs{{coll, 0, ticks}, {}};
  cs.fields.seq = n;
  cs.fields.count = 1 << 20;
  cs.fields.func = 1;
  cs.fields.datatype = 2;
  cs.fields.algo = 3;
  cs.fields.proto = 4;
  cs.fields.nchannels = 1;
  cs.fields.nwarps = 16;
  StartRecord<spool::KernelChFields> ks{{ch, coll, ticks + 400}, {}};
  ks.fields.gpu_start = 1700000000000000000ull + n * 600;
  ks.fields.func = 1;
  uint64_t ok = 0;
  ok += AppendRecord(b, policy, spool::RecordType::kStart, kColl, 1, spool::kStartAwaitsKernelCh, cs);
  ok += AppendRecord(b, policy, spool::RecordType::kStop, kColl, 1, 0, spool::StopBody{coll, ticks + 250});
  ok += AppendRecord(b, policy, spool::RecordType::kStart, kKernelCh, 1, 0, ks);
  ok += AppendRecord(b, policy, spool::RecordType::kStop, kKernelCh, 1, spool::kStopCarriesGpuStop,
                     spool::StopWithGpuStopBody{ch, ticks + 900, ks.fields.gpu_start + 350});
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s RECORDS DIR [lz4|none] [threads]\n", argv[0]);
    return 2;
  }
  const long long records = atoll(argv[1]);
  const std::string dir = argv[2];
  const std::string compression = argc > 3 ? argv[3] : "lz4";
  const int threads = argc > 4 ? atoi(argv[4]) : 1;
  if (records < kRecordsPerCollective || (compression != "lz4" && compression != "none") || threads < 1 ||
      threads > 64) {
    fprintf(stderr, "RECORDS must be at least %d, compression lz4 or none, threads 1..64\n", kRecordsPerCollective);
    return 2;
  }
  mkdir(dir.c_str(), 0755);
  std::string note;
  katrace::g_clock_source = katrace::ChooseClockSource("auto", &note);

  katrace::SpoolWriterOptions options;
  options.compress = compression == "lz4";
  CaptureCounters counters;
  katrace::SpoolWriter writer(
      options, [&](spool::CountersBody* c) { c->waits = counters.waits.load(std::memory_order_relaxed); }, [] {});
  spool::ProcessBody process{};
  process.os_pid = static_cast<uint64_t>(getpid());
  const std::string trace = dir + "/spool_writer_bench.json";
  std::string error;
  if (!writer.Start(trace, process, "bench", &note, &error)) {
    fprintf(stderr, "cannot start the spool writer: %s\n", error.c_str());
    return 1;
  }
  AppendPolicy policy;
  policy.writer_running = writer.running_flag();
  policy.counters = &counters;

  const uint64_t per_thread = static_cast<uint64_t>(records) / kRecordsPerCollective / static_cast<uint64_t>(threads);
  std::atomic<uint64_t> appended{0};
  const double t0 = Seconds();
  std::vector<std::thread> producers;
  for (int t = 0; t < threads; ++t) {
    producers.emplace_back([&, t] {
      ThreadBuffer* b = writer.Acquire(static_cast<uint32_t>(1000 + t));
      if (b == nullptr) return;
      uint64_t ok = 0;
      const uint64_t base_id = (static_cast<uint64_t>(t) + 1) << 40;
      for (uint64_t n = 0; n < per_thread; ++n) ok += AppendCollective(b, policy, n, base_id);
      appended.fetch_add(ok, std::memory_order_relaxed);
    });
  }
  for (std::thread& p : producers) p.join();
  const double produced = Seconds() - t0;
  writer.Close();
  const double total = Seconds() - t0;

  const uint64_t moved = appended.load();
  const double raw_mb = static_cast<double>(writer.raw_bytes()) / 1e6;
  uint64_t lost = 0;
  for (const auto& d : counters.dropped) lost += d.load();
  printf("spool writer, %s, %d producer thread%s: %llu records in %.3f s (producers done at %.3f s)\n",
         compression.c_str(), threads, threads == 1 ? "" : "s", static_cast<unsigned long long>(moved), total,
         produced);
  printf("  %.1f M records/s, %.0f MB/s of records, %.1f B/record raw, %.1f B/record in the spool (%s)\n",
         static_cast<double>(moved) / total / 1e6, raw_mb / total,
         static_cast<double>(writer.raw_bytes()) / static_cast<double>(moved),
         static_cast<double>(writer.bytes()) / static_cast<double>(moved), writer.path().c_str());
  printf("  producer waits for the writer: %llu; records lost: %llu\n",
         static_cast<unsigned long long>(counters.waits.load()), static_cast<unsigned long long>(lost));
  unlink(writer.path().c_str());
  return lost == 0 ? 0 : 1;
}
