// The configuration grammar: masks by number and by name, output templates, bad values.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "plugin/config.h"

namespace katrace {
namespace {

TEST(ParseMask, AcceptsNumbersInDecimalAndHex) {
  int mask = 0;
  std::string error;
  ASSERT_TRUE(ParseMask("4095", &mask, &error));
  EXPECT_EQ(mask, 4095);
  ASSERT_TRUE(ParseMask("0x42", &mask, &error));
  EXPECT_EQ(mask, 0x42);
}

TEST(ParseMask, AcceptsNamesCaseInsensitivelyWithSeparators) {
  int mask = 0;
  std::string error;
  ASSERT_TRUE(ParseMask("coll,P2P+KernelCh|kernelstep", &mask, &error)) << error;
  EXPECT_EQ(mask, ncclProfileColl | ncclProfileP2p | ncclProfileKernelCh | ncclProfileKernelStep);
  ASSERT_TRUE(ParseMask("all,-proxystep", &mask, &error));
  EXPECT_EQ(mask & ncclProfileProxyStep, 0);
  EXPECT_NE(mask & ncclProfileCeBatch, 0);
  ASSERT_TRUE(ParseMask("default", &mask, &error));
  EXPECT_EQ(mask, kDefaultMask);
  ASSERT_TRUE(ParseMask("none", &mask, &error));
  EXPECT_EQ(mask, 0);
}

TEST(ParseMask, RejectsUnknownNamesAndGarbageNumbers) {
  int mask = 7;
  std::string error;
  EXPECT_FALSE(ParseMask("coll,bogus", &mask, &error));
  EXPECT_NE(error.find("bogus"), std::string::npos);
  EXPECT_FALSE(ParseMask("12abc", &mask, &error));
  EXPECT_FALSE(ParseMask("", &mask, &error));
  EXPECT_FALSE(ParseMask("99999999999", &mask, &error));
  EXPECT_EQ(mask, 7);  // untouched on failure
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

}  // namespace
}  // namespace katrace
