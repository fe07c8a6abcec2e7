// katrace-sim with KernelStep, end to end: the real sim binary (emulated device writers -> rings
// -> drain on the proxy threads) drives the real libnccl-profiler-katrace.so, which writes a
// trace; the test parses it and checks that every KernelStep sits under the right Coll/P2p, on the
// right (comm, channel, direction, peer) track, inside its KernelCh, with stop >= ready >= start,
// and that the counts match what the writers wrote minus what the drain's counters say was lost.
// Plus the new command-line options and the ring-depth choice, in process.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "test/support/plugin_harness.h"
#include "test/support/subprocess.h"
#include "katrace/drain_counters.h"
#include "test/support/trace_validation.h"
#include "tools/sim/kernel_step_rank.h"
#include "tools/sim/sim_options.h"

namespace katrace::sim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// "    <label>  key value  key value ..." from the sim's report, as numbers by key.
std::map<std::string, uint64_t> ReportCounters(const std::string& report,
                                               const std::string& label) {
  std::map<std::string, uint64_t> counters;
  std::istringstream lines(report);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string first;
    if (!(words >> first) || first != label) continue;
    std::string key, value;
    while (words >> key >> value) counters[key] = std::strtoull(value.c_str(), nullptr, 10);
  }
  return counters;
}

// The report's per-kind row: starts, null-handle, stops, null-stop, states.
std::vector<uint64_t> ReportRow(const std::string& report, const std::string& kind) {
  std::istringstream lines(report);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string first;
    if (!(words >> first) || first != kind) continue;
    std::vector<uint64_t> row;
    uint64_t value = 0;
    while (words >> value) row.push_back(value);
    if (row.size() == 5) return row;
  }
  return {};
}

int64_t Ns(const json& micros) { return llround(micros.get<double>() * 1000.0); }

// A track name "GPU comm <hash8> rank <r> ch <c> <send|recv> peer <p>", or one of its lanes
// ("... lane <n>", when steps of one connection overlap); fills the fields.
bool ParseStepTrack(const std::string& name, std::string* comm, int* rank, int* channel, bool* send,
                    int* peer) {
  char hash[9] = {}, direction[5] = {};
  int consumed = 0;
  if (std::sscanf(name.c_str(), "GPU comm %8[0-9a-f] rank %d ch %d %4s peer %d%n", hash, rank,
                  channel, direction, peer, &consumed) != 5 ||
      std::strlen(hash) != 8) {
    return false;
  }
  int lane = 0, lane_end = 0;
  const std::string rest = name.substr(static_cast<size_t>(consumed));
  if (!rest.empty() && (std::sscanf(rest.c_str(), " lane %d%n", &lane, &lane_end) != 1 ||
                        static_cast<size_t>(lane_end) != rest.size() || lane < 1)) {
    return false;
  }
  *comm = hash;
  *send = std::strcmp(direction, "send") == 0;
  return *send || std::strcmp(direction, "recv") == 0;
}

// What the trace says about KernelSteps, and every rule a step broke.
struct StepCheck {
  uint64_t slices = 0;
  uint64_t abandoned = 0;  // slices marked abandoned (their stop never came)
  uint64_t sends = 0;
  uint64_t under_p2p = 0;
  std::vector<std::string> problems;
};

StepCheck CheckKernelSteps(const json& trace, int num_ranks) {
  StepCheck check;
  std::map<std::pair<int64_t, int64_t>, std::string> track_names;
  std::map<uint64_t, json> tasks;                                    // Coll/P2p id -> event
  std::map<std::pair<uint64_t, int>, std::vector<json>> kernel_chs;  // (parent, channel) -> args
  std::map<uint64_t, std::pair<int, int>> halves;  // step id -> (wait, transfer) counts
  std::map<uint64_t, int64_t> half_tracks;
  for (const json& e : trace.at("traceEvents")) {
    const std::string ph = e.value("ph", "");
    if (ph == "M" && e.value("name", "") == "thread_name") {
      track_names[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}] = e["args"]["name"];
    }
    if (ph != "X") continue;
    const std::string cat = e.value("cat", "");
    const json& args = e["args"];
    if (cat == "Coll" || cat == "P2p") tasks[args["id"].get<uint64_t>()] = e;
    if (cat == "KernelCh" && args.contains("parent")) {
      kernel_chs[{args["parent"].get<uint64_t>(), args["channel"].get<int>()}].push_back(args);
    }
    if (cat == "KernelStepWait" || cat == "KernelStepTransfer") {
      uint64_t step = args["kernel_step"].get<uint64_t>();
      (cat == "KernelStepWait" ? halves[step].first : halves[step].second)++;
      half_tracks[step] = e["tid"].get<int64_t>();
    }
  }
  for (const json& e : katrace_test::Slices(trace, "KernelStep")) {
    ++check.slices;
    const json& a = e["args"];
    const std::string where = "KernelStep " + std::to_string(a["id"].get<uint64_t>()) + ": ";
    auto problem = [&](const std::string& what) { check.problems.push_back(where + what); };
    const int rank = a["rank"];
    const int channel = a["channel"];
    const bool send = a["send"];
    const int peer = a["peer"];
    check.sends += send;
    if (a.value("late", false)) problem("arrived after its parent completed");

    // Track: its own (comm, channel, direction, peer).
    const std::string track = track_names[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}];
    std::string track_comm;
    int track_rank = -1, track_channel = -1, track_peer = -1;
    bool track_send = false;
    if (!ParseStepTrack(track, &track_comm, &track_rank, &track_channel, &track_send,
                        &track_peer)) {
      problem("on track '" + track + "'");
    } else if (track_comm != a["comm"].get<std::string>().substr(0, 8) || track_rank != rank ||
               track_channel != channel || track_send != send || track_peer != peer) {
      problem("track '" + track + "' does not match its args " + a.dump());
    }

    // Parent: a Coll or P2p of the same rank, with the peer its role implies.
    if (!a.contains("parent") || !tasks.count(a["parent"].get<uint64_t>())) {
      problem("parent is no Coll/P2p id");
      continue;
    }
    const json& parent = tasks[a["parent"].get<uint64_t>()];
    const json& pa = parent["args"];
    if (pa["rank"] != rank || pa["comm"] != a["comm"]) problem("parent of another rank/comm");
    if (parent["cat"] == "P2p") {
      ++check.under_p2p;
      if ((pa["func"] == "Send") != send || pa["peer"] != peer) {
        problem("not the role of its P2p " + pa.dump());
      }
    } else {
      int expected = send ? (rank + 1) % num_ranks : (rank + num_ranks - 1) % num_ranks;
      if (peer != expected) problem("ring peer " + std::to_string(peer) + " is not the neighbour");
    }

    if (a.value("abandoned", false)) {
      ++check.abandoned;
      continue;
    }
    // Times: wait start, transfer start, stop, in that order; wait and transfer as two halves.
    const uint64_t start = a["gpu_start_ns"], ready = a["gpu_ready_ns"], stop = a["gpu_stop_ns"];
    if (start == 0 || !(start <= ready && ready <= stop)) problem("times out of order " + a.dump());
    const auto& half = halves[a["id"].get<uint64_t>()];
    if (half.first != 1 || half.second != 1 || half_tracks[a["id"].get<uint64_t>()] != e["tid"]) {
      problem("wait/transfer halves missing or elsewhere");
    }
    // Inside its parent's GPU extent (trace µs) and inside its KernelCh (raw globaltimer).
    const int64_t ts = Ns(e["ts"]), end = ts + Ns(e["dur"]);
    if (!pa.contains("gpu_start") || ts < Ns(pa["gpu_start"]) || end > Ns(pa["gpu_end"])) {
      problem("outside its parent's gpu_start..gpu_end");
    }
    bool inside = false;
    for (const json& ch : kernel_chs[{a["parent"].get<uint64_t>(), channel}]) {
      inside |=
          ch["gpu_start_ns"].get<uint64_t>() <= start && stop <= ch["gpu_stop_ns"].get<uint64_t>();
    }
    if (!inside) problem("outside its KernelCh window");
  }
  return check;
}

class SimKernelStepTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = katrace_test::MakeTempDir(); }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the sim with our plugin (writing its trace into the test's directory); fails the test on
  // a non-zero exit or a sanitizer report.
  void RunSim(std::vector<std::string> args) {
    trace_path_ = (fs::path(dir_) / "trace.json").string();
    args.insert(args.begin(), {"--plugin", katrace_test::PluginPath()});
    katrace_test::ProcessOutput run = katrace_test::RunProcess(
        katrace_test::ToolPath("katrace-sim"), args, {"KATRACE_OUTPUT=" + trace_path_}, dir_);
    report_ = run.out;
    const std::string& err = run.err;
    ASSERT_EQ(run.exit_code, 0) << err;
    EXPECT_EQ(err.find("ThreadSanitizer"), std::string::npos) << err;
    EXPECT_EQ(err.find("AddressSanitizer"), std::string::npos) << err;
    writers_ = ReportCounters(report_, "writers");
    drain_ = ReportCounters(report_, "drain");
  }

  // Loads and validates the trace, checks every KernelStep, and the counts that hold in every
  // run: the footer carries what the drain counted; every step read is a slice; every start
  // written was read or lost; every slice marked abandoned was abandoned or lost its stop.
  // Parses the trace; ValidateTrace and katrace-check must find nothing wrong with it.
  json LoadValidTrace() { return katrace_test::ExpectValidTrace(trace_path_); }

  StepCheck CheckTrace(int num_ranks) {
    json trace = LoadValidTrace();
    StepCheck check = CheckKernelSteps(trace, num_ranks);
    for (const std::string& p : check.problems) ADD_FAILURE() << p;
    const json& footer = katrace_test::Footer(trace);
    const json& drain = footer.at("drain");
    for (const katrace::DrainCounterField& f : katrace::kDrainCounterFields) {
      EXPECT_EQ(drain.at(f.name).get<uint64_t>(), drain_[f.name]) << f.name << "\n" << report_;
    }
    EXPECT_EQ(footer["events"]["KernelStep"].get<uint64_t>(), check.slices);
    EXPECT_EQ(footer["drops"]["KernelStep"].get<uint64_t>(), 0u);
    EXPECT_EQ(check.slices, drain_["seen"] - drain_["late"]);
    EXPECT_GE(check.abandoned, drain_["abandoned"]);
    const uint64_t lost_stops = check.abandoned - drain_["abandoned"];
    EXPECT_LE(lost_stops, drain_["lost_overrun"]);
    const uint64_t lost_starts = drain_["lost_overrun"] - lost_stops;
    EXPECT_EQ(writers_["starts"], check.slices + drain_["late"] + lost_starts) << report_;
    EXPECT_EQ(writers_["stops"], writers_["starts"]);
    EXPECT_EQ(writers_["steps"],
              writers_["starts"] + writers_["sampled_out"] + writers_["sampled_tail"]);
    // Every call the drain made is in the report's KernelStep row.
    std::vector<uint64_t> row = ReportRow(report_, "KernelStep");
    EXPECT_EQ(row, (std::vector<uint64_t>{check.slices, 0, check.slices, 0, check.slices}))
        << report_;
    EXPECT_GT(drain_["reports"], 0u);
    return check;
  }

  std::string dir_;
  std::string trace_path_;
  std::string report_;
  std::map<std::string, uint64_t> writers_;
  std::map<std::string, uint64_t> drain_;
};

TEST_F(SimKernelStepTest, DefaultLoadNestsEveryStepUnderItsCollOrP2pAndLosesNothing) {
  RunSim({});  // the sim's defaults: 4 ranks, 4 channels, 20 iterations of every op, 1 MiB
  ASSERT_FALSE(writers_.empty()) << report_;
  StepCheck check = CheckTrace(4);
  // Per iteration and rank: AllReduce 4 channels x 2 roles x 6 slices, AllGather and
  // ReduceScatter 4 x 2 x 3, SendRecv 2 channels x 2 roles x 1, AlltoAll 3 peers x 2 x 2 x 1.
  EXPECT_EQ(writers_["steps"], 20u * 4u * (48 + 24 + 24 + 4 + 12));
  EXPECT_EQ(check.slices, writers_["steps"]);
  EXPECT_EQ(drain_["lost_overrun"], 0u);
  EXPECT_EQ(drain_["abandoned"], 0u);
  EXPECT_EQ(drain_["sampled_out"], 0u);
  EXPECT_EQ(drain_["late"], 0u);
  EXPECT_EQ(check.abandoned, 0u);
  EXPECT_EQ(check.sends * 2, check.slices);
  EXPECT_EQ(check.under_p2p, 20u * 4u * (4 + 12));
}

TEST_F(SimKernelStepTest, SamplingEveryFourthSliceKeepsTheCountsExact) {
  RunSim({"--step-sample", "4", "--iters", "5"});
  StepCheck check = CheckTrace(4);
  // Rings of 6 slices keep slices 0 and 4: the drain counts 1-3 as sampled out, 5 is the tail.
  EXPECT_EQ(drain_["sampled_out"], writers_["sampled_out"]);
  EXPECT_GT(drain_["sampled_out"], 0u);
  EXPECT_GT(writers_["sampled_tail"], 0u);
  EXPECT_EQ(check.slices, writers_["steps"] - drain_["sampled_out"] - writers_["sampled_tail"]);
  EXPECT_EQ(drain_["lost_overrun"], 0u);
  EXPECT_EQ(check.abandoned, 0u);
}

TEST_F(SimKernelStepTest, TinyRingOverrunsAndTheCountsStillAddUp) {
  // Two slots per channel against bursts of a dozen records: most records are overwritten before
  // the drain reads them. Every one is counted, and a step whose stop was lost is marked.
  RunSim({"--ring-depth-log2", "1", "--ranks", "3", "--iters", "5"});
  StepCheck check = CheckTrace(3);
  EXPECT_GT(drain_["lost_overrun"], 0u);
  EXPECT_LT(check.slices, writers_["starts"]);
  EXPECT_EQ(drain_["late"], 0u);
}

TEST_F(SimKernelStepTest, GraphReplaysNestStepsUnderEachReplaysTasks) {
  RunSim({"--graph", "--ranks", "3", "--channels", "2", "--iters", "3", "--size", "256K"});
  StepCheck check = CheckTrace(3);
  EXPECT_GT(check.slices, 0u);
  EXPECT_EQ(check.slices, writers_["steps"]);
  EXPECT_EQ(drain_["lost_overrun"], 0u);
}

TEST_F(SimKernelStepTest, OffOrOlderAbiWritesNoStepsAndSaysWhy) {
  RunSim({"--kernel-steps", "off", "--iters", "2"});
  EXPECT_NE(report_.find("KernelStep: off (--kernel-steps off)"), std::string::npos) << report_;
  json trace = LoadValidTrace();
  EXPECT_TRUE(katrace_test::Slices(trace, "KernelStep").empty());
  EXPECT_FALSE(katrace_test::Slices(trace, "KernelCh").empty());

  RunSim({"--abi", "v5", "--iters", "2"});
  EXPECT_NE(report_.find("KernelStep: off: the plugin runs on ABI v5"), std::string::npos)
      << report_;
  trace = LoadValidTrace();
  EXPECT_TRUE(katrace_test::Slices(trace, "KernelStep").empty());
}

TEST(SimKernelStepOptionsTest, FlagsParseAndBadValuesFailClearly) {
  auto parse = [](std::vector<std::string> args, SimConfig* config, std::string* error) {
    std::vector<char*> argv = {const_cast<char*>("katrace-sim")};
    for (std::string& arg : args) argv.push_back(arg.data());
    return ParseCommandLine(static_cast<int>(argv.size()), argv.data(), "plugin.so", config, error);
  };
  SimConfig config;
  std::string error;
  EXPECT_TRUE(config.kernel_steps.enabled);
  EXPECT_EQ(config.kernel_steps.sample_every, 1u);
  EXPECT_FALSE(config.kernel_steps.ring_depth_log2.has_value());
  ASSERT_EQ(parse({"--kernel-steps", "off", "--step-sample=8", "--ring-depth-log2", "9"}, &config,
                  &error),
            ParseOutcome::kRun)
      << error;
  EXPECT_FALSE(config.kernel_steps.enabled);
  EXPECT_EQ(config.kernel_steps.sample_every, 8u);
  EXPECT_EQ(config.kernel_steps.ring_depth_log2.value_or(0), 9u);
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"--kernel-steps", "maybe"},
                                             {"--step-sample", "0"},
                                             {"--ring-depth-log2", "0"},
                                             {"--ring-depth-log2", "21"},
                                             {"--kernel-steps"}}) {
    SimConfig ignored;
    error.clear();
    EXPECT_EQ(parse(bad, &ignored, &error), ParseOutcome::kError) << bad[0];
    EXPECT_NE(error.find(bad[0]), std::string::npos) << error;
  }
}

TEST(SimKernelStepOptionsTest, RingDepthDefaultsToTheDrainsAndShrinksForHugeRuns) {
  EXPECT_EQ(ChooseStepRingDepthLog2(std::nullopt, 16), kStepRingDefaultDepthLog2);
  // 256 ranks x 64 channels at 640 KiB would pin 10 GiB; 2^10 slots (40 KiB) fit in 1 GiB.
  EXPECT_EQ(ChooseStepRingDepthLog2(std::nullopt, 256 * 64), 10u);
  EXPECT_LE(StepRingBytesPerChannel(10) * 256 * 64, kMaxDefaultStepRingBytes);
  EXPECT_EQ(ChooseStepRingDepthLog2(5u, 256 * 64), 5u);
  EXPECT_EQ(ChooseStepRingDepthLog2(40u, 1), kStepRingMaxDepthLog2);
}

}  // namespace
}  // namespace katrace::sim
