// katrace-sim: runs the real binary against the recording fixture plugin and checks NCCL's rules
// on what the plugin saw (parents, threads, order, states, handle lifetimes, masks, ABI
// translation), plus the CLI's errors and a few in-process pieces (parsers, the proxy poll hook).
#include <gtest/gtest.h>

#include "test/support/subprocess.h"
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "nccl_profiler/common.h"
#include "common/event_mask.h"
#include "tools/sim/event_mask.h"
#include "tools/sim/proxy_poll_hook.h"
#include "tools/sim/sim_options.h"
#include "tools/sim/simulation.h"
#include "tools/sim/work_counter_map.h"

namespace katrace::sim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path TestBinaryDir() { return fs::canonical("/proc/self/exe").parent_path(); }
std::string SimBinary() { return (TestBinaryDir() / ".." / "bin" / "katrace-sim").string(); }
std::string RecordingPlugin() {
  return (TestBinaryDir() / "libnccl-profiler-recording.so").string();
}
std::string NullPlugin() { return (TestBinaryDir() / "libnccl-profiler-null.so").string(); }

using RunOutput = katrace_test::ProcessOutput;

// One recorded call, plus what the log says about the handle it names.
struct Event {
  json start;
  int64_t start_seq = -1;
  std::vector<int64_t> stop_seqs;
  std::vector<json> states;
};

class RecordedLog {
 public:
  explicit RecordedLog(const std::vector<json>& lines) : lines_(lines) {
    for (const json& line : lines_) {
      const std::string call = line["call"];
      uint64_t handle = line.value("handle", uint64_t{0});
      if (call == "start" && handle != 0) {
        Event& event = events_[handle];
        event.start = line;
        event.start_seq = line["seq"];
      } else if (call == "stop" && events_.count(handle)) {
        events_[handle].stop_seqs.push_back(line["seq"]);
      } else if (call == "state" && events_.count(handle)) {
        events_[handle].states.push_back(line);
      }
    }
  }

  // The call made on the same thread right before |seq|, or nullptr.
  const json* PreviousOnThread(int64_t seq) const {
    const json* previous = nullptr;
    int64_t tid = -1;
    for (const json& line : lines_) {
      if (line["seq"] == seq) tid = line["tid"];
    }
    for (const json& line : lines_) {
      if (line["seq"].get<int64_t>() >= seq) break;
      if (line["tid"] == tid) previous = &line;
    }
    return previous;
  }

  const std::vector<json>& lines() const { return lines_; }
  const std::map<uint64_t, Event>& events() const { return events_; }
  const Event* Find(uint64_t handle) const {
    auto found = events_.find(handle);
    return found == events_.end() ? nullptr : &found->second;
  }
  std::string TypeOf(uint64_t handle) const {
    const Event* event = Find(handle);
    return event == nullptr ? "" : event->start["type"].get<std::string>();
  }
  std::vector<json> Starts(const std::string& type) const {
    std::vector<json> starts;
    for (const json& line : lines_) {
      if (line["call"] == "start" && line["type"] == type) starts.push_back(line);
    }
    return starts;
  }
  size_t Count(const std::string& call) const {
    size_t count = 0;
    for (const json& line : lines_) count += line["call"] == call;
    return count;
  }

 private:
  std::vector<json> lines_;
  std::map<uint64_t, Event> events_;
};

class SimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "katrace-sim-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  RunOutput RunSim(const std::vector<std::string>& args,
                   const std::vector<std::string>& env = {}) {
    return katrace_test::RunProcess(SimBinary(), args, env, dir_.string());
  }

  // Runs the sim with the recording plugin and returns the plugin's log.
  RecordedLog RunRecorded(std::vector<std::string> args, std::vector<std::string> env = {}) {
    fs::path log_path = dir_ / "recording.jsonl";
    env.push_back("RECORDING_PLUGIN_LOG=" + log_path.string());
    args.insert(args.begin(), {"--plugin", RecordingPlugin(), "--quiet"});
    last_run_ = RunSim(args, env);
    EXPECT_EQ(last_run_.exit_code, 0) << last_run_.err;
    EXPECT_EQ(last_run_.err.find("ThreadSanitizer"), std::string::npos) << last_run_.err;
    std::vector<json> lines;
    std::ifstream in(log_path);
    std::string text;
    while (std::getline(in, text)) lines.push_back(json::parse(text));
    EXPECT_FALSE(lines.empty()) << "no log from the recording plugin; stderr: " << last_run_.err;
    return RecordedLog(lines);
  }

  fs::path dir_;
  RunOutput last_run_;
};

bool ThreadIs(const json& line, const std::string& role) {
  std::string expected = "sim-" + role + "-" + std::to_string(line["ctx_rank"].get<int>());
  return line["thread"] == expected;
}

// 3 ranks, 2 iterations of every op: 3 collectives and 2 P2p ops per iteration.
const std::vector<std::string> kSmallRun = {"--ranks", "3", "--channels", "2", "--iters", "2",
                                            "--size",  "64K"};

TEST_F(SimTest, CollParentIsCollApiUnderTheSameRanksGroupApi) {
  RecordedLog log = RunRecorded(kSmallRun);
  std::vector<json> colls = log.Starts("Coll");
  ASSERT_EQ(colls.size(), 3u * 2u * 3u);
  for (const json& coll : colls) {
    int rank = coll["ctx_rank"];
    EXPECT_EQ(coll["desc_rank"], rank);
    const Event* api = log.Find(coll["parent"]);
    ASSERT_NE(api, nullptr) << coll.dump();
    EXPECT_EQ(api->start["type"], "CollApi");
    EXPECT_EQ(api->start["ctx_rank"], rank);
    EXPECT_EQ(api->start["func"], coll["func"]);
    const Event* group_api = log.Find(api->start["parent"]);
    ASSERT_NE(group_api, nullptr);
    EXPECT_EQ(group_api->start["type"], "GroupApi");
    EXPECT_EQ(group_api->start["ctx_rank"], rank);
    EXPECT_EQ(log.TypeOf(coll["parent_group"]), "Group");
    EXPECT_EQ(coll["algo"], "RING");
    EXPECT_EQ(coll["proto"], "SIMPLE");
    if (coll["func"] == "AllGather") {
      // NCCL counts AllGather tasks in bytes: count = sendcount * 4 as ncclInt8.
      EXPECT_EQ(coll["datatype"], "ncclInt8");
      EXPECT_EQ(coll["count"].get<uint64_t>(), api->start["count"].get<uint64_t>() * 4);
    } else {
      EXPECT_EQ(coll["count"], api->start["count"]);
    }
  }
  for (const json& p2p : log.Starts("P2p")) {
    EXPECT_EQ(log.TypeOf(p2p["parent"]), "P2pApi");
    EXPECT_EQ(log.TypeOf(p2p["parent_group"]), "Group");
  }
  for (const json& launch : log.Starts("KernelLaunch")) {
    EXPECT_EQ(log.TypeOf(launch["parent"]), "GroupApi");
  }
}

TEST_F(SimTest, SeqNumberCountsPerRankAndFunction) {
  RecordedLog log = RunRecorded(kSmallRun);
  std::map<std::pair<int, std::string>, uint64_t> next;
  for (const json& coll : log.Starts("Coll")) {
    auto key = std::make_pair(coll["ctx_rank"].get<int>(), coll["func"].get<std::string>());
    EXPECT_EQ(coll["seq_number"].get<uint64_t>(), next[key]++) << coll.dump();
  }
}

TEST_F(SimTest, CollStopPrecedesItsKernelChAndProxyOpStarts) {
  RecordedLog log = RunRecorded(kSmallRun);
  size_t children = 0;
  for (const std::string type : {"KernelCh", "ProxyOp"}) {
    for (const json& child : log.Starts(type)) {
      const Event* task = log.Find(child["parent"]);
      ASSERT_NE(task, nullptr) << child.dump();
      std::string task_type = task->start["type"];
      EXPECT_TRUE(task_type == "Coll" || task_type == "P2p") << task_type;
      ASSERT_EQ(task->stop_seqs.size(), 1u);
      EXPECT_LT(task->stop_seqs[0], child["seq"].get<int64_t>()) << child.dump();
      ++children;
    }
  }
  EXPECT_GT(children, 0u);
  // KernelLaunch brackets the kernel launch; hostStreamPlanTask's Group starts right after.
  for (const json& group : log.Starts("Group")) {
    const json* previous = log.PreviousOnThread(group["seq"]);
    ASSERT_NE(previous, nullptr);
    EXPECT_EQ((*previous)["call"], "stop");
    EXPECT_EQ((*previous)["type"], "KernelLaunch");
  }
}

TEST_F(SimTest, ApiAndTaskEventsComeFromTheAppThreadProxyEventsFromTheProxyThread) {
  RecordedLog log = RunRecorded(kSmallRun);
  for (const json& line : log.lines()) {
    if (line["call"] != "start") continue;
    std::string type = line["type"];
    if (type == "GroupApi" || type == "CollApi" || type == "P2pApi" || type == "KernelLaunch" ||
        type == "Group" || type == "Coll" || type == "P2p") {
      EXPECT_TRUE(ThreadIs(line, "app")) << line.dump();
    } else {
      EXPECT_TRUE(ThreadIs(line, "proxy")) << line.dump();
    }
  }
  for (const json& line : log.lines()) {
    if (line["call"] == "init" || line["call"] == "finalize") {
      int rank = line.value("rank", line.value("ctx_rank", -1));
      std::string expected = "sim-app-" + std::to_string(rank);
      EXPECT_EQ(line["thread"], expected);
    }
  }
}

TEST_F(SimTest, StatesAreTheOnesNcclRecordsForEachType) {
  RecordedLog log = RunRecorded(kSmallRun);
  const std::map<std::string, std::set<int>> allowed = {
      {"GroupApi", {23, 24}},
      {"ProxyOp", {19}},
      {"ProxyStep", {8, 9, 10, 11, 12, 20}},
      {"ProxyCtrl", {13, 14, 15, 16, 17, 18}},
      {"KernelCh", {22}},
  };
  size_t repeated_peer_waits = 0;
  for (const auto& [handle, event] : log.events()) {
    std::string type = event.start["type"];
    for (const json& state : event.states) {
      int value = state["state"];
      ASSERT_TRUE(allowed.count(type)) << type << " got state " << value;
      EXPECT_TRUE(allowed.at(type).count(value)) << type << " got state " << value;
      EXPECT_EQ(state["args_null"].get<bool>(), type == "GroupApi") << state.dump();
      EXPECT_FALSE(state["after_stop"].get<bool>()) << state.dump();
    }
    if (type == "GroupApi") {
      ASSERT_EQ(event.states.size(), 2u);
      EXPECT_EQ(event.states[0]["state"], 23);
      EXPECT_EQ(event.states[1]["state"], 24);
    }
    if (type == "KernelCh") {
      ASSERT_EQ(event.states.size(), 1u);
      uint64_t start_ns = event.start["p_timer"];
      uint64_t stop_ns = event.states[0]["p_timer"];
      EXPECT_GT(stop_ns, start_ns);
      EXPECT_EQ(start_ns % 1024, 0u);
      EXPECT_EQ(stop_ns % 1024, 0u);
      // KernelChStop is followed at once, on the same thread, by the stop.
      const json* before_stop = log.PreviousOnThread(event.stop_seqs.at(0));
      ASSERT_NE(before_stop, nullptr);
      EXPECT_EQ((*before_stop)["seq"], event.states[0]["seq"]);
    }
    if (type == "ProxyStep") {
      const Event* op = log.Find(event.start["parent"]);
      ASSERT_NE(op, nullptr);
      std::vector<int> sequence;
      for (const json& state : event.states) sequence.push_back(state["state"]);
      if (op->start["is_send"] == 1) {
        ASSERT_GE(sequence.size(), 3u);
        EXPECT_EQ(sequence.front(), 8);
        EXPECT_EQ(sequence.back(), 9);
        for (size_t i = 1; i + 1 < sequence.size(); ++i) EXPECT_EQ(sequence[i], 20);
        if (sequence.size() > 3) ++repeated_peer_waits;
      } else {
        EXPECT_EQ(sequence, (std::vector<int>{10, 11, 12}));
      }
    }
  }
  EXPECT_GT(repeated_peer_waits, 0u) << "SendPeerWait is never repeated";
}

TEST_F(SimTest, EveryStartedHandleIsStoppedExactlyOnce) {
  RecordedLog log = RunRecorded(kSmallRun);
  for (const auto& [handle, event] : log.events()) {
    EXPECT_EQ(event.stop_seqs.size(), 1u) << event.start.dump();
  }
  for (const json& line : log.lines()) {
    if (line["call"] == "stop" || line["call"] == "state") {
      EXPECT_TRUE(line["known"].get<bool>()) << line.dump();
      EXPECT_NE(line["handle"], 0) << line.dump();
    }
    if (line["call"] == "stop") {
      EXPECT_FALSE(line["double_stop"].get<bool>()) << line.dump();
    }
  }
  EXPECT_EQ(log.Count("init"), 3u);
  EXPECT_EQ(log.Count("finalize"), 3u);
}

TEST_F(SimTest, EventCountsFollowRanksItersAndOps) {
  RecordedLog log = RunRecorded(kSmallRun);
  const size_t ranks = 3, iters = 2;
  EXPECT_EQ(log.Starts("Coll").size(), ranks * iters * 3);
  // Send/Recv: 2 tasks; AlltoAll: a Send and a Recv per other rank.
  EXPECT_EQ(log.Starts("P2p").size(), ranks * iters * (2 + 2 * (ranks - 1)));
  EXPECT_EQ(log.Starts("GroupApi").size(), ranks * iters * 5);
  EXPECT_EQ(log.Starts("Group").size(), ranks * iters * 5);
  EXPECT_EQ(log.Starts("KernelLaunch").size(), ranks * iters * 5);
  for (const json& group_api : log.Starts("GroupApi")) {
    EXPECT_FALSE(group_api["graph_captured"].get<bool>());
    int depth = group_api["group_depth"];
    EXPECT_TRUE(depth == 1 || depth == 2);
  }
  // One KernelCh per task and channel it runs on.
  size_t expected_kernel_ch = 0;
  for (const std::string type : {"Coll", "P2p"}) {
    for (const json& task : log.Starts(type)) expected_kernel_ch += task["n_channels"].get<int>();
  }
  EXPECT_EQ(log.Starts("KernelCh").size(), expected_kernel_ch);
  std::set<int> pids;
  for (const json& op : log.Starts("ProxyOp")) pids.insert(op["pid"].get<int>());
  EXPECT_EQ(pids.size(), 1u);
  EXPECT_GT(*pids.begin(), 0);
  EXPECT_FALSE(log.Starts("NetPlugin").empty());
  for (const json& net : log.Starts("NetPlugin")) {
    EXPECT_EQ(log.TypeOf(net["parent"]), "ProxyStep");
    EXPECT_EQ(net["net_id"], (2 << 16) | 1);
  }
}

TEST_F(SimTest, KernelChOnlyMaskStillStartsImpliedParentsButNoProxySteps) {
  RecordedLog log = RunRecorded(
      {"--ranks", "2", "--channels", "2", "--iters", "2", "--size", "64K", "--mask", "kernelch"});
  EXPECT_EQ(log.Starts("Coll").size(), 2u * 2u * 3u);
  EXPECT_FALSE(log.Starts("CollApi").empty());
  EXPECT_FALSE(log.Starts("GroupApi").empty());
  EXPECT_FALSE(log.Starts("Group").empty());
  EXPECT_FALSE(log.Starts("KernelCh").empty());
  for (const json& coll : log.Starts("Coll")) EXPECT_EQ(log.TypeOf(coll["parent"]), "CollApi");
  for (const json& kernel_ch : log.Starts("KernelCh")) {
    std::string parent = log.TypeOf(kernel_ch["parent"]);
    EXPECT_TRUE(parent == "Coll" || parent == "P2p") << parent;
  }
  for (const std::string type :
       {"ProxyOp", "ProxyStep", "ProxyCtrl", "NetPlugin", "KernelLaunch"}) {
    EXPECT_TRUE(log.Starts(type).empty()) << type;
  }
}

// katrace takes its mask from KATRACE_MASK (or its default) at init, over the one NCCL passes, so
// --mask reaches it through KATRACE_MASK, and --quiet silences its summary; a setting the user
// made stays theirs.
std::vector<json> InitLines(const RecordedLog& log) {
  std::vector<json> inits;
  for (const json& line : log.lines()) {
    if (line["call"] == "init") inits.push_back(line);
  }
  EXPECT_FALSE(inits.empty());
  return inits;
}

TEST_F(SimTest, MaskAndQuietArePassedOnTheWayKatraceReadsThem) {
  const std::vector<std::string> run = {"--ranks", "2", "--channels", "1", "--iters", "1",
                                        "--size", "4K", "--bench"};
  std::vector<std::string> with_mask = run;
  with_mask.insert(with_mask.end(), {"--mask", "coll,kernelch"});
  for (const json& init : InitLines(RunRecorded(with_mask))) {
    EXPECT_EQ(init["env_katrace_mask"], std::to_string(init["mask"].get<int>())) << init;
    EXPECT_EQ(init["env_katrace_summary"], "0") << init;  // RunRecorded passes --quiet
  }
  for (const json& init : InitLines(RunRecorded(with_mask, {"KATRACE_MASK=0x1",
                                                            "KATRACE_SUMMARY=1"}))) {
    EXPECT_EQ(init["env_katrace_mask"], "0x1") << init;
    EXPECT_EQ(init["env_katrace_summary"], "1") << init;
  }
  for (const json& init : InitLines(RunRecorded(run))) {
    EXPECT_EQ(init["env_katrace_mask"], "(null)") << init;
  }
}

TEST_F(SimTest, ReportSaysWhenThePluginReplacedTheMask) {
  const std::vector<std::string> args = {"--plugin", RecordingPlugin(), "--ranks", "2",
                                         "--iters", "1", "--size", "4K", "--bench",
                                         "--mask", "coll"};
  RunOutput replaced = RunSim(args, {"RECORDING_PLUGIN_MASK=0x4",
                                     "RECORDING_PLUGIN_LOG=" + (dir_ / "r.jsonl").string()});
  ASSERT_EQ(replaced.exit_code, 0) << replaced.err;
  EXPECT_NE(replaced.out.find("note: the plugin replaced --mask 0x2 at init"), std::string::npos)
      << replaced.out;
  RunOutput kept = RunSim(args, {"RECORDING_PLUGIN_LOG=" + (dir_ / "k.jsonl").string()});
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_EQ(kept.out.find("note: the plugin replaced"), std::string::npos) << kept.out;
}

TEST_F(SimTest, ForcedV4SeesNoApiEventsAndCollParentIsGroup) {
  RecordedLog log = RunRecorded({"--ranks", "2", "--channels", "2", "--iters", "1", "--size",
                                 "64K", "--abi", "v4"});
  for (const json& line : log.lines()) EXPECT_EQ(line["abi"], 4) << line.dump();
  for (const std::string type : {"GroupApi", "CollApi", "P2pApi", "KernelLaunch"}) {
    EXPECT_TRUE(log.Starts(type).empty()) << type;
  }
  ASSERT_FALSE(log.Starts("Coll").empty());
  for (const std::string type : {"Coll", "P2p"}) {
    for (const json& task : log.Starts(type)) {
      EXPECT_EQ(log.TypeOf(task["parent"]), "Group") << task.dump();
      EXPECT_FALSE(task.contains("parent_group"));
    }
  }
  for (const json& line : log.lines()) {
    if (line["call"] == "state") {
      EXPECT_LT(line["state"].get<int>(), 23) << line.dump();
    }
  }
}

TEST_F(SimTest, ForcedV5KeepsApiEventsAndClearsCopyEngineBits) {
  RecordedLog log = RunRecorded({"--ranks", "2", "--channels", "2", "--iters", "1", "--size",
                                 "64K", "--abi", "v5", "--mask", "0x7fff"});
  for (const json& line : log.lines()) EXPECT_EQ(line["abi"], 5) << line.dump();
  EXPECT_FALSE(log.Starts("GroupApi").empty());
  EXPECT_FALSE(log.Starts("CollApi").empty());
  for (const json& coll : log.Starts("Coll")) EXPECT_EQ(log.TypeOf(coll["parent"]), "CollApi");
  for (const json& line : log.lines()) {
    if (line["call"] == "finalize") {
      EXPECT_EQ(line["mask"], 0xFFF);
    }
    // NCCL's v5 adapter hands the plugin its local (non-NULL) args even for GroupApi states.
    if (line["call"] == "state") {
      EXPECT_FALSE(line["args_null"].get<bool>());
    }
  }
}

TEST_F(SimTest, GraphReplaysReemitTasksUnderTheCapturedApiHandles) {
  const size_t ranks = 2, iters = 3;
  RecordedLog log = RunRecorded({"--ranks", "2", "--channels", "2", "--iters", "3", "--size",
                                 "64K", "--graph", "--ops", "allreduce,allgather,sendrecv"});
  std::vector<json> coll_apis = log.Starts("CollApi");
  ASSERT_EQ(coll_apis.size(), ranks * 2);
  for (const json& api : coll_apis) EXPECT_TRUE(api["graph_captured"].get<bool>());
  std::vector<json> colls = log.Starts("Coll");
  ASSERT_EQ(colls.size(), ranks * iters * 2);
  for (const json& coll : colls) {
    const Event* api = log.Find(coll["parent"]);
    ASSERT_NE(api, nullptr);
    EXPECT_EQ(api->start["type"], "CollApi");
    EXPECT_TRUE(api->start["graph_captured"].get<bool>());
    EXPECT_LT(api->stop_seqs.at(0), coll["seq"].get<int64_t>());  // stopped at capture time
    EXPECT_TRUE(ThreadIs(coll, "hostcb")) << coll.dump();
  }
  EXPECT_EQ(log.Starts("P2p").size(), ranks * iters * 2);
  for (const json& group : log.Starts("Group")) EXPECT_TRUE(ThreadIs(group, "hostcb"));
  for (const json& api : log.Starts("GroupApi")) EXPECT_TRUE(ThreadIs(api, "app"));
}

TEST_F(SimTest, NcclQuirksReplayNullNetPluginStopsAndTheStaleCollApiStop) {
  // Everything but NetPlugin: the net plugin's stop path then passes NULL.
  RecordedLog log = RunRecorded({"--ranks", "2", "--channels", "2", "--iters", "1", "--size",
                                 "64K", "--nccl-quirks", "--mask", "0x7f7f"});
  size_t null_stops = 0, double_stops = 0;
  for (const json& line : log.lines()) {
    if (line["call"] != "stop") continue;
    null_stops += line["handle"] == 0;
    if (line["double_stop"].get<bool>()) {
      EXPECT_EQ(line["type"], "CollApi");
      ++double_stops;
    }
  }
  EXPECT_GT(null_stops, 0u);
  EXPECT_EQ(double_stops, 2u);  // one per rank
}

TEST_F(SimTest, NullHandlesAreNeverStoppedOrRecorded) {
  int null_types = ncclProfileColl | ncclProfileProxyStep;
  RecordedLog log = RunRecorded(kSmallRun,
                                {"RECORDING_PLUGIN_NULL_TYPES=" + std::to_string(null_types)});
  for (const json& line : log.lines()) {
    if (line["call"] == "stop" || line["call"] == "state") {
      EXPECT_NE(line["handle"], 0) << line.dump();
    }
  }
  // Children of an unrecorded Coll get a NULL parent; ProxySteps are still started.
  size_t null_parents = 0;
  for (const json& kernel_ch : log.Starts("KernelCh")) null_parents += kernel_ch["parent"] == 0;
  EXPECT_GT(null_parents, 0u);
  EXPECT_FALSE(log.Starts("ProxyStep").empty());
}

TEST_F(SimTest, MissingPluginFailsWithAClearError) {
  RunOutput run = RunSim({"--plugin", (dir_ / "no-such-plugin.so").string()});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("cannot open plugin"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("no-such-plugin.so"), std::string::npos) << run.err;
}

TEST_F(SimTest, LibraryWithoutProfilerSymbolsIsNotAPlugin) {
  RunOutput run = RunSim({"--plugin", "libm.so.6"});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("is not an NCCL profiler plugin"), std::string::npos) << run.err;
}

TEST_F(SimTest, ForcedVersionTheLibraryLacksFails) {
  RunOutput run = RunSim({"--plugin", NullPlugin(), "--abi", "v4"});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("does not export ncclProfiler_v4"), std::string::npos) << run.err;
}

TEST_F(SimTest, BadArgumentsFailWithAClearError) {
  const std::vector<std::vector<std::string>> bad = {
      {"--ranks", "0"},  {"--ranks", "x"},        {"--size", "12Q"}, {"--ops", "allreduce,foo"},
      {"--abi", "v9"},   {"--mask", "bogus"},     {"--frobnicate"},  {"--iters"},
      {"--channels", "65"}, {"--graph=yes"},
  };
  for (const std::vector<std::string>& args : bad) {
    RunOutput run = RunSim(args);
    EXPECT_EQ(run.exit_code, 2) << args[0];
    EXPECT_EQ(run.err.rfind("katrace-sim: ", 0), 0u) << run.err;
    EXPECT_TRUE(run.out.empty());
  }
  RunOutput help = RunSim({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--plugin PATH"), std::string::npos);
}

TEST_F(SimTest, ReportShowsRatesAndTheTraceLocation) {
  RunOutput run = RunSim({"--plugin", NullPlugin(), "--bench", "--iters", "20", "--size", "64K"},
                         {"KATRACE_OUTPUT=/some/trace.json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("plugin \"null\" (ABI v6)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("callbacks/s"), std::string::npos);
  EXPECT_NE(run.out.find("ns per callback"), std::string::npos);
  EXPECT_NE(run.out.find("trace (KATRACE_OUTPUT): /some/trace.json"), std::string::npos);
  RunOutput quiet = RunSim({"--plugin", NullPlugin(), "--bench", "--iters", "1", "--quiet"});
  EXPECT_EQ(quiet.exit_code, 0);
  EXPECT_TRUE(quiet.out.empty());
}

TEST_F(SimTest, LoggerHonoursNcclDebug) {
  RunOutput info = RunSim({"--plugin", NullPlugin(), "--bench", "--iters", "1", "--quiet"},
                          {"NCCL_DEBUG=INFO"});
  ASSERT_EQ(info.exit_code, 0);
  EXPECT_NE(info.err.find(" NCCL INFO PROFILER/Plugin: Loaded null (v6)"), std::string::npos)
      << info.err;
  RunOutput warn = RunSim({"--plugin", NullPlugin(), "--bench", "--iters", "1", "--quiet"},
                          {"NCCL_DEBUG=WARN"});
  ASSERT_EQ(warn.exit_code, 0);
  EXPECT_EQ(warn.err.find("NCCL INFO"), std::string::npos) << warn.err;
}

// Regression: with NCCL_DEBUG unset the sim showed the plugin's warnings through its logger,
// which NCCL does not, and the plugin (rightly) printed them too: each appeared twice. And with
// NCCL_DEBUG set to a level that shows no warnings (empty, NONE) katrace printed none at all.
TEST_F(SimTest, APluginWarningIsShownOnceWhateverNcclDebugSays) {
  const std::string katrace = (TestBinaryDir() / ".." / "libnccl-profiler-katrace.so").string();
  for (const char* debug : {"NCCL_DEBUG=", "NCCL_DEBUG=NONE", "NCCL_DEBUG=WARN", "NCCL_DEBUG=INFO"}) {
    RunOutput run = RunSim({"--plugin", katrace, "--ranks", "2", "--iters", "1", "--quiet"},
                           {debug, "KATRACE_POOL_SIZE=lots", "KATRACE_OUTPUT=" + (dir_ / "t.json").string()});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    size_t shown = 0;
    for (size_t at = 0; (at = run.err.find("KATRACE_POOL_SIZE='lots'", at)) != std::string::npos; ++at) ++shown;
    EXPECT_EQ(shown, 1u) << debug << "\n" << run.err;
  }
}

TEST(SimOptionsTest, ByteSizesTakeBinarySuffixes) {
  EXPECT_EQ(ParseByteSize("4096"), 4096u);
  EXPECT_EQ(ParseByteSize("64K"), 64u << 10);
  EXPECT_EQ(ParseByteSize("1M"), 1u << 20);
  EXPECT_EQ(ParseByteSize("2MiB"), 2u << 20);
  EXPECT_EQ(ParseByteSize("1g"), 1u << 30);
  EXPECT_FALSE(ParseByteSize("1.5M"));
  EXPECT_FALSE(ParseByteSize("M"));
  EXPECT_FALSE(ParseByteSize("12Q"));
}

// --mask is the plugin's grammar (common/event_mask.h): `all` includes KernelStep there too.
TEST(SimOptionsTest, MasksTakeNumbersAndNames) {
  auto parse = [](const std::string& text) -> std::optional<int> {
    SimConfig config;
    std::string error;
    std::vector<std::string> args = {"katrace-sim", "--mask", text};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    if (ParseCommandLine(static_cast<int>(argv.size()), argv.data(), "x.so", &config, &error) !=
        ParseOutcome::kRun) {
      EXPECT_NE(error.find(text), std::string::npos) << error;
      return std::nullopt;
    }
    return config.mask;
  };
  EXPECT_EQ(parse("coll,kernelch"), ncclProfileColl | ncclProfileKernelCh);
  EXPECT_EQ(parse("0x7fff"), 0x7FFF);
  EXPECT_EQ(parse("4095"), 4095);
  EXPECT_EQ(parse("all"), 0x7FFF | ncclProfileKernelStep);
  EXPECT_EQ(parse("all,-kernelstep"), 0x7FFF);
  EXPECT_EQ(parse("KernelCh, ProxyStep"), ncclProfileKernelCh | ncclProfileProxyStep);
  EXPECT_EQ(parse("default"), katrace::kDefaultMask);
  EXPECT_FALSE(parse("coll,bogus"));
}

// Regression: --bandwidth 1e-300 overflowed the emulated times and "finished" at once.
TEST(SimOptionsTest, BandwidthIsBoundedToWhatTheEmulatedClockCanHold) {
  auto parse = [](const std::string& text, std::string* error) {
    SimConfig config;
    std::vector<std::string> args = {"katrace-sim", "--bandwidth", text};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return ParseCommandLine(static_cast<int>(argv.size()), argv.data(), "x.so", &config, error);
  };
  std::string error;
  EXPECT_EQ(parse("0.5", &error), ParseOutcome::kRun) << error;
  EXPECT_EQ(parse("1e-300", &error), ParseOutcome::kError);
  EXPECT_NE(error.find("from 0.001 to 1000000"), std::string::npos) << error;
  EXPECT_EQ(parse("0", &error), ParseOutcome::kError);
}

TEST(WorkCounterMapTest, FindsRecentWorkAndForgetsOldWork) {
  WorkCounterMap map;
  int handle = 0;
  for (uint64_t wc = 1; wc <= WorkCounterMap::kHistoryPerChannel + 10; ++wc) {
    WorkRecord record;
    record.channel = 3;
    record.work_counter = wc;
    record.task_handles[0] = &handle;
    record.num_tasks = 1;
    map.Add(record);
  }
  EXPECT_EQ(map.Find(3, 5), nullptr);
  ASSERT_NE(map.Find(3, WorkCounterMap::kHistoryPerChannel + 10), nullptr);
  EXPECT_EQ(map.Find(2, WorkCounterMap::kHistoryPerChannel + 10), nullptr);
  EXPECT_EQ(map.size(), WorkCounterMap::kHistoryPerChannel);
}

// The seam for KernelStep emission: a hook sees every proxy pass and can resolve each
// (channel, work counter) to its task handle.
class CountingHook : public ProxyPollHook {
 public:
  explicit CountingHook(std::atomic<uint64_t>* polls, std::atomic<uint64_t>* resolved)
      : polls_(polls), resolved_(resolved) {}
  bool OnProxyPoll(const ProxyPollContext& context) override {
    polls_->fetch_add(1, std::memory_order_relaxed);
    for (int channel = 0; channel < 2; ++channel) {
      while (const WorkRecord* record = context.works->Find(channel, next_[channel] + 1)) {
        if (record->num_tasks > 0 && record->task_handles[0] != nullptr) {
          resolved_->fetch_add(1, std::memory_order_relaxed);
        }
        ++next_[channel];
      }
    }
    return false;
  }

 private:
  std::atomic<uint64_t>* polls_;
  std::atomic<uint64_t>* resolved_;
  uint64_t next_[2] = {0, 0};
};

TEST(ProxyPollHookTest, HookSeesEveryRanksWorkCounters) {
  std::atomic<uint64_t> polls{0}, resolved{0};
  SimConfig config;
  config.plugin_path = NullPlugin();
  config.num_ranks = 2;
  config.num_channels = 2;
  config.iters = 3;
  config.size_bytes = 64 << 10;
  config.ops = {OpKind::kAllReduce};
  config.bench = true;
  config.proxy_poll_hook_factory = [&](int) {
    return std::make_unique<CountingHook>(&polls, &resolved);
  };
  SimResult result;
  std::string error;
  ASSERT_TRUE(RunSimulation(config, &result, &error)) << error;
  EXPECT_GT(polls.load(), 0u);
  // 64 KiB over 2 channels: each AllReduce runs on both channels of both ranks.
  EXPECT_EQ(resolved.load(), 2u * 3u * 2u);
  const KindCounters& coll = result.counters.kinds[EventKindIndex(ncclProfileColl)];
  EXPECT_EQ(coll.starts, 2u * 3u);
  EXPECT_EQ(coll.null_handles, 0u);
}

}  // namespace
}  // namespace katrace::sim
