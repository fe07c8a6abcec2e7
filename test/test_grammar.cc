// The two grammars every katrace option shares: durations (common/duration.h: KATRACE_DELAY,
// KATRACE_DURATION, KATRACE_HANG_TIMEOUT, katrace-merge --from/--to, katrace-sim --hang-for,
// --gpu-clock offset:D, --gpu-jitter) and kind lists (common/event_mask.h: KATRACE_MASK,
// katrace-sim --mask, katrace-merge --kinds), each through its parser and through the options
// that use it.
#include <stdint.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/duration.h"
#include "common/event_mask.h"
#include "plugin/config.h"
#include "tools/merge/merge_options.h"
#include "tools/sim/sim_options.h"

namespace {

using katrace::ParseDuration;
using katrace::ParseSignedDuration;

constexpr int64_t kUs = 1000;
constexpr int64_t kMs = 1000 * kUs;
constexpr int64_t kS = 1000 * kMs;

// The parsed value, or nullopt with the error in |*error|.
std::optional<int64_t> Duration(const std::string& text, std::string* error = nullptr) {
  int64_t ns = -42;
  std::string why;
  if (!ParseDuration(text, &ns, &why)) {
    EXPECT_EQ(ns, -42) << text << ": the output is touched on failure";
    EXPECT_FALSE(why.empty()) << text;
    if (error != nullptr) *error = why;
    return std::nullopt;
  }
  return ns;
}

// The error ParseDuration gives |text|; a failure when it parses.
std::string DurationError(const std::string& text) {
  std::string error;
  EXPECT_FALSE(Duration(text, &error).has_value()) << text;
  return error;
}

TEST(DurationGrammar, EveryUnit) {
  EXPECT_EQ(Duration("5ns"), 5);
  EXPECT_EQ(Duration("5us"), 5 * kUs);
  EXPECT_EQ(Duration("5ms"), 5 * kMs);
  EXPECT_EQ(Duration("5s"), 5 * kS);
  EXPECT_EQ(Duration("5m"), 300 * kS);
  EXPECT_EQ(Duration("5min"), 300 * kS);
  EXPECT_EQ(Duration("2h"), 7200 * kS);
}

// Nsight Systems reads `--delay 7` as seconds; so does every katrace option now.
TEST(DurationGrammar, ABareNumberIsSeconds) {
  EXPECT_EQ(Duration("7"), 7 * kS);
  EXPECT_EQ(Duration("0"), 0);
  EXPECT_EQ(Duration("1.5"), 1500 * kMs);
  EXPECT_EQ(Duration("007"), 7 * kS);
  EXPECT_NE(std::string(katrace::kDurationSyntax).find("a bare number is seconds"), std::string::npos);
}

TEST(DurationGrammar, UnitsInAnyCaseAndBlanksAround) {
  EXPECT_EQ(Duration("250US"), 250 * kUs);
  EXPECT_EQ(Duration("1.5S"), 1500 * kMs);
  EXPECT_EQ(Duration("2Ms"), 2 * kMs);
  EXPECT_EQ(Duration(" 500ms "), 500 * kMs);
  EXPECT_EQ(Duration("30 s"), 30 * kS);
  EXPECT_EQ(Duration("\t2m\n"), 120 * kS);
}

TEST(DurationGrammar, FractionsAreExactAndRoundToTheNearestNanosecond) {
  EXPECT_EQ(Duration("1.5s"), 1500 * kMs);
  EXPECT_EQ(Duration("0.25ms"), 250 * kUs);
  EXPECT_EQ(Duration("2.5us"), 2500);
  EXPECT_EQ(Duration("0.1m"), 6 * kS);
  EXPECT_EQ(Duration("0.001h"), 3600 * kMs);
  EXPECT_EQ(Duration("1.4ns"), 1);
  EXPECT_EQ(Duration("1.5ns"), 2);  // halves round up
  EXPECT_EQ(Duration("0.0000000015s"), 2);
  EXPECT_EQ(Duration("0.123456789s"), 123456789);
  // Digits far below the nanosecond are read but cannot change it.
  EXPECT_EQ(Duration("1.00000000000000000000000000001s"), kS);
}

TEST(DurationGrammar, TheLargestValueIsInt64MaxNanoseconds) {
  EXPECT_EQ(Duration("9223372036854775807ns"), INT64_MAX);
  EXPECT_EQ(Duration("9223372036.854775807s"), INT64_MAX);
  EXPECT_NE(DurationError("9223372036854775808ns").find("too large"), std::string::npos);
  EXPECT_NE(DurationError("9223372036.854775808s").find("too large"), std::string::npos);
  EXPECT_NE(DurationError("2562048h").find("too large"), std::string::npos);
  EXPECT_NE(DurationError("99999999999999999999999999999").find("too large"), std::string::npos);
}

TEST(DurationGrammar, BadValuesSayWhatIsWrong) {
  EXPECT_EQ(DurationError(""), "is empty");
  EXPECT_EQ(DurationError("  \t"), "is empty");
  EXPECT_EQ(DurationError("-5s"), "is negative");
  EXPECT_EQ(DurationError("-0"), "is negative");
  EXPECT_EQ(DurationError("+5s"), "has a sign, which only an offset takes");
  EXPECT_EQ(DurationError("s"), "does not start with a number");
  EXPECT_EQ(DurationError("soon"), "does not start with a number");
  EXPECT_EQ(DurationError(".5s"), "does not start with a number");
  EXPECT_EQ(DurationError("1.s"), "has no digits after its decimal point");
  EXPECT_EQ(DurationError("1."), "has no digits after its decimal point");
  EXPECT_EQ(DurationError("10 fortnights"), "has an unknown unit 'fortnights'");
  EXPECT_EQ(DurationError("5msx"), "has an unknown unit 'msx'");
  EXPECT_EQ(DurationError("5 S X"), "has 'X' after its unit");
  EXPECT_EQ(DurationError("1.2.3s"), "has '.3s' after its number");
  EXPECT_EQ(DurationError("1,5s"), "has ',5s' after its number");
  EXPECT_EQ(DurationError("1e9"), "has '9' after its unit");
  EXPECT_EQ(DurationError("5s;"), "has ';' after its unit");
}

TEST(DurationGrammar, OffsetsTakeASign) {
  int64_t ns = 0;
  std::string error;
  ASSERT_TRUE(ParseSignedDuration("+5ms", &ns, &error)) << error;
  EXPECT_EQ(ns, 5 * kMs);
  ASSERT_TRUE(ParseSignedDuration("-250us", &ns, &error)) << error;
  EXPECT_EQ(ns, -250 * kUs);
  ASSERT_TRUE(ParseSignedDuration(" -0.5 ", &ns, &error)) << error;
  EXPECT_EQ(ns, -500 * kMs);
  ASSERT_TRUE(ParseSignedDuration("3", &ns, &error)) << error;
  EXPECT_EQ(ns, 3 * kS);
  ASSERT_TRUE(ParseSignedDuration("-9223372036854775807ns", &ns, &error)) << error;
  EXPECT_EQ(ns, -INT64_MAX);
  ns = 17;
  EXPECT_FALSE(ParseSignedDuration("--5s", &ns, &error));
  EXPECT_EQ(error, "does not start with a number");
  EXPECT_FALSE(ParseSignedDuration("-", &ns, &error));
  EXPECT_FALSE(ParseSignedDuration("+5xs", &ns, &error));
  EXPECT_EQ(error, "has an unknown unit 'xs'");
  EXPECT_EQ(ns, 17);
}

// KATRACE_DELAY, KATRACE_DURATION and KATRACE_HANG_TIMEOUT read times with the same parser.
TEST(DurationGrammar, ThePluginsTimesAreThisGrammar) {
  katrace::CaptureSpan span;
  std::string error;
  ASSERT_TRUE(katrace::ParseCaptureSpan("1.5s", true, &span, &error)) << error;
  EXPECT_EQ(span.unit, katrace::CaptureSpan::kNanoseconds);
  EXPECT_EQ(span.value, static_cast<uint64_t>(1500 * kMs));
  ASSERT_TRUE(katrace::ParseCaptureSpan("90", false, &span, &error)) << error;
  EXPECT_EQ(span.value, static_cast<uint64_t>(90 * kS));
  EXPECT_FALSE(katrace::ParseCaptureSpan("5 fortnights", false, &span, &error));
  EXPECT_EQ(error, "has an unknown unit 'fortnights' (want " + std::string(katrace::kDurationSyntax) + ")");
  EXPECT_FALSE(katrace::ParseCaptureSpan("1.5colls", true, &span, &error));
  EXPECT_NE(error.find("whole number of collectives"), std::string::npos) << error;

  std::vector<std::string> warnings;
  std::map<std::string, std::string> vars = {{"KATRACE_HANG_TIMEOUT", "0.5"}, {"KATRACE_DELAY", "-3s"}};
  katrace::Config c = katrace::ReadConfig(
      [&](const char* name) {
        auto it = vars.find(name);
        return it == vars.end() ? static_cast<const char*>(nullptr) : it->second.c_str();
      },
      [&](const std::string& w) { warnings.push_back(w); });
  EXPECT_EQ(c.hang_timeout_ns, static_cast<uint64_t>(500 * kMs));
  EXPECT_EQ(c.delay.unit, katrace::CaptureSpan::kNone);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("KATRACE_DELAY='-3s' is negative (want a number with a unit", 0), 0u) << warnings[0];
  EXPECT_NE(warnings[0].find("2000colls"), std::string::npos) << warnings[0];
}

// katrace-merge's options, parsed as its main() does; stderr is captured for the messages.
struct MergeRun {
  int status = 0;
  std::string err;
  katrace::tools::MergeOptions options;
};

MergeRun Merge(std::vector<std::string> args) {
  args.insert(args.begin(), "katrace-merge");
  args.insert(args.end(), {"-o", "merged.json", "in.json"});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  MergeRun run;
  testing::internal::CaptureStderr();
  run.status = katrace::tools::ParseMergeOptions(static_cast<int>(argv.size()), argv.data(), &run.options);
  run.err = testing::internal::GetCapturedStderr();
  return run;
}

TEST(DurationGrammar, MergeWindowsAreThisGrammar) {
  MergeRun run = Merge({"--from", "1.5", "--to=2s"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.options.from_ns, 1500 * kMs);
  EXPECT_EQ(run.options.to_ns, 2 * kS);
  run = Merge({"--from", "100"});  // seconds, where it used to be refused
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.options.from_ns, 100 * kS);
  run = Merge({"--from", "-1s"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err, "katrace-merge: --from: '-1s' is negative (want " + std::string(katrace::kDurationSyntax) + ")\n");
  run = Merge({"--to", "3 parsecs"});
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("--to: '3 parsecs' has an unknown unit 'parsecs'"), std::string::npos) << run.err;
}

// katrace-sim's options, parsed as its main() does.
katrace::sim::ParseOutcome Sim(std::vector<std::string> args, katrace::sim::SimConfig* config, std::string* error) {
  args.insert(args.begin(), "katrace-sim");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return katrace::sim::ParseCommandLine(static_cast<int>(argv.size()), argv.data(), "x.so", config, error);
}

TEST(DurationGrammar, SimDurationsAreThisGrammar) {
  using katrace::sim::ParseOutcome;
  katrace::sim::SimConfig config;
  std::string error;
  ASSERT_EQ(Sim({"--hang-for", "1.5", "--gpu-clock", "offset:-250us", "--gpu-jitter", "300ns"}, &config, &error),
            ParseOutcome::kRun)
      << error;
  EXPECT_EQ(config.hang.hold_ns, static_cast<uint64_t>(1500 * kMs));
  EXPECT_EQ(config.gpu_clock.offset_ns, -250 * kUs);
  EXPECT_EQ(config.gpu_clock.jitter_ns, 300u);
  config = katrace::sim::SimConfig();
  ASSERT_EQ(Sim({"--hang-for=2500ms", "--gpu-clock", "offset:+2", "--gpu-jitter", "0.5us"}, &config, &error),
            ParseOutcome::kRun)
      << error;
  EXPECT_EQ(config.hang.hold_ns, static_cast<uint64_t>(2500 * kMs));
  EXPECT_EQ(config.gpu_clock.offset_ns, 2 * kS);  // a bare offset is seconds too
  EXPECT_EQ(config.gpu_clock.jitter_ns, 500u);

  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--hang-for", "0"}, "--hang-for: '0' is not a positive duration within an hour"},
      {{"--hang-for", "2h"}, "--hang-for: '2h' is not a positive duration within an hour"},
      {{"--hang-for", "-2s"}, "--hang-for: '-2s' is negative (want "},
      {{"--gpu-clock", "offset:+2h"}, "--gpu-clock: 'offset:+2h': the offset is not within an hour either way"},
      {{"--gpu-clock", "offset:+5xs"}, "--gpu-clock: 'offset:+5xs': the offset has an unknown unit 'xs'"},
      {{"--gpu-clock", "offset:"}, "--gpu-clock: 'offset:': the offset is empty"},
      {{"--gpu-jitter", "1"}, "--gpu-jitter: '1' is not at most 1ms"},  // one second
      {{"--gpu-jitter", "-1"}, "--gpu-jitter: '-1' is negative"},
  };
  for (const auto& [args, message] : bad) {
    config = katrace::sim::SimConfig();
    error.clear();
    EXPECT_EQ(Sim(args, &config, &error), ParseOutcome::kError) << args[1];
    EXPECT_EQ(error.rfind(message, 0), 0u) << error;
  }
}

// The kind grammar of KATRACE_MASK: sets and the errors that name what is accepted.
TEST(KindGrammar, MasksRefuseDerivedKindsAndNameWhatTheyTake) {
  int mask = 5;
  std::string error;
  EXPECT_FALSE(katrace::ParseEventMask("coll,CollGpu", &mask, &error));
  EXPECT_EQ(error, "'CollGpu' is not recorded but derived from Coll at export (name coll to record it)");
  EXPECT_FALSE(katrace::ParseEventMask("coll,bogus", &mask, &error));
  EXPECT_EQ(error, "unknown event name 'bogus' (known: " + katrace::EventMaskWords() + ")");
  EXPECT_NE(error.find("kernelstep"), std::string::npos);
  EXPECT_EQ(error.find("flow"), std::string::npos);
  EXPECT_FALSE(katrace::ParseEventMask("coll,-", &mask, &error));
  EXPECT_EQ(error.rfind("'-' without a name", 0), 0u) << error;
  EXPECT_EQ(mask, 5);
  ASSERT_TRUE(katrace::ParseEventMask("host", &mask, &error)) << error;
  EXPECT_EQ(mask, katrace::kAllKindsMask & ~(ncclProfileKernelCh | ncclProfileKernelStep));
  ASSERT_TRUE(katrace::ParseEventMask("HOST,GPU", &mask, &error)) << error;
  EXPECT_EQ(mask, katrace::kAllKindsMask);
}

using Cats = std::set<std::string>;

// The `cat`s --kinds keeps; nullopt when it keeps everything. Fails the test on a parse error.
std::optional<Cats> Kinds(const std::string& text) {
  std::optional<Cats> kinds = Cats{"unset"};
  std::string error;
  EXPECT_TRUE(katrace::tools::ParseMergeKinds(text, &kinds, &error)) << text << ": " << error;
  return kinds;
}

std::string KindsError(const std::string& text) {
  std::optional<Cats> kinds;
  std::string error;
  EXPECT_FALSE(katrace::tools::ParseMergeKinds(text, &kinds, &error)) << text;
  EXPECT_FALSE(kinds.has_value()) << text;
  return error;
}

// `KATRACE_MASK=coll` worked while `--kinds coll` failed: now the words are the same.
TEST(KindGrammar, MergeKindsAreCaseInsensitiveMaskWords) {
  EXPECT_EQ(Kinds("coll"), (Cats{"Coll", "CollGpu"}));
  EXPECT_EQ(Kinds("COLL"), Kinds("Coll"));
  EXPECT_EQ(Kinds("Coll,KernelCh"), (Cats{"Coll", "CollGpu", "KernelCh"}));
  EXPECT_EQ(Kinds("p2p+kernelch|ProxyOp  groupapi"), (Cats{"P2p", "KernelCh", "ProxyOp", "GroupApi"}));
  EXPECT_EQ(Kinds("2"), (Cats{"Coll", "CollGpu"}));  // a number is a mask: ncclProfileColl's bit
  EXPECT_EQ(Kinds("0x1000"), (Cats{"CeColl"}));
}

TEST(KindGrammar, MergeKindsTakeTheDerivedKinds) {
  EXPECT_EQ(Kinds("collgpu"), (Cats{"CollGpu"}));
  EXPECT_EQ(Kinds("KernelStepWait,kernelsteptransfer"), (Cats{"KernelStepWait", "KernelStepTransfer"}));
  EXPECT_EQ(Kinds("proxystepstate"), (Cats{"ProxyStepState"}));
  EXPECT_EQ(Kinds("kernelstep"), (Cats{"KernelStep", "KernelStepWait", "KernelStepTransfer"}));
  EXPECT_EQ(Kinds("kernelstep,-kernelstepwait"), (Cats{"KernelStep", "KernelStepTransfer"}));
  EXPECT_EQ(Kinds("coll,-collgpu"), (Cats{"Coll"}));
}

TEST(KindGrammar, MergeKindsTakeTheSetsAndExclusions) {
  EXPECT_EQ(Kinds("gpu"), (Cats{"KernelCh", "KernelStep", "KernelStepWait", "KernelStepTransfer"}));
  EXPECT_EQ(Kinds("proxy"), (Cats{"ProxyOp", "ProxyStep", "ProxyCtrl", "ProxyStepState"}));
  EXPECT_EQ(Kinds("api"), (Cats{"GroupApi", "CollApi", "P2pApi", "KernelLaunch"}));
  EXPECT_EQ(Kinds("ce,-cesync"), (Cats{"CeColl", "CeBatch"}));
  EXPECT_EQ(Kinds("host"), (Cats{"GroupApi", "CollApi", "P2pApi", "KernelLaunch", "Group", "Coll", "P2p", "ProxyOp",
                                 "ProxyStep", "ProxyCtrl", "NetPlugin", "CeColl", "CeSync", "CeBatch", "CollGpu",
                                 "ProxyStepState"}));
  EXPECT_EQ(Kinds("default"), (Cats{"GroupApi", "CollApi", "P2pApi", "KernelLaunch", "Coll", "P2p", "ProxyOp",
                                    "KernelCh", "KernelStep", "CollGpu", "KernelStepWait", "KernelStepTransfer"}));
  EXPECT_EQ(Kinds("none"), Cats{});
  EXPECT_EQ(Kinds("none,flow"), Cats{"flow"});
  EXPECT_EQ(Kinds("flow,counter+instant"), (Cats{"flow", "counter", "instant"}));
  EXPECT_EQ(Kinds("gpu,-kernelstep"), Cats{"KernelCh"});
  // Left to right: a later word adds back what an earlier one removed.
  EXPECT_EQ(Kinds("gpu,-kernelstep,kernelstepwait"), (Cats{"KernelCh", "KernelStepWait"}));
}

// `all` is everything, flows and counters too: the same as no --kinds.
TEST(KindGrammar, MergeAllKeepsEverything) {
  EXPECT_EQ(Kinds("all"), std::nullopt);
  EXPECT_EQ(Kinds("ALL,coll"), std::nullopt);
  std::optional<Cats> most = Kinds("all,-proxystep");
  ASSERT_TRUE(most.has_value());
  EXPECT_EQ(most->count("ProxyStep"), 0u);
  EXPECT_EQ(most->count("ProxyStepState"), 0u);
  for (const char* kept : {"Coll", "CollGpu", "KernelStep", "KernelStepWait", "flow", "counter", "instant"}) {
    EXPECT_EQ(most->count(kept), 1u) << kept;
  }
  EXPECT_EQ(most->size(), static_cast<size_t>(katrace::kKindCount) + 4 + 3 - 2);
  std::optional<Cats> no_flows = Kinds("all,-flow");
  ASSERT_TRUE(no_flows.has_value());
  EXPECT_EQ(no_flows->count("flow"), 0u);
  EXPECT_EQ(no_flows->count("counter"), 1u);
}

TEST(KindGrammar, BadMergeKindsNameTheWordAndTheAcceptedOnes) {
  const std::string error = KindsError("coll,Bogus");
  EXPECT_EQ(error.rfind("--kinds: 'coll,Bogus': unknown event name 'Bogus' (known: ", 0), 0u) << error;
  for (const char* name : {"coll", "kernelstep", "collgpu", "kernelstepwait", "kernelsteptransfer", "proxystepstate",
                           "host", "gpu", "all", "none", "flow", "counter", "instant"}) {
    EXPECT_NE(error.find(name), std::string::npos) << name << " missing from: " << error;
  }
  EXPECT_EQ(KindsError(""), "--kinds: '': empty list");
  EXPECT_EQ(KindsError("12abc"), "--kinds: '12abc': not a valid number");
  EXPECT_EQ(KindsError("coll,-").rfind("--kinds: 'coll,-': '-' without a name", 0), 0u);
}

TEST(KindGrammar, MergeOptionsParseKindsWithTheOneParser) {
  MergeRun run = Merge({"--kinds", "coll"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.options.kinds, (Cats{"Coll", "CollGpu"}));
  run = Merge({"--kinds=gpu,flow"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.options.kinds, (Cats{"KernelCh", "KernelStep", "KernelStepWait", "KernelStepTransfer", "flow"}));
  run = Merge({"--kinds", "all"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_FALSE(run.options.kinds.has_value());
  run = Merge({});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_FALSE(run.options.kinds.has_value());
  run = Merge({"--kinds", "coll,frobnicate"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err.rfind("katrace-merge: --kinds: 'coll,frobnicate': unknown event name 'frobnicate' (known: ", 0),
            0u)
      << run.err;
  EXPECT_NE(run.err.find("collgpu"), std::string::npos) << run.err;
}

// The help says what is accepted.
TEST(KindGrammar, MergeHelpNamesTheGrammars) {
  const std::string usage = katrace::tools::kMergeUsage;
  for (const char* word : {"KATRACE_MASK", "collgpu", "kernelstepwait", "kernelsteptransfer", "proxystepstate",
                           "-name", "flow, counter and instant", "a bare", "number is seconds"}) {
    EXPECT_NE(usage.find(word), std::string::npos) << word;
  }
}

}  // namespace
