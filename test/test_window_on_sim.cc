// The capture window on katrace-sim runs: four ranks in one process, each with its own
// application and proxy threads, race at the window's edges. KATRACE_DELAY=Ncolls
// KATRACE_DURATION=Mcolls on a run of one collective per group must still hold exactly M
// collectives, each whole (its API events, launch, KernelCh per channel, ProxyOps and KernelSteps),
// and nothing of any other collective.
#include <stdint.h>

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/support/plugin_harness.h"
#include "test/support/plugin_test.h"
#include "test/support/subprocess.h"
#include "test/support/trace_validation.h"

namespace katrace_test {
namespace {

using nlohmann::json;

class WindowOnSim : public ::testing::Test {
 protected:
  json Simulate(const std::vector<std::string>& extra, const std::vector<std::string>& env) {
    const std::string trace = dir_ + "/window.json";
    std::vector<std::string> args = {"--plugin", PluginPath(), "--quiet", "--ranks", "4", "--ops", "allreduce",
                                     "--size", "4K"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<std::string> e = {"KATRACE_OUTPUT=" + trace};
    e.insert(e.end(), env.begin(), env.end());
    ProcessOutput run = RunProcess(ToolPath("katrace-sim"), args, e, dir_);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return ExpectValidTrace(trace);
  }

  // Exactly |colls| collectives, each with everything under it, and no event whose parent the
  // trace lacks (nothing from outside the window slipped in).
  static void ExpectExactWholeWindow(const json& trace, size_t colls, const char* root) {
    std::set<std::pair<int64_t, uint64_t>> ids;
    size_t channels = 0;
    for (const json& e : trace["traceEvents"]) {
      if (e["ph"] == "X" && e["args"].contains("id")) ids.insert({e["pid"].get<int64_t>(), e["args"]["id"].get<uint64_t>()});
    }
    for (const json& c : Slices(trace, "Coll")) channels += c["args"]["channels"].get<size_t>();
    for (const json& e : trace["traceEvents"]) {
      if (e["ph"] != "X" || !e["args"].contains("parent")) continue;
      EXPECT_EQ(ids.count({e["pid"].get<int64_t>(), e["args"]["parent"].get<uint64_t>()}), 1u)
          << "an event whose parent is not in the window: " << e.dump();
    }
    EXPECT_EQ(Slices(trace, "Coll").size(), colls);
    EXPECT_EQ(Slices(trace, root).size(), colls);
    EXPECT_EQ(Slices(trace, "KernelCh").size(), channels);
    EXPECT_GT(Slices(trace, "ProxyOp").size(), 0u);
    EXPECT_EQ(Footer(trace)["incomplete"].get<uint64_t>(), 0u);
    for (const auto& d : Footer(trace)["drops"].items()) EXPECT_EQ(d.value().get<uint64_t>(), 0u) << d.key();
    size_t on = 0, off = 0;
    for (const json& e : trace["traceEvents"]) {
      if (e["ph"] != "i" || e.value("cat", "") != "katrace") continue;
      on += e["name"] == "capture on" && e["args"]["reason"] == "KATRACE_DELAY";
      off += e["name"] == "capture off" && e["args"]["reason"] == "KATRACE_DURATION";
    }
    EXPECT_EQ(on, 1u);
    EXPECT_EQ(off, 1u);
  }

  std::string dir_ = MakeTempDir();
};

TEST_F(WindowOnSim, CollectiveCountWindowIsExactAndWholeAcrossRacingRanks) {
  const uint64_t iters = TestScaled(1000, 200);
  json trace = Simulate({"--iters", std::to_string(iters)},
                        {"KATRACE_DELAY=" + std::to_string(iters * 2) + "colls", "KATRACE_DURATION=150colls"});
  ExpectExactWholeWindow(trace, 150, "GroupApi");
  EXPECT_EQ(Slices(trace, "CollApi").size(), 150u);
  EXPECT_GT(Slices(trace, "KernelStep").size(), 0u);
}

// ABI v4 has no API events: the legacy Group is the root whose verdict its Colls inherit.
TEST_F(WindowOnSim, UnderAbiV4TheGroupIsTheRoot) {
  const uint64_t iters = TestScaled(1000, 200);
  json trace = Simulate({"--abi", "v4", "--iters", std::to_string(iters)},
                        {"KATRACE_DELAY=" + std::to_string(iters * 2) + "colls", "KATRACE_DURATION=150colls"});
  ExpectExactWholeWindow(trace, 150, "Group");
}

}  // namespace
}  // namespace katrace_test
