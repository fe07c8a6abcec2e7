// katrace-check, katrace-stats and katrace-merge on hostile files: gigabytes of whitespace, a name
// of many megabytes, deep nesting, bytes that are not UTF-8, and 200k slices sharing a start.
// Each tool must stay bounded in memory, time and output and fail with one clear message. The
// files are made here, in a temporary folder, as gzip members written through zlib (one member
// compressed once and repeated, so a GiB of input costs the test a few milliseconds to make).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test/support/subprocess.h"
#include "test/support/tool_runner.h"

namespace {

namespace fs = std::filesystem;
using katrace_test::ReadWholeFile;
using katrace_test::TestDataDir;
using katrace_test::ToolBinDir;

extern "C" char** environ;

// The sanitizer runs set KATRACE_TEST_SCALE (e.g. 0.1) to shrink the big inputs: their
// instrumented tools are several times slower, and the caps under test do not depend on size.
double Scale() {
  const char* text = std::getenv("KATRACE_TEST_SCALE");
  const double scale = text == nullptr ? 1.0 : std::atof(text);
  return scale > 0 && scale <= 1 ? scale : 1.0;
}

bool Sanitized() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#else
  return false;
#endif
}

struct Measured {
  int exit_code = -1;
  std::string head;           // the first 64 KiB of stdout and stderr together
  uint64_t output_bytes = 0;  // all of it
  long max_rss_kb = 0;
  double seconds = 0;
};

// Runs |tool| with |args|, counting its output and its peak RSS (from wait4's rusage).
Measured RunMeasured(const std::string& tool, const std::vector<std::string>& args) {
  Measured m;
  const std::string path = (ToolBinDir() / tool).string();
  std::vector<char*> argv{const_cast<char*>(path.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int fds[2];
  if (pipe(fds) != 0) return m;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    return m;
  }
  char buf[65536];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) {
    m.output_bytes += static_cast<uint64_t>(n);
    if (m.head.size() < 65536) m.head.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  m.max_rss_kb = usage.ru_maxrss;
  return m;
}

// One complete gzip member holding |data|.
std::string GzipMember(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// A gzip file that inflates to |prefix|, |fill_mib| MiB of |fill|, then |suffix|; zlib reads
// the concatenated members as one stream.
void WriteHostileGzip(const fs::path& path, const std::string& prefix, char fill,
                      uint64_t fill_mib, const std::string& suffix) {
  std::ofstream out(path, std::ios::binary);
  if (!prefix.empty()) out << GzipMember(prefix);
  const std::string chunk = GzipMember(std::string(size_t{1} << 20, fill));
  for (uint64_t i = 0; i < fill_mib; ++i) out << chunk;
  if (!suffix.empty()) out << GzipMember(suffix);
}

class HostileInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/katrace-hostile-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    valid_ = ReadWholeFile(TestDataDir() / "valid_rank0.json");
    ASSERT_FALSE(valid_.empty());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The issue's targets: under 512 MiB RSS and 20 s, under 1 MiB of output, a non-zero exit
  // and one clear message (a few lines at most; |message| among them). Sanitized builds have
  // their own memory overhead and speed, so they are held to the output and the exit only.
  static void ExpectBoundedFailure(const std::string& tool, const std::vector<std::string>& args,
                                   const std::string& message) {
    const Measured m = RunMeasured(tool, args);
    SCOPED_TRACE(tool + ": " + m.head.substr(0, 2000));
    EXPECT_NE(m.exit_code, 0);
    EXPECT_NE(m.exit_code, -1);
    EXPECT_LT(m.output_bytes, 1u << 20);
    EXPECT_NE(m.head.find(message), std::string::npos) << "expected: " << message;
    size_t lines = 0;
    for (char c : m.head) lines += c == '\n';
    EXPECT_LE(lines, 4u);
    if (!Sanitized()) {
      EXPECT_LT(m.max_rss_kb, 512 * 1024);
      EXPECT_LT(m.seconds, 20.0);
    }
    std::printf("    %s: exit %d, %.2f s, %ld MiB RSS, %llu bytes of output\n", tool.c_str(),
                m.exit_code, m.seconds, m.max_rss_kb / 1024,
                static_cast<unsigned long long>(m.output_bytes));
  }

  std::string Out(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
  std::string valid_;
};

TEST_F(HostileInputTest, AGibibyteOfWhitespaceStaysBounded) {
  // About 1 MiB of gzip that inflates to 1 GiB of blanks: nlohmann's lexer kept all of it.
  // The three tools share the reader, so the full GiB goes through one of them (a few seconds)
  // and 64 MiB through the others.
  const fs::path blanks = dir_ / "blanks.json.gz";
  WriteHostileGzip(blanks, "", ' ', static_cast<uint64_t>(1024 * Scale()), "");
  ExpectBoundedFailure("katrace-check", {blanks.string()}, "input ends before the trace begins");
  const fs::path some = dir_ / "some-blanks.json.gz";
  WriteHostileGzip(some, "", ' ', 64, "");
  ExpectBoundedFailure("katrace-stats", {some.string()}, "input ends before the trace begins");
  ExpectBoundedFailure("katrace-merge", {"-o", Out("m.json"), some.string()},
                       "input ends before the trace begins");
}

TEST_F(HostileInputTest, WhitespaceInsideTheEventListStaysBounded) {
  const fs::path path = dir_ / "open.json.gz";
  WriteHostileGzip(path, "{\"traceEvents\":[", '\n', 64, "");
  ExpectBoundedFailure("katrace-check", {path.string()}, "input ends inside traceEvents");
  ExpectBoundedFailure("katrace-stats", {path.string()}, "input ends inside traceEvents");
  ExpectBoundedFailure("katrace-merge", {"-o", Out("m.json"), path.string()},
                       "input ends inside traceEvents");
}

TEST_F(HostileInputTest, AHugeNameStopsAtTheStringCap) {
  // The cap (1 MiB) makes the name's real size irrelevant: 8 MiB shows the same as 2 GiB.
  const fs::path path = dir_ / "name.json.gz";
  WriteHostileGzip(path, "{\"traceEvents\":[{\"name\":\"", 'A', 8, "\",\"ph\":\"X\"}]}");
  const std::string message = "a string longer than 1048576 bytes";
  ExpectBoundedFailure("katrace-check", {path.string()}, message);
  ExpectBoundedFailure("katrace-stats", {path.string()}, message);
  ExpectBoundedFailure("katrace-merge", {"-o", Out("m.json"), path.string()}, message);
}

TEST_F(HostileInputTest, DeepNestingStopsAtTheDepthCap) {
  const fs::path path = dir_ / "deep.json.gz";
  WriteHostileGzip(path, "{\"traceEvents\":[", '[', 4, "");
  ExpectBoundedFailure("katrace-check", {path.string()}, "nesting deeper than 512 levels");
  ExpectBoundedFailure("katrace-stats", {path.string()}, "nesting deeper than 512 levels");
}

TEST_F(HostileInputTest, DiagnosticsQuoteAtMostAFewHundredBytesOfAName) {
  // Under the string cap, so the event is read; its unknown kind is quoted, but cut.
  const std::string cat(900 * 1024, 'k');
  const size_t at = valid_.find("\"cat\":\"Coll\"");
  ASSERT_NE(at, std::string::npos);
  std::string text = valid_;
  text.replace(at, 12, "\"cat\":\"" + cat + "\"");
  const fs::path path = dir_ / "bigcat.json";
  std::ofstream(path, std::ios::binary) << text;
  const Measured m = RunMeasured("katrace-check", {path.string()});
  EXPECT_LT(m.output_bytes, 16u * 1024) << m.head.substr(0, 4000);
  EXPECT_NE(m.head.find("...' (921600 bytes)"), std::string::npos) << m.head.substr(0, 4000);
}

TEST_F(HostileInputTest, BytesThatAreNotUtf8AreReplacedAndReported) {
  std::string text = valid_;
  const size_t host = text.find("\"host\":\"node0\"");
  ASSERT_NE(host, std::string::npos);
  text.replace(host, 14, "\"host\":\"no\xff\xc3(de\xe2\x82\"");
  const fs::path path = dir_ / "bad-utf8.json";
  std::ofstream(path, std::ios::binary) << text;
  const Measured check = RunMeasured("katrace-check", {path.string()});
  EXPECT_EQ(check.exit_code, 1) << check.head;
  EXPECT_NE(check.head.find("1 string holds bytes that are not UTF-8 [utf8]"), std::string::npos)
      << check.head;
  // What the other tools write from it is strict JSON: the bad bytes became U+FFFD.
  const std::string merged = Out("merged.json");
  const Measured merge = RunMeasured("katrace-merge", {"-q", "-o", merged, path.string()});
  EXPECT_EQ(merge.exit_code, 0) << merge.head;
  const std::string stats = Out("stats.json");
  const Measured stat = RunMeasured("katrace-stats", {"--format", "json", "-o", stats,
                                                      path.string()});
  EXPECT_EQ(stat.exit_code, 0) << stat.head;
  // nlohmann's parser is strict (RFC 8259): ill-formed UTF-8 in a string fails the parse.
  for (const std::string& out : {merged, stats}) {
    EXPECT_NO_THROW(nlohmann::json parsed = nlohmann::json::parse(ReadWholeFile(out))) << out;
  }
  EXPECT_NE(ReadWholeFile(merged).find("no\xef\xbf\xbd\xef\xbf\xbd(de\xef\xbf\xbd"),
            std::string::npos);
}

TEST_F(HostileInputTest, TwoHundredThousandSlicesSharingAStartCheckInSeconds) {
  // Same start, same end, one track: the same-start rule used to scan them all for each one.
  std::string slices;
  const std::string slice =
      "{\"name\":\"s\",\"cat\":\"Coll\",\"ph\":\"X\",\"pid\":0,\"tid\":1,\"ts\":10.000,"
      "\"dur\":5.000,\"args\":{}},\n";
  for (int i = 0; i < 200000; ++i) slices += slice;
  // And a child written before its same-start parent, which must still be found.
  slices +=
      "{\"name\":\"c\",\"cat\":\"Coll\",\"ph\":\"X\",\"pid\":0,\"tid\":1,\"ts\":20.000,"
      "\"dur\":1.000,\"args\":{}},\n"
      "{\"name\":\"p\",\"cat\":\"Coll\",\"ph\":\"X\",\"pid\":0,\"tid\":1,\"ts\":20.000,"
      "\"dur\":2.000,\"args\":{}},\n";
  // Right after the header event, whose line ends in ",\n" as each inserted one does.
  std::string text = valid_;
  const size_t second_line = text.find("},\n{\"name\":\"thread_name\"");
  ASSERT_NE(second_line, std::string::npos);
  text.insert(second_line + 3, slices);
  const fs::path path = dir_ / "same-start.json";
  std::ofstream(path, std::ios::binary) << text;
  const Measured m = RunMeasured("katrace-check", {path.string()});
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_NE(m.head.find("starts with the longer event #"), std::string::npos)
      << m.head.substr(0, 4000);
  EXPECT_LT(m.output_bytes, 1u << 20);
  EXPECT_LT(m.seconds, Sanitized() ? 60.0 : 10.0);
  std::printf("    200k same-start slices: %.2f s\n", m.seconds);
}

}  // namespace
