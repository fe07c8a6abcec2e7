// The configuration grammar: masks by number and by name (the shared grammar of
// common/event_mask.h, which katrace-sim's --mask uses too), output templates, bad values.
#include <signal.h>

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "common/event_mask.h"
#include "plugin/config.h"

namespace katrace {
namespace {

TEST(ParseEventMask, AcceptsNumbersInDecimalAndHex) {
  int mask = 0;
  std::string error;
  ASSERT_TRUE(ParseEventMask("4095", &mask, &error));
  EXPECT_EQ(mask, 4095);
  ASSERT_TRUE(ParseEventMask("0x42", &mask, &error));
  EXPECT_EQ(mask, 0x42);
}

TEST(ParseEventMask, AcceptsNamesCaseInsensitivelyWithSeparators) {
  int mask = 0;
  std::string error;
  ASSERT_TRUE(ParseEventMask("coll,P2P+KernelCh|kernelstep", &mask, &error)) << error;
  EXPECT_EQ(mask, ncclProfileColl | ncclProfileP2p | ncclProfileKernelCh | ncclProfileKernelStep);
  ASSERT_TRUE(ParseEventMask("all,-proxystep", &mask, &error));
  EXPECT_EQ(mask & ncclProfileProxyStep, 0);
  EXPECT_NE(mask & ncclProfileCeBatch, 0);
  ASSERT_TRUE(ParseEventMask("default", &mask, &error));
  EXPECT_EQ(mask, kDefaultMask);
  ASSERT_TRUE(ParseEventMask("none", &mask, &error));
  EXPECT_EQ(mask, 0);
}

TEST(ParseEventMask, RejectsUnknownNamesAndGarbageNumbers) {
  int mask = 7;
  std::string error;
  EXPECT_FALSE(ParseEventMask("coll,bogus", &mask, &error));
  EXPECT_NE(error.find("bogus"), std::string::npos);
  EXPECT_FALSE(ParseEventMask("12abc", &mask, &error));
  EXPECT_FALSE(ParseEventMask("", &mask, &error));
  EXPECT_FALSE(ParseEventMask("99999999999", &mask, &error));
  EXPECT_EQ(mask, 7);  // untouched on failure
}

// `all` is every kind of the table, KernelStep included, and the sets are the documented ones.
TEST(ParseEventMask, AllIsEveryKindAndTheSetsAreWhatTheReadmeSays) {
  int mask = 0;
  std::string error;
  ASSERT_TRUE(ParseEventMask("all", &mask, &error)) << error;
  for (const KindInfo& k : kKindInfo) EXPECT_NE(mask & static_cast<int>(k.type_bit), 0) << k.name;
  EXPECT_EQ(mask, kAllKindsMask);
  EXPECT_NE(mask & ncclProfileKernelStep, 0);
  ASSERT_TRUE(ParseEventMask("gpu", &mask, &error));
  EXPECT_EQ(mask, ncclProfileKernelCh | ncclProfileKernelStep);
  ASSERT_TRUE(ParseEventMask("api", &mask, &error));
  EXPECT_EQ(mask, ncclProfileGroupApi | ncclProfileCollApi | ncclProfileP2pApi | ncclProfileKernelLaunch);
  ASSERT_TRUE(ParseEventMask("proxy net", &mask, &error));
  EXPECT_EQ(mask, ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileProxyCtrl | ncclProfileNetPlugin);
  ASSERT_TRUE(ParseEventMask("ce,-cesync", &mask, &error));
  EXPECT_EQ(mask, ncclProfileCeColl | ncclProfileCeBatch);
  EXPECT_EQ(DescribeEventMask(ncclProfileColl | ncclProfileKernelStep), "Coll|KernelStep");
  EXPECT_EQ(DescribeEventMask(0), "none");
  for (const KindInfo& k : kKindInfo) {
    std::string name = k.name;
    for (char& c : name) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
    EXPECT_NE(EventMaskWords().find(name), std::string::npos) << name;
  }
}

TEST(ExpandOutputTemplate, SubstitutesRankPidHost) {
  EXPECT_EQ(ExpandOutputTemplate("/t/k-{rank}-{pid}-{host}.json", 3, 42, "n7"), "/t/k-3-42-n7.json");
  EXPECT_EQ(ExpandOutputTemplate("plain.json", 0, 1, "h"), "plain.json");
}

struct FakeEnv {
  std::map<std::string, std::string> vars;
  std::vector<std::string> warnings;
  Config Read() {
    return ReadConfig(
        [this](const char* n) {
          auto it = vars.find(n);
          return it == vars.end() ? static_cast<const char*>(nullptr) : it->second.c_str();
        },
        [this](const std::string& w) { warnings.push_back(w); });
  }
};

TEST(ReadConfig, UnsetMeansUsefulDefaults) {
  FakeEnv env;
  Config c = env.Read();
  EXPECT_EQ(c.mask, kDefaultMask);
  EXPECT_NE(c.mask & ncclProfileColl, 0);
  EXPECT_NE(c.mask & ncclProfileKernelCh, 0);
  EXPECT_TRUE(c.summary);
  EXPECT_FALSE(c.gzip);
  EXPECT_EQ(c.pool_size[static_cast<int>(Kind::kColl)], kKindInfo[static_cast<int>(Kind::kColl)].default_pool);
  EXPECT_TRUE(env.warnings.empty());
}

TEST(ReadConfig, HonoursNcclExampleNames) {
  FakeEnv env;
  env.vars["NCCL_PROFILE_EVENT_MASK"] = "66";
  env.vars["NCCL_PROFILE_DUMP_FILE"] = "/x/prof";
  env.vars["NCCL_PROFILE_COLL_POOL_SIZE"] = "64";
  Config c = env.Read();
  EXPECT_EQ(c.mask, 66);
  EXPECT_EQ(c.output, "/x/prof_{rank}.json");
  EXPECT_EQ(c.pool_size[static_cast<int>(Kind::kColl)], 64u);
}

TEST(ReadConfig, BadValuesWarnNamingVariableValueAndFallback) {
  FakeEnv env;
  env.vars["KATRACE_MASK"] = "coll,nonsense";
  env.vars["KATRACE_POOL_COLL"] = "-5";
  env.vars["KATRACE_GZIP"] = "maybe";
  Config c = env.Read();
  EXPECT_EQ(c.mask, kDefaultMask);
  EXPECT_EQ(c.pool_size[static_cast<int>(Kind::kColl)], kKindInfo[static_cast<int>(Kind::kColl)].default_pool);
  ASSERT_EQ(env.warnings.size(), 3u);
  EXPECT_NE(env.warnings[0].find("KATRACE_MASK='coll,nonsense'"), std::string::npos);
  EXPECT_NE(env.warnings[0].find("using the default mask"), std::string::npos);
  EXPECT_NE(env.warnings[1].find("KATRACE_GZIP='maybe'"), std::string::npos);
  EXPECT_NE(env.warnings[2].find("KATRACE_POOL_COLL='-5'"), std::string::npos);
}

TEST(ReadConfig, GzipBySuffixOrSwitch) {
  FakeEnv env;
  env.vars["KATRACE_OUTPUT"] = "t.json.gz";
  EXPECT_TRUE(env.Read().gzip);
  FakeEnv env2;
  env2.vars["KATRACE_OUTPUT"] = "t.json";
  env2.vars["KATRACE_GZIP"] = "1";
  Config c = env2.Read();
  EXPECT_TRUE(c.gzip);
  EXPECT_EQ(c.output, "t.json.gz");
}

// A directory given for the trace (it exists, or its name ends in '/') gets the default name inside
// it, not a file named like the directory that cannot be written.
TEST(ReadConfig, OutputDirectoryGetsTheDefaultName) {
  std::string dir = testing::TempDir();  // an existing directory, without its trailing '/'
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  for (const std::string& given : {dir, dir + "/", std::string("traces-{rank}/")}) {
    FakeEnv env;
    env.vars["KATRACE_OUTPUT"] = given;
    const Config c = env.Read();
    const std::string base = given.back() == '/' ? given : given + "/";
    EXPECT_EQ(c.output, base + "katrace-{host}-{pid}.json") << given;
    EXPECT_TRUE(env.warnings.empty());
  }
  FakeEnv pftrace;
  pftrace.vars["KATRACE_OUTPUT"] = "out/";
  pftrace.vars["KATRACE_FORMAT"] = "perfetto";
  EXPECT_EQ(pftrace.Read().output, "out/katrace-{host}-{pid}.pftrace");
  FakeEnv file;
  file.vars["KATRACE_OUTPUT"] = dir + "/not-there-{rank}.json";
  EXPECT_EQ(file.Read().output, dir + "/not-there-{rank}.json");
}

// Regression: numbers were read with strtoull's base 0, so a leading zero meant octal
// (KATRACE_SAMPLE=010 was 8) and "08" was no number at all.
TEST(ReadConfig, NumbersAreDecimalOrHexadecimalNeverOctal) {
  FakeEnv env;
  env.vars["KATRACE_SAMPLE"] = "010";
  env.vars["KATRACE_THREAD_BUFFER_KB"] = "0x100";
  env.vars["KATRACE_MASK"] = "08";
  const Config c = env.Read();
  EXPECT_EQ(c.sample_every, 10u);
  EXPECT_EQ(c.thread_buffer_bytes, 256u << 10);
  EXPECT_EQ(c.mask, 8);
  EXPECT_TRUE(env.warnings.empty()) << env.warnings.front();
}

// Regression: a bad KATRACE_POOL_SIZE said "using 0" while each kind kept its default.
TEST(ReadConfig, ABadPoolSizeSaysEachKindKeepsItsDefault) {
  const Config defaults = FakeEnv().Read();
  FakeEnv env;
  env.vars["KATRACE_POOL_SIZE"] = "lots";
  const Config c = env.Read();
  ASSERT_EQ(env.warnings.size(), 1u);
  EXPECT_NE(env.warnings[0].find("keeping each kind's default"), std::string::npos) << env.warnings[0];
  for (int k = 0; k < kKindCount; ++k) EXPECT_EQ(c.pool_size[k], defaults.pool_size[k]) << k;
}

// KATRACE_FORMAT is trimmed like every other word-valued variable; gzip never renames a device.
TEST(ReadConfig, FormatIsTrimmedAndADeviceKeepsItsNameUnderGzip) {
  FakeEnv env;
  env.vars["KATRACE_FORMAT"] = " PERFETTO ";
  env.vars["KATRACE_OUTPUT"] = "t.json";
  EXPECT_EQ(env.Read().output, "t.pftrace");
  EXPECT_TRUE(env.warnings.empty());
  FakeEnv device;
  device.vars["KATRACE_OUTPUT"] = "/dev/null";
  device.vars["KATRACE_GZIP"] = "1";
  const Config c = device.Read();
  EXPECT_EQ(c.output, "/dev/null");
  EXPECT_TRUE(c.gzip);
}

// Regression: KATRACE_HANG_TIMEOUT=1ns was taken, and every run reported a hang.
TEST(ReadConfig, AHangTimeoutTooShortToTellIsRaisedToTheShortestThatCan) {
  FakeEnv env;
  env.vars["KATRACE_HANG_TIMEOUT"] = "1ns";
  EXPECT_EQ(env.Read().hang_timeout_ns, 100ull * 1000 * 1000);
  ASSERT_EQ(env.warnings.size(), 1u);
  EXPECT_NE(env.warnings[0].find("using 100ms"), std::string::npos) << env.warnings[0];
  FakeEnv fine;
  fine.vars["KATRACE_HANG_TIMEOUT"] = "250ms";
  EXPECT_EQ(fine.Read().hang_timeout_ns, 250ull * 1000 * 1000);
  EXPECT_TRUE(fine.warnings.empty());
}

TEST(ParseCaptureSpan, TimesInEveryUnitAndCollectiveCounts) {
  CaptureSpan span;
  std::string error;
  ASSERT_TRUE(ParseCaptureSpan("30s", true, &span, &error)) << error;
  EXPECT_EQ(span.unit, CaptureSpan::kNanoseconds);
  EXPECT_EQ(span.value, 30ull * 1000 * 1000 * 1000);
  ASSERT_TRUE(ParseCaptureSpan(" 500ms ", true, &span, &error));
  EXPECT_EQ(span.value, 500ull * 1000 * 1000);
  ASSERT_TRUE(ParseCaptureSpan("250US", true, &span, &error));
  EXPECT_EQ(span.value, 250ull * 1000);
  ASSERT_TRUE(ParseCaptureSpan("2m", true, &span, &error));
  EXPECT_EQ(span.value, 120ull * 1000 * 1000 * 1000);
  ASSERT_TRUE(ParseCaptureSpan("7", true, &span, &error));  // seconds, as Nsight Systems reads it
  EXPECT_EQ(span.value, 7ull * 1000 * 1000 * 1000);
  // Fractions are the duration grammar's (common/duration.h), shared with the tools.
  ASSERT_TRUE(ParseCaptureSpan("1.5s", true, &span, &error)) << error;
  EXPECT_EQ(span.value, 1500ull * 1000 * 1000);
  ASSERT_TRUE(ParseCaptureSpan("2000colls", true, &span, &error));
  EXPECT_EQ(span.unit, CaptureSpan::kCollectives);
  EXPECT_EQ(span.value, 2000u);
}

TEST(ParseCaptureSpan, RejectsGarbageFractionalCountsOverflowAndCountsWhereOnlyTimesMakeSense) {
  CaptureSpan span;
  std::string error;
  EXPECT_FALSE(ParseCaptureSpan("", true, &span, &error));
  EXPECT_FALSE(ParseCaptureSpan("-5s", true, &span, &error));
  EXPECT_FALSE(ParseCaptureSpan("1.5colls", true, &span, &error));
  EXPECT_FALSE(ParseCaptureSpan("10 fortnights", true, &span, &error));
  EXPECT_NE(error.find("colls"), std::string::npos);
  EXPECT_FALSE(ParseCaptureSpan("999999999999999h", true, &span, &error));
  EXPECT_FALSE(ParseCaptureSpan("100colls", false, &span, &error));
  EXPECT_NE(error.find("only a time is taken"), std::string::npos) << error;
  EXPECT_FALSE(ParseCaptureSpan("1 fortnight", false, &span, &error));
  EXPECT_EQ(error.find("colls"), std::string::npos) << error;  // not offered where not taken
}

TEST(ReadConfig, WindowTriggerFlightAndHangVariables) {
  FakeEnv env;
  env.vars["KATRACE_DELAY"] = "2000colls";
  env.vars["KATRACE_DURATION"] = "10s";
  env.vars["KATRACE_SAMPLE"] = "8";
  env.vars["KATRACE_CONTROL"] = "/run/ctl";
  env.vars["KATRACE_SIGNAL"] = "SIGUSR2";
  env.vars["KATRACE_MODE"] = "flight";
  env.vars["KATRACE_FLIGHT_MB"] = "16";
  env.vars["KATRACE_FLIGHT_AT_EXIT"] = "1";
  env.vars["KATRACE_HANG_TIMEOUT"] = "60s";
  Config c = env.Read();
  EXPECT_TRUE(env.warnings.empty()) << env.warnings[0];
  EXPECT_EQ(c.delay.unit, CaptureSpan::kCollectives);
  EXPECT_EQ(c.delay.value, 2000u);
  EXPECT_EQ(c.duration.unit, CaptureSpan::kNanoseconds);
  EXPECT_EQ(c.sample_every, 8u);
  EXPECT_EQ(c.control_path, "/run/ctl");
  EXPECT_EQ(c.toggle_signal, SIGUSR2);
  EXPECT_TRUE(c.flight);
  EXPECT_EQ(c.flight_bytes, 16u << 20);
  EXPECT_TRUE(c.flight_dump_at_exit);
  EXPECT_TRUE(c.flight_dump_on_crash);
  EXPECT_EQ(c.hang_timeout_ns, 60ull * 1000 * 1000 * 1000);
}

TEST(ReadConfig, BadWindowAndHangValuesWarnAndFallBackToOff) {
  FakeEnv env;
  env.vars["KATRACE_DELAY"] = "soon";
  env.vars["KATRACE_DURATION"] = "0colls";
  env.vars["KATRACE_SAMPLE"] = "0";
  env.vars["KATRACE_SIGNAL"] = "SEGV";
  env.vars["KATRACE_MODE"] = "blackbox";
  env.vars["KATRACE_HANG_TIMEOUT"] = "5colls";
  Config c = env.Read();
  EXPECT_EQ(c.delay.unit, CaptureSpan::kNone);
  EXPECT_EQ(c.duration.unit, CaptureSpan::kNone);
  EXPECT_EQ(c.sample_every, 1u);
  EXPECT_EQ(c.toggle_signal, 0);
  EXPECT_FALSE(c.flight);
  EXPECT_EQ(c.hang_timeout_ns, 0u);
  ASSERT_EQ(env.warnings.size(), 6u);
  auto warned = [&](const std::string& what) {
    for (const std::string& w : env.warnings) {
      if (w.find(what) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(warned("KATRACE_DELAY='soon'"));
  EXPECT_TRUE(warned("KATRACE_DURATION='0colls'"));
  EXPECT_TRUE(warned("KATRACE_SAMPLE='0'"));
  EXPECT_TRUE(warned("KATRACE_SIGNAL='SEGV'"));
  EXPECT_TRUE(warned("KATRACE_MODE='blackbox'"));
  EXPECT_TRUE(warned("KATRACE_HANG_TIMEOUT='5colls'"));
}

}  // namespace
}  // namespace katrace
