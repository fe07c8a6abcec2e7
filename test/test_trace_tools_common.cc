// The shared pieces under tools/common (streaming reader, external sorter, time text and
// command-line helpers) and those of common/ the tools use (the output file, names and numbers).
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "common/duration.h"
#include "common/ends_with.h"
#include "common/hex16.h"
#include "common/human_bytes.h"
#include "common/in_place_path.h"
#include "common/output_file.h"
#include "common/paths.h"
#include "common/utf8_sequence.h"
#include "plugin/export/json_buffer.h"
#include "test/support/scoped_env.h"
#include "test/support/synthetic_trace.h"
#include "tools/common/cli_args.h"
#include "tools/common/external_sorter.h"
#include "tools/common/json_fields.h"
#include "tools/common/trace_header.h"
#include "tools/common/trace_reader.h"
#include "tools/common/utf8_text.h"

namespace katrace::tools {
namespace {

namespace fs = std::filesystem;
using katrace_test::SyntheticRankOptions;
using katrace_test::SyntheticTraceText;
using katrace_test::WriteSyntheticProcessTrace;
using katrace_test::WriteSyntheticTrace;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/katrace-common-test-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& text) const {
    OutputFile out;
    std::string error;
    const std::string path = (path_ / name).string();
    EXPECT_TRUE(out.Open(path, EndsWith(path, ".gz"), &error)) << error;
    out.Write(text);
    EXPECT_TRUE(out.Commit(&error)) << error;
    return path;
  }

 private:
  fs::path path_;
};

struct Collect : TraceVisitor {
  std::vector<TraceEvent> events;
  int non_objects = 0;
  Json other;
  size_t stop_after = SIZE_MAX;
  bool OnEvent(const TraceEvent& event) override {
    events.push_back(event);
    return events.size() < stop_after;
  }
  void OnNonObjectEvent(uint64_t, uint64_t) override { ++non_objects; }
  void OnOtherData(const Json& o) override { other = o; }
};

TEST(TraceReaderTest, StreamsEventsWithIndexAndLine) {
  TempDir dir;
  const std::string path = dir.Write(
      "t.json", "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n{\"a\":1},\n\n{\"b\":{\"c\":[1,2]}},\n"
                "7],\n\"otherData\":{\"katrace\":{\"x\":1}}}\n");
  Collect c;
  const ReadResult r = ReadTrace(path, &c);
  ASSERT_EQ(r.status, ReadStatus::kOk) << r.message;
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[0].index, 0u);
  EXPECT_EQ(c.events[0].line, 2u);
  EXPECT_EQ(c.events[1].index, 1u);
  EXPECT_EQ(c.events[1].line, 4u);
  EXPECT_EQ(c.events[1].json["b"]["c"][1], 2);
  EXPECT_EQ(c.non_objects, 1);
  EXPECT_EQ(c.other["katrace"]["x"], 1);
  EXPECT_TRUE(r.has_other_data);
}

TEST(TraceReaderTest, ReadsTheBareArrayFormAndGzip) {
  TempDir dir;
  const std::string path = dir.Write("t.json.gz", "[{\"a\":1},{\"a\":2}]");
  Collect c;
  const ReadResult r = ReadTrace(path, &c);
  EXPECT_EQ(r.status, ReadStatus::kOk) << r.message;
  EXPECT_TRUE(r.is_gzip);
  EXPECT_EQ(c.events.size(), 2u);
}

TEST(TraceReaderTest, TellsWhyAFileCannotBeRead) {
  TempDir dir;
  Collect c;
  EXPECT_EQ(ReadTrace(dir.Write("e.json", ""), &c).message, "empty file");
  const ReadResult cut = ReadTrace(dir.Write("c.json", "{\"traceEvents\":[{\"a\":1},{\"a\""), &c);
  EXPECT_EQ(cut.status, ReadStatus::kTruncated);
  EXPECT_EQ(cut.message,
            "truncated: input ends inside traceEvents after 1 complete event (no closing ']')");
  const ReadResult bad = ReadTrace(dir.Write("b.json", "{\"traceEvents\":[{\"a\":1}}]}"), &c);
  EXPECT_EQ(bad.status, ReadStatus::kBadJson);
  EXPECT_NE(bad.message.find("line 1"), std::string::npos) << bad.message;
  EXPECT_EQ(ReadTrace(dir.Write("n.json", "{\"x\":[]}"), &c).status, ReadStatus::kNotATrace);
  EXPECT_EQ(ReadTrace(dir.Write("s.json", "42"), &c).status, ReadStatus::kNotATrace);
  // NVTXT, katrace's third format, is Nsight Systems' to read: said so, whatever its name.
  for (const char* text : {"# katrace NCCL profiler trace, NVTXT\nSetFileDisplayName(x)\n",
                           "SetFileDisplayName(x)\n", "@Marker, Time, ThreadId, Message\n"}) {
    const ReadResult nvtxt = ReadTrace(dir.Write("t.json", text), &c);
    EXPECT_EQ(nvtxt.status, ReadStatus::kNotATrace) << text;
    EXPECT_NE(nvtxt.message.find("an NVTXT file"), std::string::npos) << nvtxt.message;
    EXPECT_NE(nvtxt.message.find("ImportNvtxt"), std::string::npos) << nvtxt.message;
  }
  EXPECT_EQ(ReadTrace(dir.Write("s.json", "Set"), &c).status, ReadStatus::kBadJson);
  // A spool (the capture before its export) is katrace-export's to read.
  const ReadResult spool = ReadTrace(dir.Write("t.json", std::string("KASPOOL1\x02\0\0\0", 12)), &c);
  EXPECT_EQ(spool.status, ReadStatus::kNotATrace);
  EXPECT_EQ(spool.message, "a katrace spool (a capture not yet exported): katrace-export FILE writes its trace");
  EXPECT_EQ(ReadTrace("/nonexistent/katrace.json", &c).status, ReadStatus::kOpenError);
}

TEST(TraceReaderTest, VisitorCanStopEarly) {
  TempDir dir;
  Collect c;
  c.stop_after = 1;
  const ReadResult r = ReadTrace(dir.Write("t.json", "[{\"a\":1},{\"a\":2},{\"a\":3}]"), &c);
  EXPECT_EQ(r.status, ReadStatus::kStopped);
  EXPECT_EQ(c.events.size(), 1u);
}

TEST(TraceHeaderTest, ProbesTheHeaderOfASyntheticTrace) {
  TempDir dir;
  SyntheticRankOptions o;
  o.rank = 3;
  o.base_realtime_ns = 123456789;
  std::string error;
  const std::string path = dir.Write("r3.json.gz", SyntheticTraceText(o));
  const HeaderProbe probe = ProbeHeader(path);
  ASSERT_TRUE(probe.found) << probe.problem;
  EXPECT_EQ(probe.header.rank, 3);
  EXPECT_EQ(probe.header.base_realtime_ns, 123456789);
  EXPECT_EQ(probe.read.status, ReadStatus::kStopped);
}

// A file of two ranks lists both in the header; an older one-rank header still gives its rank.
TEST(TraceHeaderTest, ReadsTheRanksOfAFile) {
  TempDir dir;
  SyntheticRankOptions a, b;
  a.pid = 6;
  b.rank = 1;
  b.pid = 7;
  std::string text;
  WriteSyntheticProcessTrace({a, b}, [&text](std::string_view piece) { text.append(piece); });
  const HeaderProbe probe = ProbeHeader(dir.Write("two.json", text));
  ASSERT_TRUE(probe.found) << probe.problem;
  EXPECT_EQ(probe.header.rank, 6);
  EXPECT_EQ(probe.header.Pids(), (std::vector<int64_t>{6, 7}));
  EXPECT_EQ(probe.header.ranks[1].world_rank, 7);
  EXPECT_EQ(probe.header.ranks[1].cuda_device, 1);
  SyntheticRankOptions old;
  old.rank = 3;
  const HeaderProbe one = ProbeHeader(dir.Write("old.json", SyntheticTraceText(old)));
  ASSERT_TRUE(one.found) << one.problem;
  EXPECT_EQ(one.header.Pids(), (std::vector<int64_t>{3}));
  // Same host, OS pid and clock base: copies of one capture; another OS pid is another process.
  TraceHeader copy = one.header;
  EXPECT_TRUE(copy.SameCapture(one.header));
  copy.os_pid += 1;
  EXPECT_FALSE(copy.SameCapture(one.header));
}

TEST(TraceHeaderTest, ABadRanksListIsNamed) {
  Json header = Json::parse(R"({"format":"katrace-trace","version":1,"rank":0,"host":"h",
      "os_pid":1,"base_realtime_ns":1,"base_monotonic_ns":1,"ranks":[{"world_rank":0}]})");
  TraceHeader parsed;
  std::vector<std::string> problems;
  EXPECT_FALSE(ParseHeader(header, &parsed, &problems));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "header 'ranks' entry without an integer 'pid': {\"world_rank\":0}");
  header["ranks"] = 5;
  problems.clear();
  EXPECT_FALSE(ParseHeader(header, &parsed, &problems));
  EXPECT_EQ(problems.at(0).rfind("header 'ranks' must be an array", 0), 0u);
}

struct Rec {
  uint64_t key;
  uint64_t order;
};
struct RecLess {
  bool operator()(const Rec& a, const Rec& b) const {
    return std::tie(a.key, a.order) < std::tie(b.key, b.order);
  }
};

TEST(ExternalSorterTest, SpillsAndMergesInOrder) {
  std::mt19937_64 rng(3);
  std::vector<Rec> all;
  ExternalSorter<Rec, RecLess> sorter(64 * sizeof(Rec));  // forces many runs
  for (uint64_t i = 0; i < 5000; ++i) {
    const Rec r{rng() % 97, i};
    all.push_back(r);
    ASSERT_TRUE(sorter.Add(r));
  }
  ASSERT_TRUE(sorter.Finish()) << sorter.error();
  EXPECT_GT(sorter.spilled_runs(), 10u);
  std::sort(all.begin(), all.end(), RecLess());
  Rec r;
  size_t i = 0;
  while (sorter.Next(&r)) {
    ASSERT_LT(i, all.size());
    EXPECT_EQ(r.key, all[i].key);
    EXPECT_EQ(r.order, all[i].order);
    ++i;
  }
  EXPECT_EQ(i, all.size());
}

TEST(ExternalSorterTest, SmallInputsStayInMemory) {
  ExternalSorter<Rec, RecLess> sorter(1 << 20);
  for (uint64_t i = 0; i < 10; ++i) sorter.Add(Rec{10 - i, i});
  ASSERT_TRUE(sorter.Finish());
  EXPECT_EQ(sorter.spilled_runs(), 0u);
  Rec r;
  ASSERT_TRUE(sorter.Next(&r));
  EXPECT_EQ(r.key, 1u);
}

TEST(OutputFileTest, WritesAPipeInPlaceInsteadOfRenamingOverIt) {
  // Regression: output to /dev/null once replaced the device with a regular file by renaming
  // "<path>.tmp" over it. A FIFO stands in for the device here.
  const fs::path dir = fs::temp_directory_path() / ("katrace-fifo-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string fifo = (dir / "pipe").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] {
    std::ifstream in(fifo, std::ios::binary);
    received.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  });
  OutputFile out;
  std::string error;
  ASSERT_TRUE(out.Open(fifo, false, &error)) << error;
  out.Write("hello");
  EXPECT_TRUE(out.Commit(&error)) << error;
  reader.join();
  EXPECT_EQ(received, "hello");
  struct stat st;
  ASSERT_EQ(stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_FALSE(fs::exists(fifo + ".tmp." + std::to_string(getpid())));
  fs::remove_all(dir);
}

// The plugin's policy keeps a failed output's temporary file for what it holds; one that holds
// nothing (a disk full from the start) is removed, not left as an empty file. Writes are made to
// fail with a file size limit, as on a disk that fills up.
TEST(OutputFileTest, AFailedOutputKeepsItsPartialFileButNeverAnEmptyOne) {
  OutputFilePolicy keep;
  keep.keep_failed_temp = true;
  struct sigaction ignore = {}, old_action = {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGXFSZ, &ignore, &old_action), 0);
  rlimit before;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &before), 0);
  for (rlim_t limit : {rlim_t{0}, rlim_t{4096}}) {
    TempDir dir;
    const std::string path = (dir.path() / "out.json").string();
    OutputFile out(keep);
    std::string error;
    ASSERT_TRUE(out.Open(path, false, &error)) << error;
    out.Write(std::string(64 << 10, 'x'));
    rlimit limited = before;
    limited.rlim_cur = limit;
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
    const bool committed = out.Commit(&error);
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &before), 0);
    EXPECT_FALSE(committed) << limit;
    struct stat st;
    if (limit == 0) {
      EXPECT_TRUE(out.temp_holds_nothing());
      EXPECT_NE(stat(out.temp_path().c_str(), &st), 0) << "an empty temporary file was left";
    } else {
      ASSERT_EQ(stat(out.temp_path().c_str(), &st), 0) << "the partial file is kept";
      EXPECT_EQ(st.st_size, 4096);
    }
  }
  ASSERT_EQ(sigaction(SIGXFSZ, &old_action, nullptr), 0);
}

// Regression: a FIFO that no process opened for reading blocked open() for good (the plugin hung
// at the application's exit). It now fails after the policy's wait, and says why.
TEST(OutputFileTest, AFifoThatNobodyReadsFailsAfterAWaitInsteadOfHanging) {
  TempDir dir;
  const std::string fifo = (dir.path() / "pipe").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  OutputFilePolicy policy;
  policy.fifo_reader_wait_ms = 100;
  OutputFile out(policy);
  std::string error;
  EXPECT_FALSE(out.Open(fifo, false, &error));
  EXPECT_EQ(out.failed_reason(), "no process opened the FIFO for reading within 100 ms");
  EXPECT_NE(error.find(fifo), std::string::npos) << error;
  struct stat st;
  ASSERT_EQ(stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

// Regression: a pipe's reader that went away killed the writing process with SIGPIPE (the
// plugin took the application down at exit). The write now fails with EPIPE, the signal is not
// left pending and the thread's signal mask is as it was.
TEST(OutputFileTest, APipeWhoseReaderLeavesFailsTheOutputNotTheProcess) {
  TempDir dir;
  const std::string fifo = (dir.path() / "pipe").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::thread reader([&] {
    std::ifstream in(fifo, std::ios::binary);
    char first[16];
    in.read(first, sizeof(first));
  });  // closes its end after 16 bytes
  sigset_t before;
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, nullptr, &before), 0);
  for (bool gzip : {false, true}) {
    if (gzip) {
      reader.join();
      reader = std::thread([&] {
        std::ifstream in(fifo, std::ios::binary);
        char first[16];
        in.read(first, sizeof(first));
      });
    }
    OutputFile out;
    std::string error;
    ASSERT_TRUE(out.Open(fifo, gzip, &error)) << error;
    // Incompressible, so that gzip too writes far more than the pipe holds.
    std::mt19937 random(7);
    std::string chunk(1 << 16, '\0');
    for (char& c : chunk) c = static_cast<char>(random());
    bool wrote_all = true;
    for (int i = 0; i < 64 && wrote_all; ++i) wrote_all = out.Write(chunk);
    EXPECT_FALSE(wrote_all && out.Commit(&error)) << (gzip ? "gzip" : "plain");
    EXPECT_EQ(out.failed_errno(), EPIPE) << out.error();
    EXPECT_EQ(out.failed_reason(), strerror(EPIPE));
  }
  reader.join();
  sigset_t pending, after;
  ASSERT_EQ(sigpending(&pending), 0);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, nullptr, &after), 0);
  EXPECT_EQ(sigismember(&after, SIGPIPE), sigismember(&before, SIGPIPE));
}

// Regression: every writer of one output used "<path>.tmp" opened with O_TRUNC, so a second
// writer (two katrace-export runs on one spool) truncated the first one's file and both wrote
// into it; the first rename took the mixture and the second found nothing to rename.
TEST(OutputFileTest, TwoWritersOfOneOutputNeverShareATemporaryFile) {
  const fs::path dir = fs::temp_directory_path() / ("katrace-two-writers-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "out.json").string();
  const std::string a(300000, 'a'), b(200000, 'b');
  OutputFile first, second;
  std::string error;
  ASSERT_TRUE(first.Open(path, false, &error)) << error;
  ASSERT_TRUE(second.Open(path, false, &error)) << error;
  for (size_t i = 0; i < a.size(); i += 1000) {
    first.Write(std::string_view(a).substr(i, 1000));
    if (i < b.size()) second.Write(std::string_view(b).substr(i, 1000));
  }
  ASSERT_TRUE(first.Commit(&error)) << error;
  EXPECT_EQ(ReadFile(path), a);
  ASSERT_TRUE(second.Commit(&error)) << error;
  EXPECT_EQ(ReadFile(path), b);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1) << "a temporary file was left";
  fs::remove_all(dir);
}

// A file under this process's temporary name that this process did not make (a process with the
// same pid in another pid namespace writing into a shared directory) is never opened.
TEST(OutputFileTest, ATemporaryNameTakenAlreadyIsLeftAlone) {
  const fs::path dir = fs::temp_directory_path() / ("katrace-taken-tmp-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "out.json").string();
  const std::string taken = path + ".tmp." + std::to_string(getpid());
  std::ofstream(taken) << "someone else's";
  OutputFile out;
  std::string error;
  ASSERT_TRUE(out.Open(path, false, &error)) << error;
  out.Write("mine");
  ASSERT_TRUE(out.Commit(&error)) << error;
  EXPECT_EQ(ReadFile(path), "mine");
  EXPECT_EQ(ReadFile(taken), "someone else's");
  fs::remove_all(dir);
}

// An output directory that does not exist is named in the error.
TEST(OutputFileTest, AnOutputThatCannotBeCreatedIsNamed) {
  OutputFile out;
  std::string error;
  EXPECT_FALSE(out.Open("/nonexistent-katrace-dir/out.json", false, &error));
  EXPECT_NE(error.find("/nonexistent-katrace-dir/out.json"), std::string::npos) << error;
  EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
}

// The two policies the plugin and the tools use for a directory in the output's way: a tool
// refuses it at Open; the plugin writes beside it and keeps the whole output under the
// temporary name, which the failed rename names.
TEST(OutputFileTest, ADirectoryInTheWayIsRefusedOrKeptBesideByPolicy) {
  TempDir dir;
  const std::string path = (dir.path() / "out.json").string();
  ASSERT_EQ(mkdir(path.c_str(), 0755), 0);
  std::string error;
  OutputFile tool;
  EXPECT_FALSE(tool.Open(path, false, &error));
  EXPECT_NE(error.find("cannot open " + path + ": Is a directory"), std::string::npos) << error;
  OutputFilePolicy keep;
  keep.refuse_directory = false;
  keep.keep_failed_temp = true;
  OutputFile plugin(keep);
  ASSERT_TRUE(plugin.Open(path, true, &error)) << error;
  EXPECT_TRUE(plugin.Write("whole"));
  EXPECT_FALSE(plugin.Commit(&error));
  EXPECT_EQ(plugin.failed_step(), OutputFile::Step::kRename);
  EXPECT_NE(error.find("cannot rename " + plugin.temp_path()), std::string::npos) << error;
  EXPECT_TRUE(fs::exists(plugin.temp_path())) << "the whole output stays under its temporary name";
}

// "-" is stdout for a tool and a file named "-" for the plugin (whose trace path is a file name).
TEST(OutputFileTest, DashIsStdoutOnlyWhenThePolicySaysSo) {
  TempDir dir;
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path());
  OutputFilePolicy file_named_dash;
  file_named_dash.dash_is_stdout = false;
  OutputFile out(file_named_dash);
  std::string error;
  ASSERT_TRUE(out.Open("-", false, &error)) << error;
  EXPECT_FALSE(out.in_place());
  out.Write("dash");
  ASSERT_TRUE(out.Commit(&error)) << error;
  EXPECT_EQ(ReadFile("-"), "dash");
  OutputFile tool;
  ASSERT_TRUE(tool.Open("-", false, &error)) << error;
  EXPECT_TRUE(tool.in_place());
  EXPECT_TRUE(tool.Commit(&error)) << error;
  fs::current_path(cwd);
}

// The plugin's JSON writer and the tools repair ill-formed UTF-8 alike: one U+FFFD for each
// maximal ill-formed subpart, as in Unicode's own example (3.9, "U+FFFD Substitution of Maximal
// Subparts"), and overlong forms, surrogates and code points above U+10FFFF are ill-formed.
TEST(SharedHelpersTest, IllFormedUtf8IsRepairedOneReplacementPerMaximalSubpart) {
  const std::string r = "\xef\xbf\xbd";
  const std::pair<std::string, std::string> cases[] = {
      {"\x61\xf1\x80\x80\xe1\x80\xc2\x62\x80\x63\x80\xbf\x64", "a" + r + r + r + "b" + r + "c" + r + r + "d"},
      {"\xc0\xaf", r + r},                   // an overlong '/'
      {"\xe0\x80\xaf", r + r + r},          // another
      {"\xed\xa0\x80", r + r + r},          // a UTF-16 surrogate
      {"\xf4\x90\x80\x80", r + r + r + r}, // above U+10FFFF
      {"\xf0\x9f\x98", r},                  // a four-byte sequence cut short
      {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e"},  // well-formed
  };
  for (const auto& [in, want] : cases) {
    std::string from_plugin, from_tools;
    katrace::AppendWellFormedUtf8(&from_plugin, in.data(), in.size(), false);
    katrace::tools::AppendUtf8Repaired(in, &from_tools);
    EXPECT_EQ(from_plugin, want) << katrace::tools::BoundedForMessage(in);
    EXPECT_EQ(from_tools, want) << katrace::tools::BoundedForMessage(in);
    EXPECT_EQ(katrace::tools::IsUtf8(in), in == want);
  }
  size_t bad = 0;
  const unsigned char truncated[] = {0xe2, 0x82};
  EXPECT_EQ(katrace::Utf8SequenceLength(truncated, 2, &bad), 0u);
  EXPECT_EQ(bad, 2u);
  const unsigned char euro[] = {0xe2, 0x82, 0xac};
  EXPECT_EQ(katrace::Utf8SequenceLength(euro, 3, &bad), 3u);
}

TEST(SharedHelpersTest, NamesNumbersAndSuffixes) {
  EXPECT_EQ(Hex16(0x00ab00cd00ef0012ull), "00ab00cd00ef0012");
  EXPECT_EQ(Hex16(0), "0000000000000000");
  EXPECT_EQ(HumanBytes(512), "512 B");
  EXPECT_EQ(HumanBytes(1234567), "1.2 MB");
  EXPECT_EQ(HumanBytes(56900000000ull), "56.9 GB");
  EXPECT_TRUE(EndsWith("t.json.gz", ".gz"));
  EXPECT_FALSE(EndsWith("gz", ".gz"));
  EXPECT_EQ(Basename("/a/b/trace.json"), "trace.json");
  EXPECT_EQ(Basename("trace.json"), "trace.json");
  EXPECT_EQ(Basename("/a/dir/"), "");
}

TEST(SharedHelpersTest, TempDirIsTmpdirUnlessUnsetOrEmpty) {
  katrace_test::ScopedEnv tmpdir("TMPDIR", "/scratch/x");
  EXPECT_EQ(katrace::TempDir(), "/scratch/x");
  setenv("TMPDIR", "", 1);
  EXPECT_EQ(katrace::TempDir(), "/tmp");
  unsetenv("TMPDIR");
  EXPECT_EQ(katrace::TempDir(), "/tmp");
}

// Names of the process's own descriptors are written through them, never renamed onto: with
// standard output redirected to a file, /dev/stdout looks like a regular file to stat().
TEST(SharedHelpersTest, DescriptorNamesAreWrittenInPlace) {
  EXPECT_EQ(katrace::DescriptorNamedBy("/dev/stdout"), 1);
  EXPECT_EQ(katrace::DescriptorNamedBy("/dev/stderr"), 2);
  EXPECT_EQ(katrace::DescriptorNamedBy("/dev/fd/7"), 7);
  EXPECT_EQ(katrace::DescriptorNamedBy("/proc/self/fd/12"), 12);
  EXPECT_EQ(katrace::DescriptorNamedBy("/dev/fd/"), -1);
  EXPECT_EQ(katrace::DescriptorNamedBy("/dev/fd/1x"), -1);
  EXPECT_EQ(katrace::DescriptorNamedBy("/tmp/stdout"), -1);
  EXPECT_TRUE(katrace::IsWrittenInPlace("/dev/null"));
  EXPECT_FALSE(katrace::IsWrittenInPlace("/tmp"));
  TempDir dir;
  const std::string file = (dir.path() / "redirected.json").string();
  const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  const std::string name = "/dev/fd/" + std::to_string(fd);
  EXPECT_TRUE(katrace::IsWrittenInPlace(name));
  OutputFile out;
  std::string error;
  ASSERT_TRUE(out.Open(name, false, &error)) << error;
  EXPECT_TRUE(out.in_place());
  out.Write("through the descriptor");
  ASSERT_TRUE(out.Commit(&error)) << error;
  close(fd);
  EXPECT_EQ(ReadFile(file), "through the descriptor");
}

// Regression: a trace name too long for its directory kept its name in the fallback, and failed
// there too ("File name too long" twice: no trace and no spool).
TEST(SharedHelpersTest, InTempDirShortensANameTooLongForADirectory) {
  katrace_test::ScopedEnv tmpdir("TMPDIR", "/scratch");
  EXPECT_EQ(katrace::InTempDir("/a/b/trace.json"), "/scratch/trace.json");
  const std::string long_name = std::string(300, 'b') + "-rank12.pftrace.gz";
  const std::string shortened = katrace::InTempDir("/a/" + long_name);
  EXPECT_EQ(shortened.size(), std::string("/scratch/").size() + 192);
  EXPECT_EQ(shortened.substr(0, 12), "/scratch/bbb");
  EXPECT_TRUE(EndsWith(shortened, "b-rank12.pftrace.gz")) << shortened;
}

TEST(JsonFieldsTest, TimesAreExactNanoseconds) {
  EXPECT_EQ(NsToUsText(0), "0.000");
  EXPECT_EQ(NsToUsText(12345), "12.345");
  EXPECT_EQ(NsToUsText(-1500), "-1.500");
  EXPECT_EQ(NsToUsText(1000000000007), "1000000000.007");
  for (int64_t ns : {int64_t{1}, int64_t{999}, int64_t{123456789012345}, int64_t{4503599627370}}) {
    int64_t back = 0;
    ASSERT_TRUE(UsToNs(Json::parse(NsToUsText(ns)), &back));
    EXPECT_EQ(back, ns);
  }
  int64_t ns = 0;
  EXPECT_TRUE(UsToNs(Json(7), &ns));
  EXPECT_EQ(ns, 7000);
  EXPECT_FALSE(UsToNs(Json("7"), &ns));
  uint64_t hash = 0;
  EXPECT_TRUE(ParseCommHash("9a3c0f1e12345678", &hash));
  EXPECT_EQ(hash, 0x9a3c0f1e12345678u);
  EXPECT_FALSE(ParseCommHash("9a3c", &hash));
}

TEST(CliArgsTest, RankListsDurationsAndSizes) {
  RankSelection ranks;
  std::string error;
  ASSERT_TRUE(ranks.Parse("0-7,12", &error)) << error;
  EXPECT_TRUE(ranks.Contains(0));
  EXPECT_TRUE(ranks.Contains(7));
  EXPECT_FALSE(ranks.Contains(8));
  EXPECT_TRUE(ranks.Contains(12));
  EXPECT_FALSE(ranks.Parse("7-3", &error));
  EXPECT_FALSE(ranks.Parse("a", &error));
  // Durations are the one grammar of common/duration.h (test_grammar): a bare number is seconds.
  int64_t ns = 0;
  ASSERT_TRUE(katrace::ParseDuration("1.5s", &ns, &error));
  EXPECT_EQ(ns, 1500000000);
  ASSERT_TRUE(katrace::ParseDuration("200ms", &ns, &error));
  EXPECT_EQ(ns, 200000000);
  ASSERT_TRUE(katrace::ParseDuration("35us", &ns, &error));
  EXPECT_EQ(ns, 35000);
  ASSERT_TRUE(katrace::ParseDuration("100ns", &ns, &error));
  EXPECT_EQ(ns, 100);
  ASSERT_TRUE(katrace::ParseDuration("100", &ns, &error));
  EXPECT_EQ(ns, 100000000000);
  uint64_t bytes = 0;
  ASSERT_TRUE(ParseByteSize("256M", &bytes, &error));
  EXPECT_EQ(bytes, 256u << 20);
  EXPECT_FALSE(ParseByteSize("lots", &bytes, &error));
}

}  // namespace
}  // namespace katrace::tools
