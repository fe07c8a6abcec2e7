// The export stage on spools built record by record: every kind's fields, parents, late and
// incomplete events, cross-stream order, GPU extents and flows, LZ4 and plain blocks, cut and
// corrupted spools, hostile input, and the summary. Traces are parsed with nlohmann::json and
// checked with katrace-check (test/support/trace_validation.h).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <string>
#include <thread>

#include "plugin/export/exporter.h"
#include "test/support/plugin_harness.h"
#include "test/support/plugin_test.h"
#include "test/support/spool_builder.h"
#include "test/support/trace_validation.h"

namespace katrace_test {
namespace {

using katrace::Kind;
using nlohmann::json;
namespace spool = katrace::spool;

constexpr uint64_t kBaseMono = 5000000000ull;
constexpr uint64_t kBaseRt = 1700000000000000000ull;
constexpr uint64_t kCommA = 0x9a3c0f1e00000001ull;
constexpr int kAllMask = 0x7fff | ncclProfileKernelStep;

// A spool with the usual preamble: process, identity clock, four strings, communicator slot 1.
struct Spool {
  std::string path;
  std::unique_ptr<SpoolBuilder> b;
  Spool(const std::string& dir, bool lz4 = false, int mask = kAllMask, size_t block = 64 << 10) {
    path = dir + "/t.kspool";
    b = std::make_unique<SpoolBuilder>(path, lz4, block);
    b->Process(3, 4242, "node7", dir + "/t.json", mask, kBaseRt, kBaseMono);
    b->Clock(kBaseMono, kBaseMono, kBaseRt);
    b->String(1, "AllReduce");
    b->String(2, "ncclFloat32");
    b->String(3, "RING");
    b->String(4, "SIMPLE");
    b->String(5, "Send");
    b->Comm(1, kCommA, kBaseMono, 3, 8, "world");
  }
  SpoolBuilder* operator->() { return b.get(); }
  void Close(bool end = true) {
    if (end) b->End(0);
    b->Close();
  }
};

spool::CollFields Coll(uint8_t channels) {
  spool::CollFields c{};
  c.seq = 7;
  c.count = 1024;
  c.func = 1;
  c.datatype = 2;
  c.algo = 3;
  c.proto = 4;
  c.root = -1;
  c.nchannels = channels;
  c.nwarps = 16;
  return c;
}

spool::KernelChFields Kch(uint8_t channel, uint64_t gpu_start) {
  spool::KernelChFields k{};
  k.gpu_start = gpu_start;
  k.func = 1;
  k.channel = channel;
  return k;
}

class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir(); }
  katrace::ExportReport Export(const std::string& spool_path, const std::string& out = "") {
    katrace::ExportOptions o;
    o.output = out;
    o.summary = false;
    o.progress = false;
    o.threads = 2;
    return katrace::ExportSpool(spool_path, o);
  }
  // Exports and validates; returns the trace.
  json ExportValid(const std::string& spool_path) {
    katrace::ExportReport r = Export(spool_path);
    EXPECT_TRUE(r.ok) << r.message;
    last_ = r;
    return ExpectValidTrace(r.trace_path);
  }
  static json ById(const json& trace, const std::string& cat, uint64_t id) {
    for (const json& s : Slices(trace, cat)) {
      if (s["args"].value("id", uint64_t{0}) == id) return s;
    }
    return json();
  }
  static int64_t Ns(const json& micros) { return llround(micros.get<double>() * 1000.0); }
  std::string dir_;
  katrace::ExportReport last_;
};

TEST_F(ExportTest, EmptySpoolGivesAValidTrace) {
  Spool s(dir_);
  s.Close();
  json t = ExportValid(s.path);
  EXPECT_TRUE(last_.clean_end);
  EXPECT_FALSE(last_.cut);
  EXPECT_EQ(last_.events, 0u);
  const json& f = Footer(t);
  EXPECT_EQ(f["rank"], 3);
  EXPECT_EQ(f["host"], "node7");
  EXPECT_EQ(f["os_pid"], 4242);
  EXPECT_EQ(f["base_monotonic_ns"], kBaseMono);
  EXPECT_EQ(f["spool"]["clean_end"], true);
  EXPECT_EQ(f["spool"]["cut_offset"], 0);
  EXPECT_GT(f["spool"]["blocks"].get<int>(), 0);
  EXPECT_EQ(f["waits"], 0);
  EXPECT_FALSE(f.contains("writer_stalls"));
  EXPECT_EQ(last_.trace_path, dir_ + "/t.json");
}

TEST_F(ExportTest, EveryKindWithItsFields) {
  Spool s(dir_);
  uint64_t t = kBaseMono + 1000;
  spool::ApiFields api{};
  api.depth = 2;
  s->Start(0, Kind::kGroupApi, 1, 1, 0, t, api, spool::kStartGraphCaptured);
  s->State(0, Kind::kGroupApi, 1, 1, t + 10, ncclProfilerGroupStartApiStop);
  spool::ApiFields capi{};
  capi.count = 99;
  capi.func = 1;
  capi.datatype = 2;
  capi.root = 4;
  s->Start(0, Kind::kCollApi, 1, 2, 1, t + 20, capi);
  s->Stop(0, Kind::kCollApi, 1, 2, t + 30);
  s->Start(0, Kind::kKernelLaunch, 1, 3, 1, t + 40);
  s->Stop(0, Kind::kKernelLaunch, 1, 3, t + 50);
  s->Stop(0, Kind::kGroupApi, 1, 1, t + 60);
  s->Start(0, Kind::kGroup, 1, 4, 0, t + 100);
  s->Start(0, Kind::kColl, 1, 5, 4, t + 110, Coll(0));
  s->Stop(0, Kind::kColl, 1, 5, t + 200);
  spool::P2pFields p2p{};
  p2p.count = 10;
  p2p.func = 5;
  p2p.datatype = 2;
  p2p.peer = 6;
  p2p.nchannels = 0;
  s->Start(0, Kind::kP2p, 1, 6, 4, t + 210, p2p);
  s->Stop(0, Kind::kP2p, 1, 6, t + 300);
  s->Stop(0, Kind::kGroup, 1, 4, t + 310);
  // Proxy side on stream 1.
  spool::ProxyOpFields op{};
  op.peer = 2;
  op.nsteps = 4;
  op.chunk_size = 4096;
  op.channel = 1;
  s->Start(1, Kind::kProxyOp, 1, 10, 0, t + 400, op, spool::kStartSend);
  s->State(1, Kind::kProxyOp, 1, 10, t + 405, ncclProfilerProxyOpInProgress_v4);
  spool::ProxyStepFields st{};
  st.step = 9;
  st.peer = 2;
  st.channel = 1;
  st.direction = 1;
  s->Start(1, Kind::kProxyStep, 1, 11, 10, t + 410, st);
  s->State(1, Kind::kProxyStep, 1, 11, t + 420, ncclProfilerProxyStepSendGPUWait);
  s->State(1, Kind::kProxyStep, 1, 11, t + 430, ncclProfilerProxyStepSendWait, 777);
  s->State(1, Kind::kProxyStep, 1, 11, t + 435, ncclProfilerProxyStepSendWait, 888);  // repeat: first kept
  spool::NetPluginFields net{};
  net.net_id = 12;
  s->Start(1, Kind::kNetPlugin, 1, 12, 11, t + 440, net);
  s->State(1, Kind::kNetPlugin, 1, 12, t + 441, ncclProfilerNetPluginUpdate);
  s->State(1, Kind::kNetPlugin, 1, 12, t + 442, ncclProfilerNetPluginUpdate);
  s->Stop(1, Kind::kNetPlugin, 1, 12, t + 445);
  s->Stop(1, Kind::kProxyStep, 1, 11, t + 450);
  s->Stop(1, Kind::kProxyOp, 1, 10, t + 460);
  s->Start(1, Kind::kProxyCtrl, 1, 13, 0, t + 500);
  s->State(1, Kind::kProxyCtrl, 1, 13, t + 501, ncclProfilerProxyCtrlAppend);
  s->State(1, Kind::kProxyCtrl, 1, 13, t + 502, ncclProfilerProxyCtrlAppendEnd, 5);
  s->Stop(1, Kind::kProxyCtrl, 1, 13, t + 510);
  // GPU side: KernelStep and CE kinds.
  spool::KernelStepFields ks{};
  ks.gpu_start = kBaseRt + 600;
  ks.gpu_ready = kBaseRt + 700;
  ks.step = 3;
  ks.size = 65536;
  ks.peer = 5;
  ks.func = 1;
  ks.channel = 2;
  s->Start(2, Kind::kKernelStep, 1, 20, 0, t + 600, ks, spool::kStartSend);
  s->State(2, Kind::kKernelStep, 1, 20, t + 650, ncclProfilerKernelStepStop, kBaseRt + 900);
  s->Stop(2, Kind::kKernelStep, 1, 20, t + 660);
  s->Start(2, Kind::kCeColl, 1, 21, 0, t + 700, Coll(0));
  s->Stop(2, Kind::kCeColl, 1, 21, t + 710);
  s->Start(2, Kind::kCeSync, 1, 22, 0, t + 720);
  s->Stop(2, Kind::kCeSync, 1, 22, t + 730);
  spool::CeBatchFields cb{};
  cb.bytes = 1 << 20;
  cb.ops = 3;
  s->Start(2, Kind::kCeBatch, 1, 23, 0, t + 740, cb);
  s->Stop(2, Kind::kCeBatch, 1, 23, t + 750);
  s.Close();
  json tr = ExportValid(s.path);
  EXPECT_EQ(last_.events, 14u);
  EXPECT_EQ(last_.incomplete, 0u);

  json g = ById(tr, "GroupApi", 1);
  ASSERT_FALSE(g.is_null());
  EXPECT_EQ(g["name"], "Group");
  EXPECT_EQ(g["args"]["depth"], 2);
  EXPECT_EQ(g["args"]["graph_captured"], true);
  EXPECT_EQ(g["args"]["comm"], "9a3c0f1e00000001");
  EXPECT_EQ(g["args"]["rank"], 3);
  EXPECT_EQ(Ns(g["args"]["group_start_done"]), 1010);
  EXPECT_EQ(Ns(g["ts"]), 1000);
  EXPECT_EQ(Ns(g["dur"]), 60);
  json ca = ById(tr, "CollApi", 2);
  EXPECT_EQ(ca["name"], "AllReduce");
  EXPECT_EQ(ca["args"]["func"], "AllReduce");
  EXPECT_EQ(ca["args"]["count"], 99);
  EXPECT_EQ(ca["args"]["datatype"], "ncclFloat32");
  EXPECT_EQ(ca["args"]["root"], 4);
  EXPECT_EQ(ca["args"]["parent"], 1);
  EXPECT_EQ(ca["args"]["graph_captured"], false);
  EXPECT_EQ(ById(tr, "KernelLaunch", 3)["name"], "KernelLaunch");
  json c = ById(tr, "Coll", 5);
  EXPECT_EQ(c["args"]["seq"], 7);
  EXPECT_EQ(c["args"]["bytes"], 4096);
  EXPECT_EQ(c["args"]["algo"], "RING");
  EXPECT_EQ(c["args"]["proto"], "SIMPLE");
  EXPECT_EQ(c["args"]["warps"], 16);
  EXPECT_EQ(c["args"]["root"], -1);
  EXPECT_EQ(c["args"]["parent"], 4);
  EXPECT_FALSE(c["args"].contains("gpu_start"));
  json p = ById(tr, "P2p", 6);
  EXPECT_EQ(p["name"], "Send");
  EXPECT_EQ(p["args"]["peer"], 6);
  EXPECT_EQ(p["args"]["bytes"], 40);
  json o = ById(tr, "ProxyOp", 10);
  EXPECT_EQ(o["name"], "Send");
  EXPECT_EQ(o["args"]["channel"], 1);
  EXPECT_EQ(o["args"]["peer"], 2);
  EXPECT_EQ(o["args"]["steps"], 4);
  EXPECT_EQ(o["args"]["chunk_size"], 4096);
  EXPECT_EQ(o["args"]["send"], true);
  EXPECT_EQ(Ns(o["args"]["in_progress"]), 1405);
  json ps = ById(tr, "ProxyStep", 11);
  EXPECT_EQ(ps["name"], "SendStep");
  EXPECT_EQ(ps["args"]["step"], 9);
  EXPECT_EQ(ps["args"]["trans_size"], 888);  // the value follows every SendWait; the state is kept once
  std::vector<json> states = Slices(tr, "ProxyStepState");
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0]["name"], "SendGpuWait");
  EXPECT_EQ(states[1]["name"], "SendWait");
  json n = ById(tr, "NetPlugin", 12);
  EXPECT_EQ(n["args"]["net_id"], 12);
  EXPECT_EQ(n["args"]["updates"], 2);
  json pc = ById(tr, "ProxyCtrl", 13);
  EXPECT_EQ(pc["name"], "Append");
  EXPECT_EQ(pc["args"]["appended"], 5);
  json k = ById(tr, "KernelStep", 20);
  EXPECT_EQ(k["name"], "Send");
  EXPECT_EQ(k["args"]["channel"], 2);
  EXPECT_EQ(k["args"]["peer"], 5);
  EXPECT_EQ(k["args"]["step"], 3);
  EXPECT_EQ(k["args"]["size"], 65536);
  EXPECT_EQ(k["args"]["gpu_ready_ns"], kBaseRt + 700);
  EXPECT_EQ(k["args"]["gpu_stop_ns"], kBaseRt + 900);
  EXPECT_FALSE(k["args"].contains("abandoned"));
  EXPECT_EQ(Slices(tr, "KernelStepWait").size(), 1u);
  EXPECT_EQ(Slices(tr, "KernelStepTransfer").size(), 1u);
  EXPECT_EQ(ById(tr, "CeColl", 21)["args"]["seq"], 7);
  EXPECT_EQ(ById(tr, "CeSync", 22)["name"], "CeSync");
  json b = ById(tr, "CeBatch", 23);
  EXPECT_EQ(b["args"]["ops"], 3);
  EXPECT_EQ(b["args"]["bytes"], 1 << 20);
  const json& f = Footer(tr);
  EXPECT_EQ(f["events"]["ProxyStep"], 1);
  EXPECT_EQ(f["events"]["Coll"], 1);
  EXPECT_EQ(f["mask"], kAllMask);
  // Host tracks are named by the OS thread of the block that carried the Start.
  bool named = false;
  for (const json& e : tr["traceEvents"]) {
    if (e["name"] == "thread_name" && e["args"]["name"] == "host 1000") named = true;
  }
  EXPECT_TRUE(named);
}

TEST_F(ExportTest, ParentsLateAndIncomplete) {
  Spool s(dir_, false, static_cast<int>(ncclProfileGroup | ncclProfileColl | ncclProfileCollApi | ncclProfileProxyOp));
  uint64_t t = kBaseMono + 1000;
  spool::ApiFields capi{};
  capi.func = 1;
  s->Start(0, Kind::kCollApi, 1, 1, 0, t, capi);
  s->Stop(0, Kind::kCollApi, 1, 1, t + 10);
  s->Start(0, Kind::kColl, 1, 2, 1, t + 20, Coll(2));  // after its API call: normal, not late
  s->Stop(0, Kind::kColl, 1, 2, t + 30);
  s->Start(0, Kind::kGroup, 1, 3, 0, t + 40);
  s->Stop(0, Kind::kGroup, 1, 3, t + 50);
  // Late is the capture's verdict (its parent's work was retired before it started), carried
  // in the Start's flags; the export writes it as it stands.
  s->Start(0, Kind::kColl, 1, 4, 3, t + 60, Coll(2), spool::kStartLateChild);
  s->Stop(0, Kind::kColl, 1, 4, t + 70);
  s->Start(0, Kind::kColl, 1, 5, 999, t + 80, Coll(2));  // a parent that was never recorded
  s->Stop(0, Kind::kColl, 1, 5, t + 90);
  spool::ProxyOpFields op{};
  s->Start(1, Kind::kProxyOp, 1, 6, 0, t + 100, op);  // never stops
  s->CommEnd(1, t + 5000);
  s.Close();
  json tr = ExportValid(s.path);
  json a = ById(tr, "Coll", 2);
  EXPECT_EQ(a["args"]["parent"], 1);
  EXPECT_FALSE(a["args"].contains("late"));
  json l = ById(tr, "Coll", 4);
  EXPECT_EQ(l["args"]["parent"], 3);
  EXPECT_EQ(l["args"]["late"], true);
  json u = ById(tr, "Coll", 5);
  EXPECT_FALSE(u["args"].contains("parent"));
  json i = ById(tr, "ProxyOp", 6);
  EXPECT_EQ(i["args"]["incomplete"], true);
  EXPECT_EQ(Ns(i["ts"]) + Ns(i["dur"]), 1000 + 5000);  // closed at its communicator's CommEnd
  const json& f = Footer(tr);
  EXPECT_EQ(f["incomplete"], 1);
  EXPECT_EQ(f["late_children"], 1);
  EXPECT_EQ(last_.incomplete, 1u);
}

TEST_F(ExportTest, IncompleteWithoutCommEndStopsAtTheLastTick) {
  Spool s(dir_);
  uint64_t t = kBaseMono + 1000;
  s->Start(0, Kind::kGroup, 1, 1, 0, t);
  s->Start(0, Kind::kColl, 1, 2, 1, t + 10, Coll(0));
  s->Stop(0, Kind::kColl, 1, 2, t + 20);
  s->Start(1, Kind::kCeSync, 1, 3, 0, t + 900);
  s->Stop(1, Kind::kCeSync, 1, 3, t + 950);
  s.Close(false);  // a killed job: no End record
  json tr = ExportValid(s.path);
  EXPECT_FALSE(last_.clean_end);
  EXPECT_TRUE(last_.cut);
  json g = ById(tr, "Group", 1);
  EXPECT_EQ(g["args"]["incomplete"], true);
  EXPECT_EQ(Ns(g["ts"]) + Ns(g["dur"]), 1950);
  EXPECT_FALSE(ById(tr, "Coll", 2)["args"].contains("incomplete"));
  EXPECT_EQ(Footer(tr)["spool"]["clean_end"], false);
}

TEST_F(ExportTest, StopBeforeStartInFileOrderAcrossStreams) {
  Spool s(dir_);
  uint64_t t = kBaseMono + 1000;
  s->FlushAll();
  // The proxy thread's block (a child Start and the parent's Stop) reaches the file first.
  spool::ProxyOpFields op{};
  s->Start(1, Kind::kProxyOp, 1, 2, 1, t + 10, op);
  s->Stop(1, Kind::kProxyOp, 1, 2, t + 20);
  s->Stop(1, Kind::kColl, 1, 1, t + 30);
  s->Flush(1);
  s->Start(0, Kind::kColl, 1, 1, 0, t, Coll(0));
  s->Flush(0);
  s.Close();
  json tr = ExportValid(s.path);
  EXPECT_EQ(last_.events, 2u);
  json c = ById(tr, "Coll", 1);
  ASSERT_FALSE(c.is_null());
  EXPECT_FALSE(c["args"].contains("incomplete"));
  EXPECT_EQ(Ns(c["dur"]), 30);
  json o = ById(tr, "ProxyOp", 2);
  EXPECT_EQ(o["args"]["parent"], 1);
  EXPECT_FALSE(o["args"].contains("late"));
}

TEST_F(ExportTest, KernelChGpuExtentFlowAndPlacement) {
  Spool s(dir_);
  uint64_t t = kBaseMono + 100000;
  // globaltimer = realtime; the host sees stamps 500 and 300 ns late: the best observation wins.
  uint64_t rt = kBaseRt - kBaseMono;  // gpu = host + rt
  s->Start(0, Kind::kColl, 1, 1, 0, t, Coll(2), spool::kStartAwaitsKernelCh);
  s->Stop(0, Kind::kColl, 1, 1, t + 100);
  s->Start(1, Kind::kKernelCh, 1, 2, 1, t + 1000, Kch(0, t + 1000 + rt - 500));
  s->Start(1, Kind::kKernelCh, 1, 3, 1, t + 1100, Kch(1, t + 1100 + rt - 300));
  s->State(1, Kind::kKernelCh, 1, 2, t + 5000, ncclProfilerKernelChStop, t + 4000 + rt);
  s->State(1, Kind::kKernelCh, 1, 3, t + 5001, ncclProfilerKernelChStop, t + 4500 + rt);
  s->Stop(1, Kind::kKernelCh, 1, 2, t + 5100);
  s->Stop(1, Kind::kKernelCh, 1, 3, t + 5200);
  s.Close();
  json tr = ExportValid(s.path);
  const json& f = Footer(tr);
  // Upper bounds (host − stamp): −rt + 500 and −rt + 300; lower bounds (launch − stamp): −rt − 500
  // and −rt − 800. The prior −rt lies inside that band and is used; the error bound spans the
  // band from the prior (500 ns down to the lower bounds, less a tick), never less than 300.
  int64_t prior = static_cast<int64_t>(kBaseMono - kBaseRt);
  EXPECT_EQ(f["communicators"][0]["gpu_clock"], 0);
  EXPECT_EQ(f["communicators"][0]["gpu_offset_ns"].get<int64_t>(), prior);
  EXPECT_EQ(f["gpu_clocks"][0]["realtime_prior"], true);
  EXPECT_GE(f["gpu_offset_error_ns"].get<int64_t>(), 500);
  EXPECT_LE(f["gpu_offset_error_ns"].get<int64_t>(), 2000);
  EXPECT_EQ(f["gpu_offset_samples"], 2);
  json c = ById(tr, "Coll", 1);
  ASSERT_TRUE(c["args"].contains("gpu_start"));
  EXPECT_EQ(Ns(c["args"]["gpu_start"]), 100000 + 500);
  EXPECT_EQ(Ns(c["args"]["gpu_end"]), 100000 + 4500);
  std::vector<json> gpu = Slices(tr, "CollGpu");
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_EQ(gpu[0]["args"]["coll"], 1);
  EXPECT_EQ(Ns(gpu[0]["ts"]), 100500);
  EXPECT_EQ(Ns(gpu[0]["dur"]), 4000);
  json k = ById(tr, "KernelCh", 2);
  EXPECT_EQ(k["name"], "AllReduce");
  EXPECT_EQ(Ns(k["ts"]), 100500);
  EXPECT_EQ(Ns(k["dur"]), 3500);
  EXPECT_FALSE(k["args"].contains("host_timed"));
  int flows_s = 0, flows_f = 0;
  for (const json& e : tr["traceEvents"]) {
    if (e.value("cat", "") != "flow") continue;
    EXPECT_EQ(e["id"], 1);
    if (e["ph"] == "s") {
      ++flows_s;
      EXPECT_EQ(Ns(e["ts"]), 100000);
    }
    if (e["ph"] == "f") {
      ++flows_f;
      EXPECT_EQ(Ns(e["ts"]), 100500);
    }
  }
  EXPECT_EQ(flows_s, 1);
  EXPECT_EQ(flows_f, 1);
}

TEST_F(ExportTest, CollWaitsForItsAnnouncedKernelChannels) {
  Spool s(dir_);
  uint64_t t = kBaseMono + 1000;
  uint64_t rt = kBaseRt - kBaseMono;
  s->Start(0, Kind::kColl, 1, 1, 0, t, Coll(2), spool::kStartAwaitsKernelCh);
  s->Stop(0, Kind::kColl, 1, 1, t + 100);
  s->Start(1, Kind::kKernelCh, 1, 2, 1, t + 200, Kch(0, t + 200 + rt));
  s->State(1, Kind::kKernelCh, 1, 2, t + 300, ncclProfilerKernelChStop, t + 300 + rt);
  s->Stop(1, Kind::kKernelCh, 1, 2, t + 310);
  // The second channel starts only now; it is still a child in time, not late.
  s->Start(1, Kind::kKernelCh, 1, 3, 1, t + 400, Kch(1, t + 400 + rt));
  s->Stop(1, Kind::kKernelCh, 1, 3, t + 500);  // its GPU stop never came: host timed
  s.Close();
  json tr = ExportValid(s.path);
  json k3 = ById(tr, "KernelCh", 3);
  EXPECT_FALSE(k3["args"].contains("late"));
  EXPECT_EQ(k3["args"]["host_timed"], true);
  EXPECT_FALSE(k3["args"].contains("gpu_stop_ns"));
  EXPECT_EQ(Footer(tr)["late_children"], 0);
}

// The capture writes a KernelCh's KernelChStop state inside its stop (spool format 3); the
// export reads the one record as it read the two, and a folded stop too short for its stamp, or
// of a kind without a GPU stop, is counted as malformed, its stop still taken.
TEST_F(ExportTest, AStopCarryingItsKernelChStopStateExportsAsTheStateAndStopDid) {
  uint64_t t = kBaseMono + 1000;
  uint64_t rt = kBaseRt - kBaseMono;
  auto write = [&](const std::string& dir, int form) {
    Spool s(dir);
    s->Start(0, Kind::kColl, 1, 1, 0, t, Coll(1), spool::kStartAwaitsKernelCh);
    s->Stop(0, Kind::kColl, 1, 1, t + 100);
    s->Start(1, Kind::kKernelCh, 1, 2, 1, t + 200, Kch(0, t + 150 + rt));
    if (form == 0) {
      s->State(1, Kind::kKernelCh, 1, 2, t + 900, ncclProfilerKernelChStop, t + 850 + rt);
      s->Stop(1, Kind::kKernelCh, 1, 2, t + 900);
    } else if (form == 1) {
      s->StopWithGpuStop(1, Kind::kKernelCh, 1, 2, t + 900, t + 850 + rt);
    } else {
      spool::RecordHeader h{};
      h.type = spool::RecordType::kStop;
      h.kind = static_cast<uint8_t>(Kind::kKernelCh);
      h.context = 1;
      h.flags = spool::kStopCarriesGpuStop;
      const spool::StopBody cut{2, t + 900};
      s->Raw(1, h, &cut, sizeof(cut));
    }
    s.Close();
    return s.path;
  };
  const std::string two = dir_ + "/two", one = dir_ + "/one", cut = dir_ + "/cut";
  for (const std::string& d : {two, one, cut}) ASSERT_EQ(mkdir(d.c_str(), 0755), 0) << d;
  json from_two = ExportValid(write(two, 0));
  json from_one = ExportValid(write(one, 1));
  json k = ById(from_one, "KernelCh", 2);
  EXPECT_EQ(k, ById(from_two, "KernelCh", 2));
  EXPECT_EQ(ById(from_one, "Coll", 1), ById(from_two, "Coll", 1));
  EXPECT_EQ(Ns(k["dur"]), 700) << k.dump();
  EXPECT_FALSE(k["args"].contains("host_timed"));
  EXPECT_EQ(Footer(from_one)["incomplete"], 0);

  json from_cut = ExportValid(write(cut, 2));
  EXPECT_NE(last_.message.find("skipped 1 malformed record"), std::string::npos) << last_.message;
  json kc = ById(from_cut, "KernelCh", 2);
  EXPECT_EQ(kc["args"]["host_timed"], true) << "no GPU stop was read: " << kc.dump();
  EXPECT_EQ(Footer(from_cut)["incomplete"], 0) << "its stop still counts";

  // The flag on a kind that has no GPU stop state: malformed, the stop still taken.
  const std::string coll_dir = dir_ + "/coll";
  ASSERT_EQ(mkdir(coll_dir.c_str(), 0755), 0);
  Spool c(coll_dir);
  c->Start(0, Kind::kColl, 1, 1, 0, t, Coll(0));
  c->StopWithGpuStop(0, Kind::kColl, 1, 1, t + 100, t + rt);
  c.Close();
  json from_coll = ExportValid(c.path);
  EXPECT_NE(last_.message.find("skipped 1 malformed record"), std::string::npos) << last_.message;
  EXPECT_EQ(Ns(ById(from_coll, "Coll", 1)["dur"]), 100);
  EXPECT_EQ(Footer(from_coll)["incomplete"], 0);
}

// A record whose size breaks its block's chain of records leaves the rest of that block
// unframeable: said once (the scan and the merge both met it, and it was counted twice) with
// the bytes it took with it.
TEST_F(ExportTest, ARecordThatBreaksItsBlockIsCountedOnceWithTheBytesAfterIt) {
  Spool s(dir_);
  s->Start(0, Kind::kColl, 1, 1, 0, kBaseMono + 1000, Coll(0));
  s->Stop(0, Kind::kColl, 1, 1, kBaseMono + 2000);
  spool::RecordHeader h{};
  h.type = spool::RecordType::kStart;
  h.kind = static_cast<uint8_t>(Kind::kColl);
  h.size = 4;  // below the header's own size
  h.context = 1;
  const uint64_t body = 0;
  s->Raw(0, h, &body, sizeof(body), true);
  for (uint64_t id = 2; id < 6; ++id) {
    s->Start(0, Kind::kColl, 1, id, 0, kBaseMono + id * 1000, Coll(0));
    s->Stop(0, Kind::kColl, 1, id, kBaseMono + id * 1000 + 500);
  }
  s.Close();
  json t = ExportValid(s.path);
  EXPECT_EQ(Slices(t, "Coll").size(), 1u) << "only the Coll before the break";
  EXPECT_NE(last_.message.find("skipped 1 malformed record (and the "), std::string::npos) << last_.message;
  EXPECT_NE(last_.message.find(" after them in their blocks, which cannot be framed)"), std::string::npos)
      << last_.message;
}

TEST_F(ExportTest, Lz4AndPlainBlocksGiveTheSameTrace) {
  std::string traces[2];
  for (int lz4 = 0; lz4 < 2; ++lz4) {
    std::string d = dir_ + (lz4 ? "/lz4" : "/plain");
    mkdir(d.c_str(), 0755);
    Spool s(d, lz4 != 0, kAllMask, 512);  // small blocks: many of them
    uint64_t t = kBaseMono + 1000;
    for (uint64_t i = 0; i < 200; ++i) {
      s->Start(0, Kind::kColl, 1, 1 + i * 2, 0, t + i * 100, Coll(0));
      s->Stop(0, Kind::kColl, 1, 1 + i * 2, t + i * 100 + 50);
      spool::ProxyOpFields op{};
      op.channel = static_cast<uint8_t>(i % 4);
      s->Start(1, Kind::kProxyOp, 1, 2 + i * 2, 1 + i * 2, t + i * 100 + 10, op);
      s->Stop(1, Kind::kProxyOp, 1, 2 + i * 2, t + i * 100 + 60);
    }
    s.Close();
    json tr = ExportValid(s.path);
    EXPECT_EQ(last_.events, 400u);
    EXPECT_GT(last_.blocks, 10u);
    traces[lz4] = tr["traceEvents"].dump();
  }
  EXPECT_EQ(traces[0], traces[1]);
}

// A spool of |n| Coll events (one block each, block size tiny).
std::string ManyBlocks(const std::string& dir, int n, bool lz4, std::vector<uint64_t>* offsets) {
  Spool s(dir, lz4, kAllMask, 1);
  s->FlushAll();
  for (int i = 0; i < n; ++i) {
    uint64_t t = kBaseMono + 1000 + static_cast<uint64_t>(i) * 100;
    s->Start(0, Kind::kColl, 1, static_cast<uint64_t>(i) + 1, 0, t, Coll(0));
    s->Stop(0, Kind::kColl, 1, static_cast<uint64_t>(i) + 1, t + 10);
  }
  s.Close();
  *offsets = s->block_offsets();
  return s.path;
}

TEST_F(ExportTest, TruncatedSpoolExportsEverythingBeforeTheCut) {
  for (bool lz4 : {false, true}) {
    std::vector<uint64_t> offsets;
    std::string path = ManyBlocks(dir_, 20, lz4, &offsets);
    std::string bytes = ReadFileBytes(path);
    // Each record is its own block (block size 1): Start, Stop, Start, ... Cut inside the block
    // that holds the 11th Coll's Stop.
    size_t preamble = 0;
    while (preamble < offsets.size() && offsets[preamble] < bytes.size()) ++preamble;
    size_t stop_block = offsets.size() - 1 - 1 - 2 * 9;  // End is last, then 20 Stops/Starts back
    uint64_t cut = offsets[stop_block] + 20;
    WriteFileBytes(path, bytes.substr(0, cut));
    katrace::ExportReport r = Export(path);
    ASSERT_TRUE(r.ok) << r.message;
    EXPECT_TRUE(r.cut);
    EXPECT_FALSE(r.clean_end);
    EXPECT_EQ(r.cut_offset, offsets[stop_block]);
    EXPECT_NE(r.message.find("cut at offset " + std::to_string(offsets[stop_block])), std::string::npos) << r.message;
    json tr = ExpectValidTrace(r.trace_path);
    EXPECT_EQ(r.events, 11u);
    EXPECT_EQ(r.incomplete, 1u);  // the 11th Coll lost its Stop with the cut
    EXPECT_EQ(Footer(tr)["spool"]["cut_offset"], offsets[stop_block]);
    EXPECT_EQ(ById(tr, "Coll", 11)["args"]["incomplete"], true);
  }
}

// A block whose payload fails its CRC (a flipped bit on the disk) costs that block alone: the
// blocks after it chain on by their headers and are read (it once ended the export there).
TEST_F(ExportTest, ACorruptedCrcSkipsThatBlockOnly) {
  std::vector<uint64_t> offsets;
  std::string path = ManyBlocks(dir_, 20, false, &offsets);
  std::string bytes = ReadFileBytes(path);
  size_t bad = offsets.size() - 10;
  bytes[offsets[bad] + sizeof(spool::BlockHeader) + 9] ^= 0x40;  // a byte of the record body
  WriteFileBytes(path, bytes);
  katrace::ExportReport r = Export(path);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.damaged_blocks, 1u);
  EXPECT_EQ(r.blocks, offsets.size() - 1);
  const std::string said = "skipped 1 damaged block (the first at offset " + std::to_string(offsets[bad]) + ": ";
  ASSERT_NE(r.message.find(said), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("CRC", r.message.find(said)), std::string::npos) << r.message;
  ExpectValidTrace(r.trace_path);
}

TEST_F(ExportTest, NotASpool) {
  std::string path = dir_ + "/x.kspool";
  WriteFileBytes(path, "{\"traceEvents\":[]} this is a trace, not a spool, and long enough for a header");
  katrace::ExportReport r = Export(path, dir_ + "/x.json");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("not a katrace spool"), std::string::npos) << r.message;
  r = Export(dir_ + "/missing.kspool", dir_ + "/y.json");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("cannot open"), std::string::npos) << r.message;
  WriteFileBytes(path, "KASPOOL1");
  r = Export(path, dir_ + "/x.json");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("shorter"), std::string::npos) << r.message;
}

TEST_F(ExportTest, GarbageHeadersLengthsAndRecordsNeverCrash) {
  // Block headers out of range, each as the first block after a valid preamble.
  for (int variant = 0; variant < 5; ++variant) {
    std::string d = dir_ + "/v" + std::to_string(variant);
    mkdir(d.c_str(), 0755);
    Spool s(d);
    s->FlushAll();
    spool::BlockHeader h{};
    h.magic = spool::kBlockMagic;
    h.sequence = 1;
    if (variant == 0) h.magic = 0x12345678;
    if (variant == 1) h.raw_bytes = h.stored_bytes = 0xffffffffu;
    if (variant == 2) h.raw_bytes = 100, h.stored_bytes = 50;  // not compressed but sizes differ
    if (variant == 3) h.flags = 0x80;
    if (variant == 4) h.stored_bytes = h.raw_bytes = 1 << 20;  // longer than the file
    s->WriteRawBytes(&h, sizeof(h));
    s.Close(false);
    katrace::ExportReport r = Export(s.path);
    EXPECT_TRUE(r.ok) << r.message;
    EXPECT_TRUE(r.cut);
    EXPECT_EQ(r.blocks, 1u);
    ExpectValidTrace(r.trace_path);
  }
  // Records of every shape inside CRC-valid blocks: random types, kinds, sizes, bodies.
  std::mt19937_64 rng(42);
  for (int round = 0; round < 30; ++round) {
    std::string d = dir_ + "/r" + std::to_string(round);
    mkdir(d.c_str(), 0755);
    Spool s(d, round % 2 == 1, kAllMask, 256);
    for (int i = 0; i < 300; ++i) {
      spool::RecordHeader h{};
      h.type = static_cast<spool::RecordType>(rng() % 13);
      h.kind = static_cast<uint8_t>(rng() % 20);
      h.context = static_cast<uint16_t>(rng() % 4);
      h.flags = static_cast<uint16_t>(rng());
      uint8_t body[96];
      for (uint8_t& x : body) x = static_cast<uint8_t>(rng() % 4 == 0 ? rng() : rng() % 8);
      size_t n = (rng() % 12) * 8;
      bool lie = rng() % 10 == 0;
      if (lie) h.size = static_cast<uint16_t>(rng());
      s->Raw(static_cast<uint32_t>(rng() % 3), h, body, n, lie);
    }
    s.Close(round % 3 != 0);
    katrace::ExportReport r = Export(s.path);
    EXPECT_TRUE(r.ok) << r.message;
    if (r.ok) {
      json tr = LoadTrace(r.trace_path);
      // Garbage ticks give times near 2^63 ns, beyond what a double holds to the nanosecond, so
      // the validator's nesting check cannot judge them; everything else must hold.
      for (const std::string& p : ValidateTrace(tr)) {
        if (p.find("partially overlaps") == std::string::npos) ADD_FAILURE() << "round " << round << ": " << p;
      }
    }
  }
}

TEST_F(ExportTest, GarbageStringIdsAndUnknownKindsUseDefaults) {
  Spool s(dir_);
  uint64_t t = kBaseMono + 1000;
  spool::CollFields c = Coll(0);
  c.func = 12345;  // never interned
  c.datatype = 0;
  s->Start(0, Kind::kColl, 1, 1, 0, t, c);
  s->Stop(0, Kind::kColl, 1, 1, t + 10);
  s->Start(0, static_cast<Kind>(200), 1, 2, 0, t + 20, c);
  s->Stop(0, static_cast<Kind>(200), 1, 2, t + 30);
  s->Start(0, Kind::kColl, 77, 3, 0, t + 40, Coll(0));  // a slot with no Comm record
  s->Stop(0, Kind::kColl, 77, 3, t + 50);
  s.Close();
  json tr = ExportValid(s.path);
  json a = ById(tr, "Coll", 1);
  EXPECT_EQ(a["name"], "Coll");
  EXPECT_EQ(a["args"]["func"], "");
  EXPECT_EQ(a["args"]["bytes"], 1024);
  EXPECT_EQ(ById(tr, "Coll", 3)["args"]["comm"], "0000000000000000");
  EXPECT_EQ(last_.events, 2u);
  EXPECT_NE(last_.message.find("unknown type or kind"), std::string::npos) << last_.message;
}

// Id 0 names no record (the id map's empty key): a stop or state that says 0 must not find the
// first empty slot of the map and with it a live event's index (fuzz_spool_export found it).
TEST_F(ExportTest, AStopOrStateWithIdZeroTouchesNoLiveEvent) {
  Spool s(dir_);
  uint64_t t = kBaseMono + 1000;
  s->Start(0, Kind::kColl, 1, 1, 0, t, Coll(0));
  s->State(0, Kind::kColl, 1, 0, t + 2, spool::kStateUnrecordedChildren, 1);
  s->Stop(0, Kind::kColl, 1, 0, t + 5);
  s->Stop(0, Kind::kColl, 1, 1, t + 10);
  s.Close();
  json tr = ExportValid(s.path);
  EXPECT_EQ(last_.events, 1u);
  json c = ById(tr, "Coll", 1);
  ASSERT_FALSE(c.is_null());
  EXPECT_EQ(Ns(c["dur"]), 10) << "stopped by its own stop, not by the one with id 0";
}

TEST_F(ExportTest, ReusedSlotResolvesToTheCommunicatorOfThatTime) {
  Spool s(dir_);
  uint64_t t = kBaseMono + 1000;
  s->Start(0, Kind::kColl, 1, 1, 0, t, Coll(0));
  s->Stop(0, Kind::kColl, 1, 1, t + 10);
  s->CommEnd(1, t + 20);
  s->Comm(1, 0xbbbbull, t + 30, 5, 6, "second");
  s->Start(0, Kind::kColl, 1, 2, 0, t + 40, Coll(0));
  s->Stop(0, Kind::kColl, 1, 2, t + 50);
  s.Close();
  json tr = ExportValid(s.path);
  EXPECT_EQ(ById(tr, "Coll", 1)["args"]["comm"], "9a3c0f1e00000001");
  EXPECT_EQ(ById(tr, "Coll", 2)["args"]["comm"], "000000000000bbbb");
  EXPECT_EQ(ById(tr, "Coll", 2)["args"]["rank"], 5);
  EXPECT_EQ(Footer(tr)["communicators"].size(), 2u);
}

TEST_F(ExportTest, ProxyStepDirectionFromParentOrFirstState) {
  Spool s(dir_);
  uint64_t t = kBaseMono + 1000;
  spool::ProxyStepFields st{};
  st.step = 1;
  s->Start(0, Kind::kProxyStep, 1, 1, 0, t, st);  // no parent, no direction: the first state tells
  s->State(0, Kind::kProxyStep, 1, 1, t + 5, ncclProfilerProxyStepRecvWait);
  s->Stop(0, Kind::kProxyStep, 1, 1, t + 10);
  spool::ProxyOpFields op{};
  op.channel = 3;
  op.peer = 4;
  s->Start(0, Kind::kProxyOp, 1, 2, 0, t + 20, op, spool::kStartSend);
  st.step = 2;
  s->Start(0, Kind::kProxyStep, 1, 3, 2, t + 30, st);  // direction 0: taken from its ProxyOp
  s->Stop(0, Kind::kProxyStep, 1, 3, t + 40);
  s->Stop(0, Kind::kProxyOp, 1, 2, t + 50);
  s->Start(0, Kind::kProxyStep, 1, 4, 0, t + 60, st);  // never told
  s->Stop(0, Kind::kProxyStep, 1, 4, t + 70);
  s.Close();
  json tr = ExportValid(s.path);
  EXPECT_EQ(ById(tr, "ProxyStep", 1)["name"], "RecvStep");
  EXPECT_EQ(ById(tr, "ProxyStep", 3)["name"], "SendStep");
  EXPECT_EQ(ById(tr, "ProxyStep", 4)["name"], "Step");
}

TEST_F(ExportTest, AbandonedKernelStepAndLateStatesAreIgnored) {
  Spool s(dir_);
  uint64_t t = kBaseMono + 1000;
  spool::KernelStepFields ks{};
  ks.gpu_ready = kBaseRt + 100;
  s->Start(0, Kind::kKernelStep, 1, 1, 0, t, ks);
  s->State(0, Kind::kKernelStep, 1, 1, t + 5, ncclProfilerKernelStepStop, 0);
  s->Stop(0, Kind::kKernelStep, 1, 1, t + 10);
  s->State(0, Kind::kKernelStep, 1, 1, t + 20, ncclProfilerKernelStepStop, kBaseRt + 500);  // after the stop
  s.Close();
  json tr = ExportValid(s.path);
  json k = ById(tr, "KernelStep", 1);
  EXPECT_EQ(k["args"]["abandoned"], true);
  EXPECT_FALSE(k["args"].contains("gpu_stop_ns"));
  EXPECT_EQ(k["name"], "Recv");
  EXPECT_TRUE(Slices(tr, "KernelStepTransfer").empty());
}

TEST_F(ExportTest, CountersGiveDropsWaitsAndDrain) {
  Spool s(dir_);
  uint64_t t = kBaseMono + 1000;
  s->Start(0, Kind::kColl, 1, 1, 0, t, Coll(0));
  spool::CountersBody c{};
  c.dropped[static_cast<int>(Kind::kProxyStep)] = 3;
  c.waits = 2;
  c.drain.seen = 10;
  c.drain.lost_overrun = 1;
  s->Counters(c);
  s->Stop(0, Kind::kColl, 1, 1, t + 10);
  c.dropped[static_cast<int>(Kind::kColl)] = 4;
  c.io_errors = 0;
  s->Counters(c);
  s.Close();
  json tr = ExportValid(s.path);
  const json& f = Footer(tr);
  EXPECT_EQ(f["drops"]["ProxyStep"], 3);
  EXPECT_EQ(f["drops"]["Coll"], 4);
  EXPECT_EQ(f["waits"], 2);
  EXPECT_EQ(f["drain"]["seen"], 10);
  EXPECT_EQ(f["drain"]["lost_overrun"], 1);
  int drop_samples = 0;
  for (const json& e : tr["traceEvents"]) {
    if (e["ph"] == "C" && e["name"] == "katrace drops") ++drop_samples;
  }
  EXPECT_GE(drop_samples, 2);
  EXPECT_EQ(last_.dropped, 7u);
  EXPECT_EQ(last_.waits, 2u);
}

// Ten AllReduce collectives of 40 ns, 100 ns apart: the summary's test workload.
void WriteTenAllReduces(Spool& s) {
  const uint64_t t = kBaseMono + 1000;
  for (uint64_t i = 0; i < 10; ++i) {
    s->Start(0, Kind::kColl, 1, i + 1, 0, t + i * 100, Coll(0));
    s->Stop(0, Kind::kColl, 1, i + 1, t + i * 100 + 40);
  }
  s.Close();
}

TEST_F(ExportTest, SummaryFileAndText) {
  Spool s(dir_);
  WriteTenAllReduces(s);
  katrace::ExportOptions o;
  o.summary = true;
  o.progress = false;
  testing::internal::CaptureStderr();
  katrace::ExportReport r = katrace::ExportSpool(s.path, o);
  std::string err = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_NE(r.summary_text.find("katrace host-side summary"), std::string::npos);
  EXPECT_NE(r.summary_text.find("Coll AllReduce"), std::string::npos);
  EXPECT_NE(r.summary_text.find("katrace: 10 events recorded"), std::string::npos) << r.summary_text;
  EXPECT_NE(r.summary_text.find("katrace: trace " + dir_ + "/t.json"), std::string::npos);
  EXPECT_NE(err.find(r.summary_text), std::string::npos);
  EXPECT_EQ(ReadFileBytes(dir_ + "/t.json.summary.txt"), r.summary_text);
  struct stat st;
  EXPECT_NE(stat((dir_ + "/t.json.summary.txt.tmp." + std::to_string(getpid())).c_str(), &st), 0);
  // An unwritable summary path leaves nothing behind and says so.
  o.summary_path = dir_ + "/no/such/dir/s.txt";
  testing::internal::CaptureStderr();
  r = katrace::ExportSpool(s.path, o);
  testing::internal::GetCapturedStderr();
  EXPECT_TRUE(r.ok);
  EXPECT_NE(r.summary_error.find("the summary file was not written"), std::string::npos) << r.summary_error;
  EXPECT_NE(r.message.find(r.summary_error), std::string::npos) << r.message;
  // Regression: a device or pipe as the summary file was replaced by a regular file (renamed
  // over it). It is written in place.
  o.summary_path = dir_ + "/summary-pipe";
  ASSERT_EQ(mkfifo(o.summary_path.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = ReadFileBytes(o.summary_path); });
  testing::internal::CaptureStderr();
  r = katrace::ExportSpool(s.path, o);
  testing::internal::GetCapturedStderr();
  reader.join();
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.summary_error, "");
  EXPECT_EQ(received, r.summary_text);
  ASSERT_EQ(stat(o.summary_path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

// A summary nobody reads (not printed, no file asked for) leaves its tables out: the count lines
// stay in the report. A summary file asked for without printing still gets the tables.
TEST_F(ExportTest, SummaryTablesOnlyWhenPrintedOrWritten) {
  Spool s(dir_);
  WriteTenAllReduces(s);
  katrace::ExportOptions o;
  o.summary = false;
  o.progress = false;
  katrace::ExportReport r = katrace::ExportSpool(s.path, o);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.summary_text.find("katrace host-side summary"), std::string::npos) << r.summary_text;
  EXPECT_NE(r.summary_text.find("katrace: 10 events recorded"), std::string::npos) << r.summary_text;
  struct stat st;
  EXPECT_NE(stat((dir_ + "/t.json.summary.txt").c_str(), &st), 0);

  o.summary_path = dir_ + "/asked.txt";
  r = katrace::ExportSpool(s.path, o);
  ASSERT_TRUE(r.ok) << r.message;
  const std::string written = ReadFileBytes(o.summary_path);
  EXPECT_NE(written.find("katrace host-side summary"), std::string::npos) << written;
  EXPECT_NE(written.find("Coll AllReduce"), std::string::npos) << written;
  EXPECT_EQ(written, r.summary_text);
}

// Another writer of the same trace (a process with this pid in another pid namespace sharing the
// directory, or a dead one whose pid was reused) owns "<trace>.tmp.<pid>": the export takes the
// next free temporary name beside it, never that file and never $TMPDIR.
TEST_F(ExportTest, ATemporaryNameTakenAlreadyIsLeftAloneAndTheNextOneUsed) {
  Spool s(dir_);
  s->Start(0, Kind::kColl, 1, 1, 0, kBaseMono + 1000, Coll(0));
  s->Stop(0, Kind::kColl, 1, 1, kBaseMono + 2000);
  s.Close();
  const std::string trace = dir_ + "/taken.json", summary = trace + ".summary.txt";
  const std::string pid = std::to_string(getpid());
  for (const std::string& taken : {trace + ".tmp." + pid, summary + ".tmp." + pid}) {
    std::ofstream(taken) << "someone else's";
  }
  katrace::ExportOptions o;
  o.output = trace;
  o.summary = true;
  o.summary_path = summary;
  o.progress = false;
  testing::internal::CaptureStderr();
  katrace::ExportReport r = katrace::ExportSpool(s.path, o);
  const std::string err = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.trace_path, trace) << err;
  EXPECT_EQ(err.find("instead"), std::string::npos) << err;
  EXPECT_EQ(Slices(ExpectValidTrace(trace), "Coll").size(), 1u);
  EXPECT_EQ(ReadFileBytes(summary), r.summary_text);
  for (const std::string& taken : {trace + ".tmp." + pid, summary + ".tmp." + pid}) {
    EXPECT_EQ(ReadFileBytes(taken), "someone else's") << taken;
    struct stat st;
    EXPECT_NE(stat((taken + ".1").c_str(), &st), 0) << "the export left its temporary file " << taken << ".1";
  }
}

TEST_F(ExportTest, GzipOutput) {
  Spool s(dir_);
  s->Start(0, Kind::kColl, 1, 1, 0, kBaseMono + 10, Coll(0));
  s->Stop(0, Kind::kColl, 1, 1, kBaseMono + 20);
  s.Close();
  katrace::ExportReport r = Export(s.path, dir_ + "/out.json.gz");
  ASSERT_TRUE(r.ok) << r.message;
  std::string bytes = ReadFileBytes(dir_ + "/out.json.gz");
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
  json tr = ExpectValidTrace(dir_ + "/out.json.gz");
  EXPECT_EQ(Slices(tr, "Coll").size(), 1u);
}

// A .pftrace exported on the machine that captured binds its clocks to CLOCK_BOOTTIME with the
// time the machine slept. Read afresh with two clock reads, it differed by tens of ns from one
// export of a spool to the next; a machine that never slept now writes exactly none.
TEST_F(ExportTest, PftraceExportsOfOneSpoolOnTheCapturingMachineAreByteIdentical) {
  const auto ns = [](clockid_t id) {
    timespec t{};
    clock_gettime(id, &t);
    return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
  };
  const int64_t before = ns(CLOCK_MONOTONIC), boot = ns(CLOCK_BOOTTIME), after = ns(CLOCK_MONOTONIC);
  if (boot - after > 0) GTEST_SKIP() << "this machine has slept since it booted: its exports carry that time";
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  ASSERT_LE(boot - before, 1000000) << "clock reads 1 ms apart";
  const std::string path = dir_ + "/here.kspool";
  {
    SpoolBuilder b(path);
    b.Process(0, 4242, host, dir_ + "/here.json", kAllMask, kBaseRt, kBaseMono);
    b.Clock(kBaseMono, kBaseMono, kBaseRt);
    b.String(1, "AllReduce");
    b.Comm(1, kCommA, kBaseMono, 0, 2, "world");
    b.Start(0, Kind::kColl, 1, 1, 0, kBaseMono + 10, Coll(1));
    b.Stop(0, Kind::kColl, 1, 1, kBaseMono + 20);
    b.End(0);
    b.Close();
  }
  std::string first;
  for (int i = 0; i < 5; ++i) {
    const std::string out = dir_ + "/here" + std::to_string(i) + ".pftrace";
    katrace::ExportOptions o;
    o.output = out;
    o.format = katrace::TraceFormat::kPerfetto;
    o.summary = false;
    o.progress = false;
    const katrace::ExportReport r = katrace::ExportSpool(path, o);
    ASSERT_TRUE(r.ok) << r.message;
    const std::string bytes = ReadFileBytes(out);
    ASSERT_FALSE(bytes.empty());
    if (i == 0) first = bytes;
    EXPECT_EQ(bytes == first, true) << "export " << i << " differs from the first";
  }
}

TEST_F(ExportTest, GeneratedSpoolIsValidAndComplete) {
  uint64_t n = GenerateRealisticSpool(dir_ + "/g.kspool", 20000, 4, 4, true, dir_ + "/g.json");
  katrace::ExportReport r = Export(dir_ + "/g.kspool");
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.events, n);
  EXPECT_EQ(r.incomplete, 0u);
  json tr = ExpectValidTrace(r.trace_path);
  EXPECT_EQ(Footer(tr)["late_children"], 0);
  EXPECT_EQ(Slices(tr, "CollGpu").size(), Slices(tr, "Coll").size());
}

// A spool long enough for dozens of the export's batches between its halves (never fewer than
// twice the pipe's eight, also scaled down under a sanitizer) and, with the interning state reset
// every 64 KiB, for many restarts of the `.pftrace`'s sequence: one thread (everything inline)
// and two to four (the halves on threads, write-behind, blocks decoded ahead) write the same
// bytes in every format.
TEST_F(ExportTest, ThreadCountsWriteTheSameBytesThroughManyBatches) {
  GenerateRealisticSpool(dir_ + "/g.kspool", TestScaled(30000, 10000), 4, 4, true, dir_ + "/g.json");
  for (katrace::TraceFormat format :
       {katrace::TraceFormat::kJson, katrace::TraceFormat::kPerfetto, katrace::TraceFormat::kNvtxt}) {
    std::string one_thread;
    for (int threads = 1; threads <= 4; ++threads) {
      katrace::ExportOptions o;
      o.output = dir_ + "/g" + std::to_string(threads) + katrace::TraceFormatExtension(format);
      o.format = format;
      o.perfetto_reset_bytes = 64 << 10;
      o.summary = false;
      o.progress = false;
      o.threads = threads;
      const katrace::ExportReport r = katrace::ExportSpool(dir_ + "/g.kspool", o);
      ASSERT_TRUE(r.ok) << r.message;
      const std::string bytes = ReadFileBytes(o.output);
      ASSERT_GT(bytes.size(), size_t{256} << 10);
      if (threads == 1) one_thread = bytes;
      EXPECT_TRUE(bytes == one_thread) << katrace::TraceFormatExtension(format) << ": " << threads
                                       << " threads write another trace than one";
    }
  }
}

// A GPU clock 5 ms ahead of realtime whose first KernelCh is seen 2.7 ms late (the proxy was
// busy): the fit follows the many prompt observations, not the first one, and no GPU slice lands
// before its launch (a placement frozen at the first observation put every later slice 2.7 ms
// late; the realtime prior, 5 ms off, lies outside the band and is not used).
TEST_F(ExportTest, GpuPlacementFollowsEveryObservationNotTheFirst) {
  Spool s(dir_);
  const int64_t prior = static_cast<int64_t>(kBaseMono - kBaseRt);
  const int64_t truth = prior - 5000000;  // host = gpu + truth
  for (uint64_t i = 0; i < 8; ++i) {
    uint64_t t = kBaseMono + 100000 + i * 100000;  // the launch
    uint64_t start = t + 1000;                     // the KernelCh truly starts
    uint64_t seen = start + (i == 0 ? 2700000 : 300);
    uint64_t stamp = static_cast<uint64_t>(static_cast<int64_t>(start) - truth);
    uint64_t coll = 1 + i * 10, kch = coll + 1;
    s->Start(0, Kind::kColl, 1, coll, 0, t, Coll(1), spool::kStartAwaitsKernelCh);
    s->Stop(0, Kind::kColl, 1, coll, t + 100);
    s->Start(1, Kind::kKernelCh, 1, kch, coll, seen, Kch(0, stamp));
    s->State(1, Kind::kKernelCh, 1, kch, seen + 3000, ncclProfilerKernelChStop, stamp + 1000);
    s->Stop(1, Kind::kKernelCh, 1, kch, seen + 3100);
  }
  s.Close();
  json tr = ExportValid(s.path);
  const json& f = Footer(tr);
  EXPECT_EQ(f["gpu_clocks"][0]["realtime_prior"], false);
  EXPECT_LE(std::llabs(f["gpu_offset_ns"].get<int64_t>() - truth), 300);
  EXPECT_GE(f["gpu_offset_error_ns"].get<int64_t>(), std::llabs(f["gpu_offset_ns"].get<int64_t>() - truth));
  for (uint64_t i = 0; i < 8; ++i) {
    json k = ById(tr, "KernelCh", 2 + i * 10);
    EXPECT_NEAR(static_cast<double>(Ns(k["ts"])), 100000 + i * 100000 + 1000, 300) << i;
  }
  for (const json& g : Slices(tr, "CollGpu")) {
    json c = ById(tr, "Coll", g["args"]["coll"].get<uint64_t>());
    EXPECT_GE(Ns(g["ts"]), Ns(c["ts"]));
  }
}

// The KernelCh hold follows the capture's per-task flag, not the process mask (which has
// KernelCh here): without it a Coll completes (and is written) at its stop; with it the Coll
// waits for its channels, and when none ever comes it is written incomplete at the end.
TEST_F(ExportTest, KernelChHoldFollowsTheStartFlag) {
  Spool s(dir_);
  uint64_t t = kBaseMono + 1000;
  s->Start(0, Kind::kColl, 1, 1, 0, t, Coll(2));
  s->Stop(0, Kind::kColl, 1, 1, t + 100);
  s->Start(0, Kind::kColl, 1, 2, 0, t + 200, Coll(2), spool::kStartAwaitsKernelCh);
  s->Stop(0, Kind::kColl, 1, 2, t + 300);
  s->Start(0, Kind::kGroup, 1, 3, 0, t + 400);
  s->Stop(0, Kind::kGroup, 1, 3, t + 500);
  s.Close();
  json tr = ExportValid(s.path);
  // The file is in start order (the layout places slices by start), so the hold shows only in
  // the completion facts: Coll 1 completed at its stop, Coll 2 waited to the end.
  json c1 = ById(tr, "Coll", 1);
  EXPECT_FALSE(c1["args"].contains("incomplete"));
  json c2 = ById(tr, "Coll", 2);
  EXPECT_EQ(c2["args"]["incomplete"], true);
  EXPECT_EQ(Ns(c2["dur"]), 100);  // it did stop: its own stop time is kept
  EXPECT_EQ(Footer(tr)["incomplete"], 1);
  EXPECT_EQ(last_.incomplete, 1u);
}

// A TSC-clocked spool whose Clock records change rate mid-run (NTP slewing CLOCK_MONOTONIC):
// ticks convert by interpolation between the two records around them, and outside the records
// with the nearest segment's rate. One rate from the first and last records would be 1.25 here.
TEST_F(ExportTest, HostClockIsPiecewiseBetweenClockRecords) {
  std::string path = dir_ + "/t.kspool";
  {
    SpoolBuilder b(path);
    b.Process(3, 4242, "node7", dir_ + "/t.json", kAllMask, kBaseRt, kBaseMono, spool::kClockTsc);
    const uint64_t m0 = kBaseMono + 10000;
    b.Clock(1000, m0, kBaseRt + 10000);                              // rate 0.5 ns/tick to ...
    b.Clock(1000 + 2000000, m0 + 1000000, kBaseRt + 1010000);        // ... here, then 2 ns/tick
    b.Clock(1000 + 4000000, m0 + 5000000, kBaseRt + 5010000);
    b.String(1, "AllReduce");
    b.Comm(1, kCommA, 500, 3, 8, "world");
    const uint64_t ticks[4] = {500, 1000 + 1000000, 1000 + 3000000, 1000 + 5000000};
    for (uint64_t i = 0; i < 4; ++i) {
      b.Start(0, Kind::kColl, 1, i + 1, 0, ticks[i], Coll(0));
      b.Stop(0, Kind::kColl, 1, i + 1, ticks[i] + 1000);
    }
    b.End(0);
    b.Close();
  }
  json tr = ExportValid(path);
  // ts in ns from the base: before the first record (rate 0.5), inside each segment, after the
  // last (rate 2).
  const int64_t want_ts[4] = {9750, 10000 + 500000, 10000 + 1000000 + 2000000, 10000 + 5000000 + 2000000};
  const int64_t want_dur[4] = {500, 500, 2000, 2000};
  for (uint64_t i = 0; i < 4; ++i) {
    json c = ById(tr, "Coll", i + 1);
    ASSERT_FALSE(c.is_null()) << i;
    EXPECT_EQ(Ns(c["ts"]), want_ts[i]) << i;
    EXPECT_EQ(Ns(c["dur"]), want_dur[i]) << i;
  }
}

// Marker records (capture switches, dumps) become process-scoped instants named by what they
// say, the reason in args; one with an unknown value or a short body is skipped and counted as
// malformed, never written with a made-up name.
TEST_F(ExportTest, MarkersBecomeInstantsAndBadOnesAreSkipped) {
  Spool s(dir_);
  auto marker = [&](uint32_t stream, uint64_t ticks, uint8_t what, uint8_t reason, size_t n = sizeof(spool::MarkerBody)) {
    spool::MarkerBody m{};
    m.ticks = ticks;
    m.what = what;
    m.reason = reason;
    spool::RecordHeader h{};
    h.type = spool::RecordType::kMarker;
    s->Raw(stream, h, &m, n);
  };
  marker(0, kBaseMono + 1000, spool::kMarkerCaptureOn, spool::kMarkerDelay);
  marker(2, kBaseMono + 2000, spool::kMarkerCaptureOff, spool::kMarkerDuration);
  marker(0, kBaseMono + 3000, spool::kMarkerDump, spool::kMarkerControlFile);
  marker(0, kBaseMono + 4000, spool::kMarkerCaptureOn, spool::kMarkerSignal);
  marker(0, kBaseMono + 5000, 7, spool::kMarkerSignal);            // unknown what
  marker(2, kBaseMono + 6000, spool::kMarkerCaptureOff, 0);        // unknown reason
  marker(0, kBaseMono + 7000, spool::kMarkerCaptureOff, spool::kMarkerSignal, 8);  // body too short
  s.Close();
  json t = ExportValid(s.path);
  std::vector<std::string> got;
  for (const json& e : t["traceEvents"]) {
    if (e.value("ph", "") != "i" || e.value("cat", "") != "katrace") continue;
    EXPECT_EQ(e["s"], "p");
    EXPECT_EQ(e["pid"], 3);
    got.push_back(std::to_string(Ns(e["ts"])) + " " + e["name"].get<std::string>() + " (" +
                  e["args"]["reason"].get<std::string>() + ")");
  }
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"1000 capture on (KATRACE_DELAY)", "2000 capture off (KATRACE_DURATION)",
                                           "3000 dump (control file)", "4000 capture on (signal)"}));
  EXPECT_NE(last_.message.find("skipped 3 malformed records"), std::string::npos) << last_.message;
}

}  // namespace
}  // namespace katrace_test
