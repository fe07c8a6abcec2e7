// FlightWriter suite: the spool writer in flight mode, driven directly. DumpNow on the writer
// thread (where the control file and the hang watchdog call it) writes a numbered dump that
// names its own trace, hands it to the dump listener, keeps recording afterwards, and its spool
// exports to a trace with the records captured before it; no file exists before the dump. The
// background exports (FlightExports) build each dump's trace and keep a spool that fails.
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "katrace/event_kinds.h"
#include "katrace/spool_format.h"
#include "plugin/capture/host_clock.h"
#include "plugin/capture/record_appender.h"
#include "plugin/capture/spool_writer.h"
#include "plugin/export/exporter.h"
#include "plugin/flight_exports.h"
#include "test/support/capture_records.h"
#include "test/support/scoped_env.h"

namespace katrace {
namespace {

int Entries(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  int n = 0;
  while (dirent* e = d != nullptr ? readdir(d) : nullptr) n += e->d_name[0] != '.';
  if (d != nullptr) closedir(d);
  return n;
}

using FlightWriterTest = katrace_test::WriterTest;

TEST_F(FlightWriterTest, DumpNowWritesANumberedDumpAndHandsItOn) {
  std::atomic<int> dump_requests{0};
  std::mutex mu;
  std::vector<std::string> returned;
  std::vector<std::pair<std::string, std::string>> heard;
  SpoolWriter* self = nullptr;
  SpoolWriterOptions options;
  options.flight = true;
  options.flight_bytes = 1u << 20;
  options.flight_dump_on_crash = false;
  SpoolWriter writer(
      options, [](spool::CountersBody*) {},
      [&] {
        // The writer thread: where the control file and the watchdog ask for a dump.
        if (dump_requests.load() > 0) {
          dump_requests.fetch_sub(1);
          std::string path = self->DumpNow("test request");
          std::lock_guard<std::mutex> lock(mu);
          returned.push_back(path);
        }
      });
  self = &writer;
  writer.SetDumpListener([&](const std::string& spool, const std::string& trace) {
    std::lock_guard<std::mutex> lock(mu);
    heard.emplace_back(spool, trace);
  });
  spool::ProcessBody process{};
  process.os_pid = getpid();
  std::string note, error;
  const std::string trace = dir_ + "/run.json";
  ASSERT_TRUE(writer.Start(trace, process, "host", &note, &error)) << error;
  policy_.writer_running = writer.running_flag();
  ThreadBuffer* b = writer.Acquire(static_cast<uint32_t>(syscall(SYS_gettid)));
  ASSERT_NE(b, nullptr);
  // A comm and a name for the export, then collectives.
  ASSERT_TRUE(katrace_test::AppendCommRecord(b, policy_));
  for (uint64_t id = 1; id <= 100; ++id) Coll(b, id);
  usleep(250 * 1000);
  EXPECT_EQ(Entries(dir_), 0) << "nothing on disk before a dump";

  dump_requests.store(1);
  for (int i = 0; i < 200 && dump_requests.load() != 0; ++i) usleep(10 * 1000);
  for (uint64_t id = 101; id <= 150; ++id) Coll(b, id);
  usleep(250 * 1000);
  dump_requests.store(1);
  for (int i = 0; i < 200 && dump_requests.load() != 0; ++i) usleep(10 * 1000);
  usleep(20 * 1000);
  writer.Close();

  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(returned.size(), 2u);
  EXPECT_EQ(returned[0], dir_ + "/run.flight-1.json.kspool");
  EXPECT_EQ(returned[1], dir_ + "/run.flight-2.json.kspool");
  ASSERT_EQ(heard.size(), 2u) << "each dump is handed to the listener";
  EXPECT_EQ(heard[0].first, returned[0]);
  EXPECT_EQ(heard[0].second, dir_ + "/run.flight-1.json");
  EXPECT_TRUE(writer.exit_dump_spool().empty()) << "no dump at exit unless asked";

  uint64_t expected_events[] = {100, 150};
  for (size_t i = 0; i < 2; ++i) {
    ExportOptions eo;
    eo.summary = false;
    eo.progress = false;
    ExportReport r = ExportSpool(heard[i].first, eo);
    ASSERT_TRUE(r.ok) << r.message;
    EXPECT_EQ(r.trace_path, heard[i].second) << "the dump's Process record names its own trace";
    EXPECT_EQ(r.events, expected_events[i]) << r.message;
    EXPECT_TRUE(r.clean_end);
    EXPECT_NE(r.message.find("a flight recorder dump (test request)"), std::string::npos) << r.message;
  }
}

TEST_F(FlightWriterTest, CloseDumpsWhenAskedAndTheFileModeIsUntouched) {
  SpoolWriterOptions options;
  options.flight = true;
  options.flight_bytes = 1u << 20;
  options.flight_dump_at_exit = true;
  options.flight_dump_on_crash = false;
  SpoolWriter writer(options, [](spool::CountersBody*) {}, [] {});
  spool::ProcessBody process{};
  process.os_pid = getpid();
  std::string note, error;
  ASSERT_TRUE(writer.Start(dir_ + "/run.json", process, "host", &note, &error)) << error;
  EXPECT_TRUE(writer.crash_dump_spool().empty()) << "KATRACE_FLIGHT_ON_CRASH=0 arms nothing";
  writer.Close();
  EXPECT_EQ(writer.exit_dump_spool(), dir_ + "/run.flight-1.json.kspool");
  EXPECT_EQ(writer.exit_dump_trace(), dir_ + "/run.flight-1.json");
  EXPECT_EQ(Entries(dir_), 1);

  SpoolWriterOptions file_mode;
  SpoolWriter plain(file_mode, [](spool::CountersBody*) {}, [] {});
  ASSERT_TRUE(plain.Start(dir_ + "/plain.json", process, "host", &note, &error)) << error;
  EXPECT_EQ(Entries(dir_), 2) << "a spool file from the start";
  plain.Close();
}

// Regression: a trace that is a device (KATRACE_OUTPUT=/dev/null) put its dumps beside it, as new
// regular files in /dev ("/dev/null.flight-1"). They go to $TMPDIR under the trace's name; a
// .pftrace trace's dumps keep their extension last, as a .json trace's do.
TEST_F(FlightWriterTest, ADumpOfATraceWrittenInPlaceGoesToTheTempDir) {
  SpoolWriterOptions options;
  options.flight = true;
  options.flight_bytes = 1u << 20;
  options.flight_dump_at_exit = true;
  options.flight_dump_on_crash = false;
  spool::ProcessBody process{};
  process.os_pid = getpid();
  std::string note, error;
  SpoolWriter writer(options, [](spool::CountersBody*) {}, [] {});
  {
    katrace_test::ScopedEnv tmpdir("TMPDIR", dir_);
    ASSERT_TRUE(writer.Start("/dev/null", process, "host", &note, &error)) << error;
    writer.Close();
  }
  EXPECT_EQ(writer.exit_dump_trace(), dir_ + "/null.flight-1");
  EXPECT_EQ(writer.exit_dump_spool(), dir_ + "/null.flight-1.kspool");

  SpoolWriter pftrace(options, [](spool::CountersBody*) {}, [] {});
  ASSERT_TRUE(pftrace.Start(dir_ + "/run.pftrace.gz", process, "host", &note, &error)) << error;
  pftrace.Close();
  EXPECT_EQ(pftrace.exit_dump_trace(), dir_ + "/run.flight-1.pftrace.gz");
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

TEST_F(FlightWriterTest, DumpsAreExportedInTheBackgroundAndAFailedOneIsKept) {
  Config config;
  config.summary = false;
  FlightExports exports(config);
  std::atomic<int> dump_requests{2};
  SpoolWriter* self = nullptr;
  SpoolWriterOptions options;
  options.flight = true;
  options.flight_bytes = 1u << 20;
  options.flight_dump_on_crash = false;
  SpoolWriter writer(options, [](spool::CountersBody*) {}, [&] {
    if (dump_requests.load() > 0) {
      dump_requests.fetch_sub(1);
      self->DumpNow("test request");
    }
  });
  self = &writer;
  writer.SetDumpListener([&](const std::string& spool, const std::string& trace) { exports.Submit(spool, trace); });
  spool::ProcessBody process{};
  process.os_pid = getpid();
  std::string note, error;
  ASSERT_TRUE(writer.Start(dir_ + "/run.json", process, "host", &note, &error)) << error;
  for (int i = 0; i < 200 && dump_requests.load() != 0; ++i) usleep(10 * 1000);
  writer.Close();
  // A spool that is not one: its export fails, and it stays for katrace-export.
  const std::string bogus = dir_ + "/bogus.flight-9.json.kspool";
  FILE* f = fopen(bogus.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("not a spool", f);
  fclose(f);
  exports.Submit(bogus, dir_ + "/bogus.flight-9.json");
  for (int i = 0; i < 500 && !Exists(dir_ + "/run.flight-2.json"); ++i) usleep(10 * 1000);
  ASSERT_TRUE(Exists(dir_ + "/run.flight-2.json")) << "exported while the session runs";
  EXPECT_TRUE(Exists(dir_ + "/run.flight-2.json.kspool")) << "its spool stays readable until the session ends";
  exports.Drain();
  EXPECT_TRUE(Exists(dir_ + "/run.flight-1.json"));
  EXPECT_TRUE(Exists(dir_ + "/run.flight-2.json"));
  EXPECT_FALSE(Exists(dir_ + "/run.flight-1.json.kspool")) << "an exported dump's spool goes";
  EXPECT_FALSE(Exists(dir_ + "/run.flight-2.json.kspool"));
  EXPECT_TRUE(Exists(bogus)) << "a spool that failed to export is kept";
  EXPECT_FALSE(Exists(dir_ + "/bogus.flight-9.json"));
  exports.Submit(bogus, dir_ + "/late.json");  // after Drain: refused, nothing started
  exports.Drain();
  EXPECT_FALSE(Exists(dir_ + "/late.json"));
}

}  // namespace
}  // namespace katrace
