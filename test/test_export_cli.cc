// katrace-export run as a program: exit codes, messages, spool removal and --keep-spool, the
// output rules for one and several spools.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "test/support/plugin_harness.h"
#include "test/support/spool_builder.h"
#include "test/support/subprocess.h"
#include "test/support/trace_validation.h"

namespace katrace_test {
namespace {

using katrace::Kind;
namespace spool = katrace::spool;

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// A small whole spool naming |trace| as its trace path; |end| false leaves it like a killed job's.
void MakeSpool(const std::string& path, const std::string& trace, int rank, int pid, bool end = true) {
  SpoolBuilder b(path, true, 256, static_cast<uint64_t>(pid));
  b.Process(rank, pid, "host", trace, static_cast<int>(ncclProfileColl), 2000, 1000);
  b.Comm(1, 0x1234, 1000, rank, 2, "c");
  spool::CollFields c{};
  for (uint64_t i = 0; i < 50; ++i) {
    b.Start(0, Kind::kColl, 1, i + 1, 0, 2000 + i * 100, c);
    b.Stop(0, Kind::kColl, 1, i + 1, 2000 + i * 100 + 50);
  }
  if (end) b.End(0);
}

class ExportCliTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir(); }
  ProcessOutput Run(const std::vector<std::string>& args) {
    return RunProcess(ToolPath("katrace-export"), args, {}, dir_);
  }
  std::string dir_;
};

TEST_F(ExportCliTest, Help) {
  ProcessOutput p = Run({"--help"});
  EXPECT_EQ(p.exit_code, 0);
  EXPECT_NE(p.out.find("usage: katrace-export SPOOL..."), std::string::npos);
  EXPECT_NE(p.out.find("--keep-spool"), std::string::npos);
}

TEST_F(ExportCliTest, UsageErrors) {
  EXPECT_EQ(Run({}).exit_code, 2);
  ProcessOutput p = Run({"--bogus"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("unknown option '--bogus'"), std::string::npos) << p.err;
  EXPECT_EQ(Run({"a.kspool", "--threads", "0"}).exit_code, 2);
  p = Run({"a.kspool", "b.kspool", "-o", dir_ + "/one.json"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("must be an existing directory or contain {pid} or {rank}"), std::string::npos) << p.err;
}

TEST_F(ExportCliTest, MissingAndNotASpool) {
  ProcessOutput p = Run({dir_ + "/missing.kspool"});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find("cannot open '" + dir_ + "/missing.kspool'"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("No such file"), std::string::npos) << p.err;
  WriteFileBytes(dir_ + "/bad.kspool", std::string(200, 'x'));
  p = Run({dir_ + "/bad.kspool"});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find("not a katrace spool"), std::string::npos) << p.err;
  EXPECT_TRUE(Exists(dir_ + "/bad.kspool"));  // a failed export keeps its input
  p = Run({dir_});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find("not a regular file"), std::string::npos) << p.err;
}

TEST_F(ExportCliTest, ExportsToTheRecordedPathAndRemovesTheSpool) {
  MakeSpool(dir_ + "/r0.kspool", dir_ + "/r0.json", 0, 11);
  ProcessOutput p = Run({dir_ + "/r0.kspool"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.err.find("exported 50 events"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("spool ended cleanly"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("katrace host-side summary"), std::string::npos) << p.err;
  EXPECT_FALSE(Exists(dir_ + "/r0.kspool"));
  ExpectValidTrace(dir_ + "/r0.json");
  EXPECT_TRUE(Exists(dir_ + "/r0.json.summary.txt"));
}

TEST_F(ExportCliTest, KeepSpoolQuietAndOutputFile) {
  MakeSpool(dir_ + "/r0.kspool", dir_ + "/r0.json", 0, 11);
  ProcessOutput p = Run({dir_ + "/r0.kspool", "--keep-spool", "--quiet", "-o", dir_ + "/x.json.gz"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.err, "");
  EXPECT_TRUE(Exists(dir_ + "/r0.kspool"));
  EXPECT_FALSE(Exists(dir_ + "/r0.json"));
  ExpectValidTrace(dir_ + "/x.json.gz");
}

TEST_F(ExportCliTest, KilledJobSpoolSaysWhereItWasCut) {
  MakeSpool(dir_ + "/k.kspool", dir_ + "/k.json", 0, 11, false);
  std::string bytes = ReadFileBytes(dir_ + "/k.kspool");
  WriteFileBytes(dir_ + "/k.kspool", bytes.substr(0, bytes.size() - 30));  // torn last block
  ProcessOutput p = Run({dir_ + "/k.kspool", "--threads", "3"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.err.find("spool cut at offset"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("the file ends inside a block"), std::string::npos) << p.err;
  ExpectValidTrace(dir_ + "/k.json");
}

TEST_F(ExportCliTest, SeveralSpoolsToADirectoryOrATemplate) {
  MakeSpool(dir_ + "/a.kspool", "/elsewhere/trace-a.json", 0, 100);
  MakeSpool(dir_ + "/b.kspool", "/elsewhere/trace-b.json", 1, 101);
  mkdir((dir_ + "/out").c_str(), 0755);
  ProcessOutput p = Run({dir_ + "/a.kspool", dir_ + "/b.kspool", "--keep-spool", "-o", dir_ + "/out"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  ExpectValidTrace(dir_ + "/out/trace-a.json");
  ExpectValidTrace(dir_ + "/out/trace-b.json");
  p = Run({dir_ + "/a.kspool", dir_ + "/b.kspool", "-o", dir_ + "/t-{rank}-{pid}.json"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  ExpectValidTrace(dir_ + "/t-0-100.json");
  ExpectValidTrace(dir_ + "/t-1-101.json");
  EXPECT_FALSE(Exists(dir_ + "/a.kspool"));
  // One good, one missing: the good one is exported, the status says one failed.
  MakeSpool(dir_ + "/c.kspool", dir_ + "/c.json", 2, 102);
  p = Run({dir_ + "/c.kspool", dir_ + "/nope.kspool", "-o", dir_ + "/out"});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_TRUE(Exists(dir_ + "/out/c.json"));
}

}  // namespace
}  // namespace katrace_test
