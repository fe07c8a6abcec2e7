#include "plugin/export/exporter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <exception>
#include <new>
#include <thread>
#include <utility>

#include "common/ends_with.h"
#include "common/human_bytes.h"
#include "common/paths.h"
#include "plugin/export/chrome_json_encoder.h"
#include "plugin/export/event_assembler.h"
#include "plugin/export/event_pipe.h"
#include "plugin/export/export_progress.h"
#include "plugin/export/export_summary.h"
#include "plugin/export/gpu_placement.h"
#include "plugin/export/nvtxt_encoder.h"
#include "plugin/export/output_sink.h"
#include "plugin/export/perfetto_encoder.h"
#include "plugin/export/rank_identity.h"
#include "plugin/export/spool_index.h"
#include "plugin/export/stream_merge.h"
#include "plugin/export/trace_layout.h"
#include "plugin/export/write_behind.h"

namespace katrace {
namespace {

using namespace exporting;

void FillTotals(const SpoolIndex& index, const RankIdentities& identities, const GpuClocks& clocks,
                uint64_t sink_io_errors, TraceTotals* t) {
  t->mask = index.process.mask;
  const spool::CountersBody& c = index.counters;
  for (int k = 0; k < kKindCount && k < spool::kCounterKinds; ++k) t->drops[k] = c.dropped[k];
  t->waits = c.waits;
  t->io_errors = c.io_errors + sink_io_errors;
  t->strings_unnamed = c.strings_unnamed;
  t->drain = c.drain;
  // Every GPU clock's fit; the top-level pair is the first observed clock's offset at the base
  // and the largest error bound of any observed clock (-1 when one is unbounded).
  const uint64_t base = index.process.base_monotonic_ns;
  bool any = false;
  for (const GpuClockDomain& d : clocks.domains) {
    FooterGpuClock g;
    g.cuda_device = d.cuda_device;
    g.pid = d.identity >= 0 && static_cast<size_t>(d.identity) < identities.ranks.size()
                ? identities.ranks[static_cast<size_t>(d.identity)].pid
                : -1;
    for (int c : d.comms) g.comms.push_back(index.comms[static_cast<size_t>(c)].comm_hash);
    const ClockFit& fit = d.fit;
    g.offset_ns = fit.OffsetAt(base);
    g.drift_ppm = fit.SegmentAt(base).drift * 1e6;
    g.error_ns = fit.observed ? fit.error_ns : -1;
    g.upper_bounds = d.upper_bounds;
    g.lower_bounds = d.lower_bounds;
    g.unlaunched = d.unlaunched;
    g.outliers = fit.outliers;
    g.quantum_ns = fit.quantum_ns;
    g.band_empty = fit.band_empty;
    for (const ClockSegment& s : fit.segments) {
      g.prior = g.prior || s.prior;
      FooterGpuSegment fs;
      fs.from_ns = static_cast<int64_t>(s.from_ns - base);
      fs.offset_ns = s.offset_ns;
      fs.drift_ppm = s.drift * 1e6;
      fs.error_ns = s.error_ns;
      g.segments.push_back(fs);
    }
    if (fit.observed) {
      if (!any) {
        t->gpu_offset_ns = g.offset_ns;
        t->gpu_offset_error_ns = g.error_ns;
      } else if (t->gpu_offset_error_ns >= 0) {
        t->gpu_offset_error_ns = g.error_ns < 0 ? -1 : std::max(t->gpu_offset_error_ns, g.error_ns);
      }
      any = true;
    }
    t->gpu_clocks.push_back(std::move(g));
  }
  if (!any) t->gpu_offset_ns = RealtimePrior(index);
  for (size_t c = 0; c < index.comms.size(); ++c) {
    const CommInstance& ci = index.comms[c];
    FooterComm f;
    f.comm_hash = ci.comm_hash;
    f.name = ci.name;
    f.rank = ci.rank;
    f.nranks = ci.nranks;
    f.abi_version = ci.abi_version;
    f.pid = identities.Of(static_cast<int>(c)).pid;
    const int32_t domain = c < clocks.of_comm.size() ? clocks.of_comm[c] : -1;
    if (domain >= 0) {
      f.gpu_clock = domain;
      f.gpu_offset_ns = t->gpu_clocks[static_cast<size_t>(domain)].offset_ns;
    }
    t->comms.push_back(std::move(f));
  }
  t->spool_blocks = index.blocks.size();
  t->spool_bytes = index.bytes;
  t->clean_end = index.clean_end;
  t->cut_offset = index.cut ? index.cut_offset : 0;
}

// The consumer half of the export on its own thread; closing the pipe and joining happen on
// every way out of Run, an exception included, so no std::thread is left joinable.
class ConsumerThread {
 public:
  explicit ConsumerThread(EventPipe* pipe) : pipe_(pipe) {}
  ~ConsumerThread() { Finish(); }
  template <typename Fn>
  void Start(Fn&& fn) {
    thread_ = std::thread(std::forward<Fn>(fn));
  }
  void Finish() {
    if (!thread_.joinable()) return;
    pipe_->Close();
    thread_.join();
  }

 private:
  EventPipe* pipe_;
  std::thread thread_;
};

double Seconds(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
double Now() { return Seconds(CLOCK_MONOTONIC); }

ExportReport Run(const std::string& spool_path, const ExportOptions& options) {
  ExportReport report;
  // KATRACE_EXPORT_TIMING=1: one line with the seconds of each phase (for tuning the export).
  const char* timing_env = getenv("KATRACE_EXPORT_TIMING");
  const bool timing = timing_env != nullptr && timing_env[0] == '1';
  double t_begin = Now();
  unsigned hw = std::thread::hardware_concurrency();
  int threads = options.threads > 0 ? options.threads : static_cast<int>(std::min(hw == 0 ? 1u : hw, 4u));
  SpoolReader file;
  std::string error;
  if (!file.Open(spool_path, &error)) {
    report.message = error;
    return report;
  }
  ExportProgress progress(options.progress, Basename(spool_path));
  SpoolIndex index;
  if (!ScanSpool(file, threads, &progress, &index, &error)) {
    report.message = spool_path + ": " + error;
    return report;
  }
  report.blocks = index.blocks.size();
  report.bytes_recovered = index.bytes;
  report.clean_end = index.clean_end;
  report.cut = index.cut;
  report.cut_offset = index.cut_offset;
  report.cut_reason = index.cut_reason;
  report.damaged_blocks = index.damaged_blocks;
  if (index.flight) report.refused_blocks = index.flight_body.refused_blocks;
  report.waits = index.counters.waits;
  for (int k = 0; k < spool::kCounterKinds; ++k) report.dropped += index.counters.dropped[k];

  std::string output = options.output.empty() ? index.trace_path : options.output;
  if (output.empty()) {
    report.message = spool_path + ": no trace path (the spool has no Process record naming one); give an output path";
    return report;
  }
  double t_scanned = Now();
  const RankIdentities identities = AssignRankIdentities(index);
  GpuClocks clocks;
  PlaceGpuClocks(file, threads, index, identities, &clocks);
  double t_placed = Now();
  const double main_cpu_placed = Seconds(CLOCK_THREAD_CPUTIME_ID);

  TraceProcess process;
  process.rank = identities.ranks.front().pid;
  process.os_pid = index.has_process ? index.process.os_pid : static_cast<int>(file.header().os_pid);
  process.host = index.host;
  process.base_realtime_ns = index.process.base_realtime_ns;
  process.base_monotonic_ns = index.process.base_monotonic_ns;
  process.end_monotonic_ns = index.has_ticks ? index.clock.Ns(index.last_tick) : process.base_monotonic_ns;
  for (const RankIdentity& r : identities.ranks) {
    process.ranks.push_back(TraceRank{r.pid, r.world_rank, r.launcher_rank, r.cuda_device, r.label});
  }
  process.comm_rank = identities.of_comm;

  OutputSink sink;
  if (!sink.Open(output, options.gzip || EndsWith(output, ".gz"), options.fallback_to_temp_dir)) {
    report.message = spool_path + ": cannot write the trace to '" + output + "'" +
                     (options.fallback_to_temp_dir ? "" : " (" + sink.failed_reason() + ")");
    return report;
  }
  report.trace_path = sink.path();

  const bool pipelined = threads >= 2;
  // With threads to spare the file writes run behind the encoder (write_behind.h).
  WriteBehind writer(&sink, pipelined);
  std::unique_ptr<TraceEncoder> encoder;
  switch (options.format ? *options.format : TraceFormatOfPath(output)) {
    case TraceFormat::kPerfetto: {
      auto perfetto = std::make_unique<PerfettoEncoder>(&writer);
      if (options.perfetto_reset_bytes != 0) perfetto->set_reset_bytes(options.perfetto_reset_bytes);
      encoder = std::move(perfetto);
      break;
    }
    case TraceFormat::kNvtxt: encoder = std::make_unique<NvtxtEncoder>(&writer); break;
    case TraceFormat::kJson: encoder = std::make_unique<ChromeJsonEncoder>(&writer); break;
  }
  // The summary sees every slice on its way to the encoder, exactly as the trace gets it. Its
  // tables are left out when they are neither printed nor written (a tenth of the export's work).
  ExportSummary summary(encoder.get(), options.summary || !options.summary_path.empty());
  TraceLayout layout(process, &summary);
  const GpuPlacement placement(&clocks, process.base_monotonic_ns, process.end_monotonic_ns);
  // Two halves: this thread merges, assembles and places GPU times; the layout, the summary and
  // the encoder run on a second thread fed in batches (inline when only one thread is allowed),
  // so both cores work. The second half is the longer: what needs no layout is done here.
  EventPipe pipe;
  auto consume = [&](const EventBatch& b) {
    size_t s = 0;
    for (size_t i = 0; i <= b.events.size(); ++i) {
      for (; s < b.samples.size() && b.samples[s].before == i; ++s) {
        const spool::CountersBody& c = b.samples[s].counters;
        layout.Counters(b.samples[s].host_ns, c.dropped, c.drain, false);
      }
      if (i == b.events.size()) break;
      layout.Add(b.events[i], b.spans[i]);
    }
    layout.Advance(b.watermark_ns);
  };
  std::exception_ptr consumer_error;
  double consumer_cpu = 0;  // the consumer thread's CPU seconds, for KATRACE_EXPORT_TIMING
  ConsumerThread consumer(&pipe);
  if (pipelined) {
    consumer.Start([&] {
      try {
        while (std::unique_ptr<EventBatch> b = pipe.Receive()) {
          consume(*b);
          pipe.Recycle(std::move(b));
        }
      } catch (...) {
        consumer_error = std::current_exception();
        pipe.Abort();
      }
      consumer_cpu = Seconds(CLOCK_THREAD_CPUTIME_ID);
    });
  }
  std::unique_ptr<EventBatch> batch = pipe.Empty();
  EventAssembler* assembler_ptr = nullptr;
  auto hand_over = [&] {
    batch->watermark_ns = assembler_ptr->Watermark();
    if (pipelined) {
      pipe.Send(std::move(batch));
      batch = pipe.Empty();
    } else {
      consume(*batch);
      batch->clear();
    }
  };
  size_t max_live = std::max<size_t>(options.memory_budget / 256, 1024);
  EventAssembler assembler(index, max_live, [&](const AssembledEvent& e) {
    batch->events.push_back(e);
    batch->spans.push_back(placement.Place(e));
    if (batch->events.size() >= EventPipe::kBatchEvents) hand_over();
  });
  assembler_ptr = &assembler;
  uint64_t last_ns = index.has_ticks ? index.clock.Ns(index.last_tick) : process.base_monotonic_ns;
  uint64_t failed_blocks = 0;
  {
    // This thread assembles and (with the consumer) formats; the rest decode blocks ahead.
    int workers = std::max(1, threads - (pipelined ? 2 : 1));
    progress.Phase("writing", index.blocks.size(), index.bytes);
    StreamMerge merge(file, index, workers, &progress);
    MergedRecord r;
    uint64_t n = 0;
    while (merge.Next(&r)) {
      switch (r.header.type) {
        case spool::RecordType::kStart:
        case spool::RecordType::kState:
        case spool::RecordType::kStop:
          assembler.Add(r);
          break;
        case spool::RecordType::kCounters: {
          spool::CountersBody c = ReadBody<spool::CountersBody>(r.body, r.body_size);
          if (r.body_size >= sizeof(c)) batch->samples.push_back(CounterSample{batch->events.size(), index.clock.Ns(r.key), c});
          break;
        }
        default:
          break;
      }
      if ((++n & 0xffff) == 0) progress.Poll();
    }
    failed_blocks = merge.failed_blocks();
  }
  assembler.Finish(last_ns);
  const double main_cpu = Seconds(CLOCK_THREAD_CPUTIME_ID) - main_cpu_placed;
  if (pipelined) {
    pipe.Send(std::move(batch));
    consumer.Finish();
    if (consumer_error) std::rethrow_exception(consumer_error);
  } else {
    consume(*batch);
  }
  // Everything so far is in the sink (its error count below is final); the footer is written
  // inline.
  writer.Finish();

  TraceTotals totals;
  FillTotals(index, identities, clocks, sink.io_errors(), &totals);
  if (index.flight) {
    totals.flight = true;
    totals.flight_reason = index.flight_reason;
    totals.flight_signal = index.flight_body.signal;
    totals.flight_evicted_blocks = index.flight_body.evicted_blocks;
    totals.flight_evicted_bytes = index.flight_body.evicted_raw_bytes;
    totals.flight_refused_blocks = index.flight_body.refused_blocks;
    totals.flight_sticky_dropped = index.flight_body.sticky_dropped;
    totals.flight_cut_records =
        assembler.counts().cut_starts + assembler.counts().orphans + assembler.counts().unknown_parents;
  }
  layout.Counters(last_ns, totals.drops, totals.drain, true);
  for (const spool::MarkerBody& m : index.markers) layout.Marker(index.clock.Ns(m.ticks), m);
  layout.Finish(last_ns, &totals);
  bool committed = sink.Commit();
  if (timing) {
    fprintf(stderr,
            "katrace-export timing: scan %.3f s, gpu placement %.3f s, merge+layout+write %.3f s; layout: %llu "
            "slices placed behind a later start, %llu host calls unnested\n",
            t_scanned - t_begin, t_placed - t_scanned, Now() - t_placed,
            static_cast<unsigned long long>(layout.out_of_order()), static_cast<unsigned long long>(layout.unnested()));
    if (pipelined) {
      // Each half's own CPU: the longer bounds the export however many cores there are.
      fprintf(stderr, "katrace-export timing: CPU of merge+assembly %.3f s, layout+summary+encoder %.3f s\n", main_cpu,
              consumer_cpu);
    }
  }
  const AssemblerCounts& ac = assembler.counts();
  report.ok = committed;
  report.events = ac.events;
  report.incomplete = ac.incomplete;

  std::string spool_line = "katrace: spool " + std::to_string(index.blocks.size()) + " blocks, " +
                           HumanBytes(index.bytes) +
                           (index.cut ? ", cut at offset " + std::to_string(index.cut_offset) + " (" + index.cut_reason + ")"
                                      : ", ended cleanly");
  std::string trace_line = "katrace: trace " + (committed ? sink.path() : "not written to " + sink.path() + " (I/O error)");
  report.summary_text = summary.Text(totals, spool_line, trace_line);
  if (options.summary) fputs(report.summary_text.c_str(), stderr);
  std::string summary_path = options.summary_path;
  // Beside a trace of its own only: not beside a device or a pipe (no "/dev/null.summary.txt").
  if (summary_path.empty() && options.summary && committed && !sink.in_place()) {
    summary_path = sink.path() + ".summary.txt";
  }
  if (!summary_path.empty() && !WriteTextFileAtomically(summary_path, report.summary_text, &report.summary_error)) {
    report.summary_error = "the summary file was not written: " + report.summary_error;
  }

  std::string m = committed ? "exported " : "FAILED to export ";
  m += std::to_string(ac.events) + " events from " + spool_path + " to " +
       sink.path() + " (" + std::to_string(index.blocks.size()) + " blocks, " +
       HumanBytes(index.bytes) + ")";
  if (!committed) m += ": write error";
  if (ac.incomplete != 0) m += ", " + std::to_string(ac.incomplete) + " incomplete";
  if (index.cut) {
    m += "; spool cut at offset " + std::to_string(index.cut_offset) + " of " + std::to_string(index.file_bytes) + " (" +
         index.cut_reason + ")";
  } else {
    m += "; spool ended cleanly";
  }
  if (index.damaged_blocks != 0) {
    m += "; skipped " + std::to_string(index.damaged_blocks) + " damaged block" +
         (index.damaged_blocks == 1 ? "" : "s") + " (the first at offset " + std::to_string(index.first_damage_offset) +
         ": " + index.first_damage_reason + "): their records are lost";
  }
  if (index.counters.io_errors != 0) {
    m += "; " + std::to_string(index.counters.io_errors) +
         " spool blocks could not be written (a full disk?): their events are counted as lost";
  }
  // Each counted once: records that break their block's chain (and what followed them there) and
  // bad meta records by the scan, records too short for their kind by the assembly.
  uint64_t skipped = index.malformed_records + ac.short_records;
  if (skipped != 0) {
    m += "; skipped " + std::to_string(skipped) + " malformed record" + (skipped == 1 ? "" : "s");
    if (index.unread_record_bytes != 0) {
      m += " (and the " + HumanBytes(index.unread_record_bytes) + " after them in their blocks, which cannot be framed)";
    }
  }
  if (index.unknown_records + ac.unknown_kinds != 0) {
    m += "; skipped " + std::to_string(index.unknown_records + ac.unknown_kinds) + " records of unknown type or kind";
  }
  if (ac.duplicates != 0) m += "; ignored " + std::to_string(ac.duplicates) + " duplicate starts";
  if (index.flight) {
    m += "; a flight recorder dump (" + index.flight_reason + "): " + std::to_string(index.flight_body.evicted_blocks) +
         " older blocks were evicted";
    // Blocks the ring never held (each larger than the whole ring, or after a crash froze it):
    // with none held, the dump would otherwise read as a run that recorded nothing.
    if (index.flight_body.refused_blocks != 0) {
      m += ", " + std::to_string(index.flight_body.refused_blocks) +
           " blocks were refused (larger than the ring, or after a crash froze it)";
    }
    if (ac.cut_starts + ac.orphans + ac.unknown_parents != 0) {
      m += "; left out " + std::to_string(ac.cut_starts) + " events that started before the cut, " +
           std::to_string(ac.orphans) + " states/stops of events cut or evicted, and drew " +
           std::to_string(ac.unknown_parents) + " children without their parent";
    }
    if (index.flight_body.sticky_dropped != 0) {
      m += ", " + std::to_string(index.flight_body.sticky_dropped) + " names/communicators did not fit its sticky area";
    }
  } else if (ac.orphans != 0) {
    m += "; ignored " + std::to_string(ac.orphans) + " states/stops of unrecorded events";
  }
  if (ac.over_budget != 0) {
    m += "; " + std::to_string(ac.over_budget) + " events not assembled (live events exceeded the memory budget)";
  }
  if (failed_blocks != 0) m += "; " + std::to_string(failed_blocks) + " blocks changed during the export";
  if (layout.outside_run() != 0) {
    m += "; " + std::to_string(layout.outside_run()) +
         " GPU slices fell outside the run at both ends (a GPU clock the fit could not follow): KernelCh and "
         "KernelStep drawn at their host times (host_timed, clamped), CollGpu left out";
  }
  if (!index.has_process) m += "; the spool has no Process record";
  m += GpuClockWarnings(clocks, index, identities);
  if (!report.summary_error.empty()) m += "; " + report.summary_error;
  report.message = m;
  return report;
}

}  // namespace

ExportReport ExportSpool(const std::string& spool_path, const ExportOptions& options) {
  // Nothing escapes: the plugin calls this at process exit, where an exception would terminate.
  try {
    return Run(spool_path, options);
  } catch (const std::bad_alloc&) {
    ExportReport r;
    r.message = spool_path + ": export failed: out of memory";
    return r;
  } catch (const std::exception& e) {
    ExportReport r;
    r.message = spool_path + ": export failed: " + e.what();
    return r;
  } catch (...) {
    ExportReport r;
    r.message = spool_path + ": export failed";
    return r;
  }
}

}  // namespace katrace
