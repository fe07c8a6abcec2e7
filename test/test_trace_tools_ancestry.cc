// katrace-check's "containment means ancestry" rule on hand-made traces: on GPU and proxy tracks
// a slice inside another must descend from it by the parent ids (followed up the chain; a
// CollGpu stands for its Coll, a sub-slice for its event); an unrelated enclosure is an error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "test/support/subprocess.h"
#include "test/support/tool_runner.h"

namespace katrace::tools {
namespace {

namespace fs = std::filesystem;
using katrace_test::ReadWholeFile;
using katrace_test::RunTool;
using katrace_test::TestDataDir;
using katrace_test::ToolResult;

// valid_rank0.json with |extra| events (one per line, each ending in ",\n") before its first
// slice, checked by katrace-check.
ToolResult CheckWith(const std::string& name, const std::string& extra) {
  std::string text = ReadWholeFile(TestDataDir() / "valid_rank0.json");
  size_t at = text.find("{\"name\":\"Send\",\"cat\":\"KernelStep\"");
  EXPECT_NE(at, std::string::npos) << "test/data/valid_rank0.json changed";
  text.insert(at, extra);
  fs::path dir = fs::temp_directory_path() / ("katrace-ancestry-" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path path = dir / name;
  std::ofstream(path) << text;
  ToolResult c = RunTool("katrace-check", path.string());
  fs::remove_all(dir);
  return c;
}

TEST(CheckAncestry, TheHandMadeTraceHoldsOnlyItsOwnEnclosures) {
  ToolResult c = CheckWith("valid.json", "");
  EXPECT_EQ(c.exit_code, 0) << c.output;
  EXPECT_EQ(c.output.find("[ancestry]"), std::string::npos) << c.output;
}

TEST(CheckAncestry, ADescendantDownTheChainMayLieInside) {
  // KernelStep 7 (parent KernelCh 6, whose parent is Coll 3) inside Coll 3's GPU extent.
  ToolResult c = CheckWith(
      "chain.json",
      "{\"name\":\"Send\",\"cat\":\"KernelStep\",\"ph\":\"X\",\"pid\":0,\"tid\":2,\"ts\":41.000,\"dur\":1.000,"
      "\"args\":{\"id\":7,\"parent\":6,\"comm\":\"9a3c0f1e12345678\",\"rank\":0,\"channel\":0,\"send\":true,"
      "\"peer\":1,\"step\":1,\"size\":1024,\"gpu_start_ns\":5000041000,\"gpu_ready_ns\":5000041000,"
      "\"gpu_stop_ns\":5000042000}},\n");
  EXPECT_EQ(c.output.find("[ancestry]"), std::string::npos) << c.output;
}

TEST(CheckAncestry, AnUnrelatedSliceInsideAnotherIsAnError) {
  // KernelCh 9, a sibling of KernelCh 6 (both children of Coll 3), drawn inside it.
  ToolResult c = CheckWith(
      "sibling.json",
      "{\"name\":\"AllReduce\",\"cat\":\"KernelCh\",\"ph\":\"X\",\"pid\":0,\"tid\":3,\"ts\":41.000,\"dur\":2.000,"
      "\"args\":{\"id\":9,\"parent\":3,\"comm\":\"9a3c0f1e12345678\",\"rank\":0,\"channel\":0,"
      "\"gpu_start_ns\":5000041000,\"gpu_stop_ns\":5000043000}},\n");
  EXPECT_NE(c.exit_code, 0) << c.output;
  EXPECT_NE(c.output.find(", id 9) lies inside event"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("id 6) on track pid 0 tid 3 \"GPU comm 9a3c0f1e12345678 ch 0\", which is not its ancestor"),
            std::string::npos)
      << c.output;
  EXPECT_NE(c.output.find("[ancestry]"), std::string::npos) << c.output;
}

TEST(CheckAncestry, AStateOfAnotherStepInsideAStepIsAnError) {
  // A proxy step track: step 20 with a state of step 21 inside it.
  ToolResult c = CheckWith(
      "state.json",
      "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":9,\"args\":{\"name\":\"proxy comm 9a3c0f1e rank 0 "
      "ch 0 send peer 1 step\"}},\n"
      "{\"name\":\"SendStep\",\"cat\":\"ProxyStep\",\"ph\":\"X\",\"pid\":0,\"tid\":9,\"ts\":20.000,\"dur\":5.000,"
      "\"args\":{\"id\":20,\"comm\":\"9a3c0f1e12345678\",\"rank\":0,\"step\":0,\"trans_size\":64}},\n"
      "{\"name\":\"SendWait\",\"cat\":\"ProxyStepState\",\"ph\":\"X\",\"pid\":0,\"tid\":9,\"ts\":21.000,"
      "\"dur\":1.000,\"args\":{\"step\":1,\"proxy_step\":21}},\n");
  EXPECT_NE(c.exit_code, 0) << c.output;
  EXPECT_NE(c.output.find("part of id 21) lies inside event"), std::string::npos) << c.output;
}

}  // namespace
}  // namespace katrace::tools
