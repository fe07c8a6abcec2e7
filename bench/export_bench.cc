// Export throughput and memory: generates a realistic spool (Coll + one KernelCh per channel +
// a send and a recv ProxyOp per channel, over 4 streams, LZ4 blocks) with the test suite's spool
// builder, then times ExportSpool to a JSON file on disk. Reports events/s, the trace size and
// the process's peak RSS (which must not grow with the number of events). FORMAT (json,
// perfetto or nvtxt; default json) chooses the trace's format; run once per format to compare
// their time, size and memory on the same spool.
//
//   export_bench EVENTS DIR [threads] [lz4|plain] [FORMAT]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <exception>
#include <string>

#include "plugin/export/exporter.h"
#include "test/support/spool_builder.h"

static double Seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s EVENTS DIR [threads] [lz4|plain] [json|perfetto|nvtxt]\n", argv[0]);
    return 2;
  }
  const long long events = atoll(argv[1]);
  const std::string dir = argv[2];
  const int threads = argc > 3 ? atoi(argv[3]) : 0;
  const bool lz4 = !(argc > 4 && strcmp(argv[4], "plain") == 0);
  katrace::TraceFormat format = katrace::TraceFormat::kJson;
  if (events <= 0) {
    fprintf(stderr, "%s: EVENTS must be a positive number (got '%s')\n", argv[0], argv[1]);
    return 2;
  }
  if (argc > 5 && !katrace::ParseTraceFormat(argv[5], &format)) {
    fprintf(stderr, "%s: FORMAT must be json, perfetto or nvtxt (got '%s')\n", argv[0], argv[5]);
    return 2;
  }
  std::string spool = dir + "/export-bench.kspool",
              trace = dir + "/export-bench" + katrace::TraceFormatExtension(format);
  double t0 = Seconds();
  uint64_t n = 0;
  try {
    n = katrace_test::GenerateRealisticSpool(spool, static_cast<uint64_t>(events), 4, 8, lz4, trace);
  } catch (const std::exception& e) {  // the spool builder throws when it cannot write
    fprintf(stderr, "%s: %s (does DIR exist and can it be written?)\n", argv[0], e.what());
    return 1;
  }
  double t1 = Seconds();
  struct stat st;
  stat(spool.c_str(), &st);
  printf("spool: %llu events, %.1f MB (%s) generated in %.2f s\n", static_cast<unsigned long long>(n),
         static_cast<double>(st.st_size) / 1e6, lz4 ? "LZ4" : "plain", t1 - t0);
  katrace::ExportOptions o;
  o.summary = false;
  o.progress = false;
  o.threads = threads;
  rusage before;
  getrusage(RUSAGE_SELF, &before);
  double t2 = Seconds();
  katrace::ExportReport r = katrace::ExportSpool(spool, o);
  double t3 = Seconds();
  if (!r.ok) {
    fprintf(stderr, "export failed: %s\n", r.message.c_str());
    return 1;
  }
  stat(trace.c_str(), &st);
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  // CPU of the export alone (all its threads, user + system), next to the wall time: on a
  // shared machine the wall time says more about the neighbours than about the export.
  auto cpu = [](const rusage& u) {
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
  };
  double cpu_s = cpu(ru) - cpu(before);
  printf("export (%s): %llu events in %.2f s = %.2f M events/s (CPU %.2f s = %.2f M events/s), trace %.1f MB, peak RSS %ld MB\n",
         katrace::TraceFormatName(format), static_cast<unsigned long long>(r.events), t3 - t2, static_cast<double>(r.events) / (t3 - t2) / 1e6, cpu_s,
         static_cast<double>(r.events) / cpu_s / 1e6, static_cast<double>(st.st_size) / 1e6, ru.ru_maxrss / 1024);
  remove(spool.c_str());
  remove(trace.c_str());
  return 0;
}
