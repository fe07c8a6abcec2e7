// KATRACE_FORMAT and the output name choose the trace's format, through the real .so: the name
// follows the format (and the spool, the temporary file and the summary follow the name), an
// extension alone chooses it, and a value that names no format gets one warning and JSON.
#include <unistd.h>

#include <string>

#include "test/support/plugin_test.h"
#include "test/support/subprocess.h"

namespace katrace_test {
namespace {

class FormatTest : public PluginTest {
 protected:
  // One communicator with a Coll and two channels, finalized: the trace is written.
  void RunOneCollective() {
    Comm c = InitComm(7, 0, 1);
    CollWithChannels(c.ctx, nullptr, 0, 2);
    spool_seen_ = access((expected_ + ".kspool").c_str(), F_OK) == 0;
    v6().finalize(c.ctx);
  }
  std::string expected_;
  bool spool_seen_ = false;
};

TEST_F(FormatTest, PerfettoFormatRenamesTheJsonNameAndWritesProtobuf) {
  setenv("KATRACE_FORMAT", "perfetto", 1);
  expected_ = dir_ + "/trace.pftrace";  // KATRACE_OUTPUT is trace.json
  RunOneCollective();
  EXPECT_TRUE(spool_seen_) << "the spool is named after the trace: " << expected_ << ".kspool";
  EXPECT_EQ(access(trace_path_.c_str(), F_OK), -1) << "no JSON is written";
  const std::string bytes = ReadWholeFile(expected_);
  ASSERT_FALSE(bytes.empty()) << expected_;
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x0a) << "a Trace's first field: packet";
  EXPECT_NE(bytes.find("katrace-trace"), std::string::npos) << "the header rides in the process track";
  EXPECT_NE(bytes.find("AllReduce"), std::string::npos) << "the Coll's name is interned";
  ProcessOutput check = RunProcess(ToolPath("katrace-check"), {expected_}, {}, dir_);
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_TRUE(CapturedWarnings().empty());
}

TEST_F(FormatTest, TheOutputNamesExtensionChoosesTheFormat) {
  expected_ = dir_ + "/trace.nvtxt";
  setenv("KATRACE_OUTPUT", expected_.c_str(), 1);
  RunOneCollective();
  const std::string text = ReadWholeFile(expected_);
  EXPECT_NE(text.find("SetFileDisplayName"), std::string::npos) << text.substr(0, 400);
  EXPECT_NE(text.find("RangeStartEnd"), std::string::npos);
  EXPECT_NE(text.find("AllReduce"), std::string::npos);
}

TEST_F(FormatTest, AFormatThatIsNoneOfOursWarnsOnceAndWritesJson) {
  setenv("KATRACE_FORMAT", "xml", 1);
  expected_ = trace_path_;
  RunOneCollective();
  nlohmann::json trace = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(trace)["events"]["KernelCh"], 2);
  const std::vector<std::string> warnings = CapturedWarnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("KATRACE_FORMAT='xml'"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("using json"), std::string::npos) << warnings[0];
}

}  // namespace
}  // namespace katrace_test
