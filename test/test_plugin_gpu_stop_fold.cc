// A GPU event's GPU stop state, through the real .so: NCCL's proxy reports a KernelCh's
// KernelChStop (and the step drain a KernelStep's KernelStepStop) just before its stop, so the
// capture writes the two as one Stop record that carries the GPU stop stamp
// (spool::kStopCarriesGpuStop). An event that never stops still has its stamp written, on its
// own, when its communicator is finalized or the process exits. Read from the spool itself
// (uncompressed, so the test walks it with nothing but the format header) and from the trace the
// export builds.
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "katrace/event_kinds.h"
#include "katrace/spool_format.h"
#include "test/support/plugin_test.h"
#include "test/support/subprocess.h"

namespace katrace_test {
namespace {

namespace spool = katrace::spool;
using katrace::Kind;

struct SpoolRecord {
  spool::RecordHeader header;
  std::vector<uint8_t> body;
};

// The records of an uncompressed spool (KATRACE_SPOOL_COMPRESS=none), in file order.
std::vector<SpoolRecord> ReadRecords(const std::string& path) {
  std::vector<SpoolRecord> out;
  FILE* f = fopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  if (f == nullptr) return out;
  std::vector<uint8_t> bytes;
  uint8_t chunk[65536];
  for (size_t n; (n = fread(chunk, 1, sizeof(chunk), f)) > 0;) bytes.insert(bytes.end(), chunk, chunk + n);
  fclose(f);
  spool::FileHeader fh;
  EXPECT_GE(bytes.size(), sizeof(fh));
  if (bytes.size() < sizeof(fh)) return out;
  memcpy(&fh, bytes.data(), sizeof(fh));
  EXPECT_EQ(fh.version, spool::kFormatVersion);
  for (size_t at = fh.header_bytes; at + sizeof(spool::BlockHeader) <= bytes.size();) {
    spool::BlockHeader bh;
    memcpy(&bh, bytes.data() + at, sizeof(bh));
    EXPECT_EQ(bh.magic, spool::kBlockMagic);
    EXPECT_EQ(bh.flags, 0u) << "an uncompressed spool's blocks are stored as they are";
    at += sizeof(bh);
    if (bh.magic != spool::kBlockMagic || bh.flags != 0 || bh.stored_bytes > bytes.size() - at) return out;
    for (size_t r = at; r + sizeof(spool::RecordHeader) <= at + bh.stored_bytes;) {
      SpoolRecord rec;
      memcpy(&rec.header, bytes.data() + r, sizeof(rec.header));
      if (rec.header.size < sizeof(rec.header) || rec.header.size > at + bh.stored_bytes - r) {
        ADD_FAILURE() << "malformed record at " << r;
        return out;
      }
      rec.body.assign(bytes.data() + r + sizeof(rec.header), bytes.data() + r + rec.header.size);
      out.push_back(rec);
      r += rec.header.size;
    }
    at += bh.stored_bytes;
  }
  return out;
}

std::vector<SpoolRecord> RecordsOf(const std::vector<SpoolRecord>& all, spool::RecordType type, Kind kind) {
  std::vector<SpoolRecord> out;
  for (const SpoolRecord& r : all) {
    if (r.header.type == type && r.header.kind == static_cast<uint8_t>(kind)) out.push_back(r);
  }
  return out;
}
std::vector<SpoolRecord> KernelChRecords(const std::vector<SpoolRecord>& all, spool::RecordType type) {
  return RecordsOf(all, type, Kind::kKernelCh);
}

template <typename Body>
Body BodyOf(const SpoolRecord& r) {
  Body body{};
  EXPECT_GE(r.body.size(), sizeof(body));
  memcpy(&body, r.body.data(), std::min(sizeof(body), r.body.size()));
  return body;
}

// The one KernelCh State that finalize or exit wrote for a KernelCh whose stop never came.
void ExpectHeldGpuStopWritten(const std::vector<SpoolRecord>& records, uint64_t gpu_stop) {
  EXPECT_EQ(KernelChRecords(records, spool::RecordType::kStop).size(), 0u);
  const auto states = KernelChRecords(records, spool::RecordType::kState);
  ASSERT_EQ(states.size(), 1u) << "the state the missing stop would have carried is written";
  const auto state = BodyOf<spool::StateBody>(states[0]);
  EXPECT_EQ(state.state, ncclProfilerKernelChStop);
  EXPECT_EQ(state.value, gpu_stop);
}

class GpuStopFoldTest : public PluginTest {
 protected:
  void SetUp() override {
    PluginTest::SetUp();
    setenv("KATRACE_SPOOL_COMPRESS", "none", 1);
  }
  std::string Spool() const { return trace_path_ + ".kspool"; }

  // A Coll with one channel whose KernelCh runs from |gpu_start| and gets its KernelChStop state
  // with |gpu_stop|; stopped as NCCL's proxy does, or never. Returns the KernelCh's handle.
  void* CollWithKernelCh(void* ctx, uint64_t gpu_start, uint64_t gpu_stop, bool stop) {
    void* coll = nullptr;
    auto d = CollDescr(nullptr, "AllReduce", 1, 1024, 1);
    v6().startEvent(ctx, &coll, &d);
    v6().stopEvent(coll);
    void* k = nullptr;
    auto kd = KernelChDescr(coll, 0, gpu_start);
    v6().startEvent(ctx, &k, &kd);
    ncclProfilerEventStateArgs_v6_t a{};
    a.kernelCh.pTimer = gpu_stop;
    v6().recordEventState(k, ncclProfilerKernelChStop, &a);
    if (stop) v6().stopEvent(k);
    return k;
  }
};

TEST_F(GpuStopFoldTest, TheStopCarriesItsKernelChStopStateInOneRecord) {
  setenv("KATRACE_EXPORT", "off", 1);
  Comm c = InitComm(0x51, 0, 1);
  const uint64_t t0 = GpuNow();
  CollWithKernelCh(c.ctx, t0, t0 + 2048, true);
  // A kind without a GPU stop state keeps every state as a record, whatever its number: a
  // KernelChStop or katrace's own -1 sent to a Coll fold nothing into its stop.
  void* coll = nullptr;
  auto cd = CollDescr(nullptr, "AllGather", 2, 1024, 0);
  v6().startEvent(c.ctx, &coll, &cd);
  ncclProfilerEventStateArgs_v6_t a{};
  a.kernelCh.pTimer = t0 + 4096;
  v6().recordEventState(coll, ncclProfilerKernelChStop, &a);
  v6().recordEventState(coll, static_cast<ncclProfilerEventState_v6_t>(-1), &a);
  v6().stopEvent(coll);
  v6().finalize(c.ctx);

  const std::vector<SpoolRecord> records = ReadRecords(Spool());
  const auto starts = KernelChRecords(records, spool::RecordType::kStart);
  const auto states = KernelChRecords(records, spool::RecordType::kState);
  const auto stops = KernelChRecords(records, spool::RecordType::kStop);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(states.size(), 0u) << "the state travels with the stop";
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].header.flags, spool::kStopCarriesGpuStop);
  EXPECT_EQ(stops[0].header.size, spool::RecordSize(sizeof(spool::StopWithGpuStopBody)));
  const auto start = BodyOf<spool::StartBody>(starts[0]);
  const auto stop = BodyOf<spool::StopWithGpuStopBody>(stops[0]);
  EXPECT_EQ(stop.id, start.id);
  EXPECT_GE(stop.ticks, start.ticks);
  EXPECT_EQ(stop.gpu_stop, t0 + 2048);
  // A Coll's stop has no state to carry.
  const auto coll_stops = RecordsOf(records, spool::RecordType::kStop, Kind::kColl);
  ASSERT_EQ(coll_stops.size(), 2u);
  for (const SpoolRecord& r : coll_stops) {
    EXPECT_EQ(r.header.flags, 0);
    EXPECT_EQ(r.header.size, spool::RecordSize(sizeof(spool::StopBody)));
  }
  const auto coll_states = RecordsOf(records, spool::RecordType::kState, Kind::kColl);
  ASSERT_EQ(coll_states.size(), 1u) << "the KernelChStop a Coll was sent, as it came; -1 is never taken from NCCL";
  EXPECT_EQ(BodyOf<spool::StateBody>(coll_states[0]).state, ncclProfilerKernelChStop);

  // The export reads the stamp from the stop: the slice lasts exactly the GPU's 2,048 ns.
  ProcessOutput r = RunProcess(ToolPath("katrace-export"), {Spool(), "--quiet"}, {}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto trace = ExpectValidTrace(trace_path_);
  auto kernel_ch = Slices(trace, "KernelCh");
  ASSERT_EQ(kernel_ch.size(), 1u);
  EXPECT_NEAR(kernel_ch[0]["dur"].get<double>(), 2.048, 1e-9) << kernel_ch[0].dump();
  EXPECT_EQ(Footer(trace)["incomplete"], 0);
}

TEST_F(GpuStopFoldTest, AKernelChThatNeverStopsKeepsItsGpuStopStampAtFinalize) {
  setenv("KATRACE_KEEP_SPOOL", "1", 1);
  setenv("KATRACE_SUMMARY", "0", 1);
  Comm c = InitComm(0x52, 0, 1);
  const uint64_t t0 = GpuNow();
  CollWithKernelCh(c.ctx, t0, t0 + 4096, false);
  v6().finalize(c.ctx);

  ExpectHeldGpuStopWritten(ReadRecords(Spool()), t0 + 4096);

  auto trace = ExpectValidTrace(trace_path_);
  auto kernel_ch = Slices(trace, "KernelCh");
  ASSERT_EQ(kernel_ch.size(), 1u);
  EXPECT_TRUE(kernel_ch[0]["args"].value("incomplete", false)) << kernel_ch[0].dump();
  EXPECT_NEAR(kernel_ch[0]["dur"].get<double>(), 4.096, 1e-9) << "its GPU stop is known: " << kernel_ch[0].dump();
}

// The same at exit, with the communicator never finalized (test/fixtures/capture_driver).
TEST_F(GpuStopFoldTest, AKernelChUnstoppedAtExitKeepsItsGpuStopStamp) {
  ProcessOutput r = RunProcess(BuildPath("test/capture_driver"), {PluginPath(), "exit-unstopped"},
                               {"KATRACE_OUTPUT=" + trace_path_, "KATRACE_SPOOL_COMPRESS=none", "KATRACE_KEEP_SPOOL=1",
                                "KATRACE_SUMMARY=0", "KATRACE_MASK=coll,kernelch"},
                               dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  unsigned long long gpu_stop = 0;
  ASSERT_EQ(sscanf(r.out.c_str(), "gpu_stop %llu", &gpu_stop), 1) << r.out;
  ExpectHeldGpuStopWritten(ReadRecords(Spool()), gpu_stop);
  auto kernel_ch = Slices(ExpectValidTrace(trace_path_), "KernelCh");
  ASSERT_EQ(kernel_ch.size(), 1u);
  EXPECT_NEAR(kernel_ch[0]["dur"].get<double>(), 8.192, 1e-9) << kernel_ch[0].dump();
}

// A KernelStep's stop carries its KernelStepStop state the same way; a stamp of 0 (the drain gave
// up waiting for the slice's stop) still reads as abandoned, and a step that got its state but
// never its stop has the state written at finalize.
TEST_F(GpuStopFoldTest, AKernelStepStopCarriesItsStateAbandonedOrNotAndAnUnstoppedOneKeepsIt) {
  setenv("KATRACE_KEEP_SPOOL", "1", 1);
  setenv("KATRACE_SUMMARY", "0", 1);
  Comm c = InitComm(0x53, 0, 2);
  ASSERT_NE(c.mask & ncclProfileKernelStep, 0);
  // Its steps run inside its channel's kernel work, as in the simulator.
  void* coll = nullptr;
  auto cd = CollDescr(nullptr, "AllReduce", 1, 1024, 1);
  v6().startEvent(c.ctx, &coll, &cd);
  v6().stopEvent(coll);
  const uint64_t t0 = GpuNow();
  void* kernel_ch = nullptr;
  auto kd = KernelChDescr(coll, 0, t0);
  v6().startEvent(c.ctx, &kernel_ch, &kd);
  const uint64_t stamps[3] = {t0 + 1200, 0, t0 + 1500};  // stopped, abandoned, never stopped
  for (int step = 0; step < 3; ++step) {
    void* h = nullptr;
    auto d = KernelStepDescr(coll, 0, true, 1, static_cast<uint32_t>(step), t0 + 100, t0 + 200);
    v6().startEvent(c.ctx, &h, &d);
    ASSERT_NE(h, nullptr);
    ncclProfilerEventStateArgs_v6_t a{};
    a.kernelStep.pTimer = stamps[step];
    v6().recordEventState(h, static_cast<ncclProfilerEventState_v6_t>(ncclProfilerKernelStepStop), &a);
    if (step < 2) v6().stopEvent(h);
  }
  ncclProfilerEventStateArgs_v6_t ka{};
  ka.kernelCh.pTimer = t0 + 2048;
  v6().recordEventState(kernel_ch, ncclProfilerKernelChStop, &ka);
  v6().stopEvent(kernel_ch);
  v6().finalize(c.ctx);

  const std::vector<SpoolRecord> records = ReadRecords(Spool());
  const auto stops = RecordsOf(records, spool::RecordType::kStop, Kind::kKernelStep);
  ASSERT_EQ(stops.size(), 2u);
  for (size_t i = 0; i < stops.size(); ++i) {
    EXPECT_EQ(stops[i].header.flags, spool::kStopCarriesGpuStop);
    EXPECT_EQ(BodyOf<spool::StopWithGpuStopBody>(stops[i]).gpu_stop, stamps[i]);
  }
  const auto states = RecordsOf(records, spool::RecordType::kState, Kind::kKernelStep);
  ASSERT_EQ(states.size(), 1u) << "only the unstopped step's state has a record of its own";
  EXPECT_EQ(BodyOf<spool::StateBody>(states[0]).state, ncclProfilerKernelStepStop);
  EXPECT_EQ(BodyOf<spool::StateBody>(states[0]).value, stamps[2]);

  auto steps = Slices(ExpectValidTrace(trace_path_), "KernelStep");
  ASSERT_EQ(steps.size(), 3u);
  for (const auto& e : steps) {
    const uint32_t step = e["args"]["step"];
    ASSERT_LT(step, 3u);
    EXPECT_EQ(e["args"].value("abandoned", false), step == 1) << e.dump();
    if (step == 1) {
      EXPECT_FALSE(e["args"].contains("gpu_stop_ns")) << e.dump();
    } else {
      EXPECT_EQ(e["args"]["gpu_stop_ns"], stamps[step]) << e.dump();
    }
    EXPECT_EQ(e["args"].value("incomplete", false), step == 2) << e.dump();
  }
}

}  // namespace
}  // namespace katrace_test
