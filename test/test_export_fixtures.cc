// The committed spools of test/data/spools (katrace-sim runs with KATRACE_EXPORT=0: every kind
// under mask `all`, and the default mask over 4 ranks) exported by katrace-export: the JSON is
// byte for byte the one committed beside each spool, which the export wrote before the encoders
// for other formats existed. A change that alters the JSON of an existing spool fails here; when
// it is meant to, re-export the fixture and say why in the commit.
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "test/support/plugin_harness.h"
#include "test/support/subprocess.h"

namespace katrace_test {
namespace {

std::string SpoolDir() {
  // Run from the repository root (test/run_tests.sh) or from the build folder.
  for (const char* dir : {"test/data/spools", "../test/data/spools", "../../test/data/spools"}) {
    if (!ReadWholeFile(std::string(dir) + "/sim_all_kinds.kspool").empty()) return dir;
  }
  return "test/data/spools";
}

std::string Gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return "";
  std::string text;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return text;
}

class ExportFixtureTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ExportFixtureTest, JsonIsByteIdenticalToTheCommittedExport) {
  const std::string dir = MakeTempDir();
  const std::string spool = SpoolDir() + "/" + GetParam() + ".kspool";
  const std::string out = dir + "/" + GetParam() + ".json";
  ProcessOutput p = RunProcess(ToolPath("katrace-export"), {"--keep-spool", "--quiet", spool, "-o", out}, {}, dir);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const std::string expected = Gunzip(SpoolDir() + "/" + GetParam() + ".expected.json.gz");
  ASSERT_FALSE(expected.empty());
  const std::string got = ReadWholeFile(out);
  ASSERT_EQ(got.size(), expected.size());
  size_t first = 0;
  while (first < got.size() && got[first] == expected[first]) ++first;
  EXPECT_EQ(first, got.size()) << "first difference at byte " << first << ": "
                               << got.substr(first > 80 ? first - 80 : 0, 200);
}

// One thread exports inline; two or more split the export into halves on threads of their own
// with write-behind (exporter.cc), and more decode blocks ahead: none of it may change a byte.
TEST_P(ExportFixtureTest, EveryThreadCountWritesTheSameTraceInEveryFormat) {
  const std::string dir = MakeTempDir();
  const std::string spool = SpoolDir() + "/" + GetParam() + ".kspool";
  for (const char* format : {"json", "perfetto", "nvtxt"}) {
    std::string one_thread;
    for (const char* threads : {"1", "2", "3", "4"}) {
      const std::string out = dir + "/t" + threads + "." + format;
      ProcessOutput p = RunProcess(ToolPath("katrace-export"),
                                   {"--keep-spool", "--quiet", "--threads", threads, "--format", format, spool, "-o", out},
                                   {}, dir);
      ASSERT_EQ(p.exit_code, 0) << format << ", " << threads << " threads: " << p.err;
      const std::string got = ReadWholeFile(out);
      ASSERT_GT(got.size(), 1000u) << format << ", " << threads << " threads";
      if (one_thread.empty()) one_thread = got;
      EXPECT_TRUE(got == one_thread) << format << ": " << threads << " threads write another trace than one";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Spools, ExportFixtureTest, ::testing::Values("sim_all_kinds", "sim_default_mask"));

}  // namespace
}  // namespace katrace_test
