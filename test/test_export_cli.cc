// katrace-export run as a program: exit codes, messages, spool removal and --keep-spool, the
// output rules for one and several spools.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "plugin/export/spool_reader.h"
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
  // Regression: protobuf was written under a .json name.
  p = Run({"a.kspool", "--format", "perfetto", "-o", dir_ + "/x.json"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("--format perfetto does not match -o '" + dir_ + "/x.json' (its name says json)"),
            std::string::npos)
      << p.err;
}

// Regression: -o - wrote a file named "-"; it is standard output, as for the other tools.
TEST_F(ExportCliTest, DashIsStandardOutput) {
  MakeSpool(dir_ + "/r0.kspool", dir_ + "/r0.json", 0, 11);
  ProcessOutput p = Run({dir_ + "/r0.kspool", "--keep-spool", "--quiet", "-o", "-"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_FALSE(Exists(dir_ + "/-"));
  EXPECT_EQ(p.out.rfind("{\"traceEvents\":[", 0), 0u) << p.out.substr(0, 200);
  WriteFileBytes(dir_ + "/stdout.json", p.out);
  EXPECT_EQ(Slices(ExpectValidTrace(dir_ + "/stdout.json"), "Coll").size(), 50u);
  // Standard output is a regular file here (the test's capture): it was still written through
  // the descriptor, never by a rename onto /dev/stdout, which would replace the link itself.
  struct stat st;
  ASSERT_EQ(lstat("/dev/stdout", &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode) || S_ISCHR(st.st_mode)) << "/dev/stdout was replaced by a file";
}

// A trace that cannot be written (a device with no room) fails the export with the reason, the
// spool kept; the message has no job to speak of (it said "the job goes on", the plugin's words).
TEST_F(ExportCliTest, AnOutputWithNoRoomFailsWithItsReasonAndKeepsTheSpool) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no writable /dev/full here";
  MakeSpool(dir_ + "/r0.kspool", dir_ + "/r0.json", 0, 11);
  ProcessOutput p = Run({dir_ + "/r0.kspool", "--quiet", "-o", "/dev/full"});
  EXPECT_NE(p.exit_code, 0) << p.err;
  EXPECT_NE(p.err.find("No space left on device"), std::string::npos) << p.err;
  EXPECT_EQ(p.err.find("the job goes on"), std::string::npos) << p.err;
  EXPECT_TRUE(Exists(dir_ + "/r0.kspool")) << p.err;
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

// Regression: -o naming the spool itself wrote the trace over it and then removed it: both lost.
TEST_F(ExportCliTest, AnOutputThatIsTheSpoolItselfIsRefused) {
  MakeSpool(dir_ + "/r0.kspool", dir_ + "/r0.json", 0, 11);
  const std::string before = ReadFileBytes(dir_ + "/r0.kspool");
  ProcessOutput p = Run({dir_ + "/r0.kspool", "--quiet", "-o", dir_ + "/./r0.kspool"});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find("would overwrite the spool itself"), std::string::npos) << p.err;
  EXPECT_EQ(ReadFileBytes(dir_ + "/r0.kspool"), before);
}

// Regression: two spools that record one trace name, exported into one directory, wrote one
// trace over the other and both spools were removed.
TEST_F(ExportCliTest, TwoSpoolsOfOneTraceNameNeverOverwriteEachOther) {
  MakeSpool(dir_ + "/a.kspool", "/job1/trace.json", 0, 100);
  MakeSpool(dir_ + "/b.kspool", "/job2/trace.json", 0, 200);
  mkdir((dir_ + "/out").c_str(), 0755);
  ProcessOutput p = Run({dir_ + "/a.kspool", dir_ + "/b.kspool", "--quiet", "-o", dir_ + "/out"});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find(dir_ + "/b.kspool: its trace '" + dir_ + "/out/trace.json' was written from another spool"),
            std::string::npos)
      << p.err;
  ExpectValidTrace(dir_ + "/out/trace.json");
  EXPECT_NE(ReadFileBytes(dir_ + "/out/trace.json").find("\"os_pid\":100,"), std::string::npos)
      << "the first spool's trace stays";
  EXPECT_FALSE(Exists(dir_ + "/a.kspool"));
  EXPECT_TRUE(Exists(dir_ + "/b.kspool")) << "the spool whose trace was not written is kept";
  // The same through a template both spools fill alike.
  MakeSpool(dir_ + "/c.kspool", "/job3/trace.json", 0, 300);
  p = Run({dir_ + "/b.kspool", dir_ + "/c.kspool", "--quiet", "-o", dir_ + "/rank{rank}.json"});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_TRUE(Exists(dir_ + "/c.kspool"));
}

// Regression: an output that could not be created went to the same name in $TMPDIR, overwriting
// whatever was there, with exit status 0 (and the spool removed).
TEST_F(ExportCliTest, AnOutputThatCannotBeCreatedFailsInsteadOfGoingToTheTempDir) {
  MakeSpool(dir_ + "/r0.kspool", dir_ + "/r0.json", 0, 11);
  WriteFileBytes(dir_ + "/x.json", "precious");
  ProcessOutput p = RunProcess(ToolPath("katrace-export"),
                               {dir_ + "/r0.kspool", "--quiet", "-o", "/nonexistent-katrace/x.json"}, {"TMPDIR=" + dir_},
                               dir_);
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find("cannot write the trace to '/nonexistent-katrace/x.json' (No such file or directory)"),
            std::string::npos)
      << p.err;
  EXPECT_EQ(ReadFileBytes(dir_ + "/x.json"), "precious");
  EXPECT_TRUE(Exists(dir_ + "/r0.kspool"));
  p = Run({dir_ + "/r0.kspool", "-o", dir_ + "/no-such-dir/"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("names a directory that does not exist"), std::string::npos) << p.err;
}

// Regression: a FIFO given as the spool blocked in open() for good.
TEST_F(ExportCliTest, AFifoIsRefusedNotWaitedOn) {
  ASSERT_EQ(mkfifo((dir_ + "/f.kspool").c_str(), 0600), 0);
  ProcessOutput p = Run({dir_ + "/f.kspool", "--keep-spool"});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find("not a regular file"), std::string::npos) << p.err;
}

// Regression: one damaged block in the middle (a bad CRC) ended the export there, as if the job
// had been killed, and the spool was removed with every block after it.
TEST_F(ExportCliTest, ADamagedBlockIsSkippedTheRestExportedAndTheSpoolKept) {
  MakeSpool(dir_ + "/d.kspool", dir_ + "/d.json", 0, 11);
  katrace::exporting::SpoolReader reader;
  std::string error;
  ASSERT_TRUE(reader.Open(dir_ + "/d.kspool", &error)) << error;
  std::vector<katrace::exporting::BlockRef> blocks;
  katrace::exporting::BlockRef ref;
  for (uint64_t at = reader.first_block_offset();
       reader.ReadBlockHeader(at, &ref, &error) == katrace::exporting::BlockStatus::kOk; at = ref.end()) {
    blocks.push_back(ref);
  }
  ASSERT_GE(blocks.size(), 5u) << "the spool needs blocks on both sides of the damaged one";
  // A bit flipped in the payload of a block in the middle.
  const katrace::exporting::BlockRef& hit = blocks[blocks.size() / 2];
  std::string bytes = ReadFileBytes(dir_ + "/d.kspool");
  bytes[hit.offset + sizeof(katrace::spool::BlockHeader) + hit.stored_bytes / 2] ^= 0x10;
  WriteFileBytes(dir_ + "/d.kspool", bytes);
  ProcessOutput p = Run({dir_ + "/d.kspool"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.err.find("spool ended cleanly"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("skipped 1 damaged block (the first at offset " + std::to_string(hit.offset) + ": "),
            std::string::npos)
      << p.err;
  EXPECT_NE(p.err.find("the spool '" + dir_ + "/d.kspool' is kept: it has damaged blocks"), std::string::npos) << p.err;
  EXPECT_TRUE(Exists(dir_ + "/d.kspool"));
  const size_t colls = Slices(ExpectValidTrace(dir_ + "/d.json"), "Coll").size();
  EXPECT_GT(colls, 25u) << "the blocks after the damaged one were read";
  EXPECT_LT(colls, 50u) << "the damaged block's events are gone";
}

}  // namespace
}  // namespace katrace_test
