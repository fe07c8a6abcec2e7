// The Perfetto protobuf export checked by readers that share no code with katrace: Perfetto's
// own generated schema (PyPI's perfetto_trace_pb2, test/perfetto_schema_check.py) decodes the
// .pftrace of each committed spool and finds every slice, flow, instant, counter, header and
// footer the JSON export of the same spool has; Perfetto's trace processor (where
// ../shared/tools/perfetto/ has it) imports both files with no error and the same slices, flows
// and args, and folds each lane family into one row. Each skips with one line where its reader
// is missing.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "plugin/export/exporter.h"
#include "test/support/plugin_harness.h"
#include "test/support/subprocess.h"

namespace katrace_test {
namespace {

namespace fs = std::filesystem;

// The repository root: the first folder above the test binary with docs/trace-format.md.
fs::path RepoRoot() {
  for (fs::path dir = fs::canonical("/proc/self/exe").parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / "docs" / "trace-format.md")) return dir;
    if (dir == dir.root_path()) break;
  }
  return fs::current_path();
}

std::string Spool(const std::string& name) { return (RepoRoot() / "test/data/spools" / (name + ".kspool")).string(); }

// Exports |spool| to |out| in |format|; the spool is left in place (exports read it only).
void Export(const std::string& spool, const std::string& out, katrace::TraceFormat format, uint64_t reset_bytes = 0) {
  katrace::ExportOptions o;
  o.output = out;
  o.format = format;
  o.summary = false;
  o.progress = false;
  o.perfetto_reset_bytes = reset_bytes;
  katrace::ExportReport r = katrace::ExportSpool(spool, o);
  ASSERT_TRUE(r.ok) << r.message;
}

class PerfettoExportTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    json_ = dir_ + "/t.json";
    pftrace_ = dir_ + "/t.pftrace";
    Export(Spool(GetParam()), json_, katrace::TraceFormat::kJson);
    Export(Spool(GetParam()), pftrace_, katrace::TraceFormat::kPerfetto);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_, json_, pftrace_;
};

TEST_P(PerfettoExportTest, PerfettosOwnSchemaDecodesWhatTheJsonSays) {
  const fs::path venv = RepoRoot() / "build/perfetto-venv";
  const std::string status = ReadWholeFile((venv / "STATUS").string());
  if (status.rfind("ok", 0) != 0) {
    GTEST_SKIP() << "no Perfetto schema to decode with: "
                 << (status.empty() ? "build/perfetto-venv was not made (make builds it with the tests)" : status);
  }
  // Once as the export writes it, once with the sequence's incremental state cleared every few
  // KB, so the readers' resets (interning, the incremental clock) are exercised many times.
  const std::string reset = dir_ + "/reset.pftrace";
  Export(Spool(GetParam()), reset, katrace::TraceFormat::kPerfetto, 4096);
  for (const std::string& trace : {pftrace_, reset}) {
    ProcessOutput p = RunProcess((venv / "bin/python").string(),
                                 {(RepoRoot() / "test/perfetto_schema_check.py").string(), trace, json_}, {}, dir_);
    EXPECT_EQ(p.exit_code, 0) << trace << ":\n" << p.out << p.err;
    EXPECT_NE(p.out.find("perfetto schema agrees with the JSON"), std::string::npos) << p.out << p.err;
  }
}

// One row of numbers from the trace processor: the query's columns, in order.
std::vector<long long> Query(const std::string& shell, const std::string& trace, const std::string& sql,
                             const std::string& dir) {
  const std::string file = dir + "/q.sql";
  FILE* f = fopen(file.c_str(), "w");
  if (f == nullptr) return {};
  fputs(sql.c_str(), f);
  fclose(f);
  ProcessOutput p = RunProcess(shell, {"-q", file, trace}, {}, dir);
  EXPECT_EQ(p.exit_code, 0) << p.err;
  std::istringstream lines(p.out);
  std::string line, last;
  while (std::getline(lines, line)) {
    if (!line.empty()) last = line;
  }
  std::vector<long long> row;
  std::stringstream cells(last);
  std::string cell;
  while (std::getline(cells, cell, ',')) row.push_back(atoll(cell.c_str()));
  return row;
}

TEST_P(PerfettoExportTest, TraceProcessorImportsBothAlikeAndFoldsLanes) {
  const fs::path shell = RepoRoot().parent_path() / "shared/tools/perfetto/trace_processor_shell";
  if (!fs::exists(shell)) GTEST_SKIP() << "no Perfetto trace processor at " << shell.string();
  const std::string counts =
      "select (select count(*) from slice), (select count(*) from flow),"
      " (select count(*) from slice join args using(arg_set_id)),"
      " (select count(*) from stats where value > 0 and severity in ('error', 'data_loss'));";
  const std::vector<long long> json = Query(shell.string(), json_, counts, dir_);
  const std::vector<long long> pf = Query(shell.string(), pftrace_, counts, dir_);
  ASSERT_EQ(json.size(), 4u);
  EXPECT_GT(json[0], 0);
  EXPECT_EQ(pf, json) << "slices, flows, slice args, error stats";
  EXPECT_EQ(pf[3], 0) << "the trace processor counted errors or data losses";

  // Rows as the UI draws them: a lane family folds into one (its tracks share a group). The
  // closing instant's global track is not a family of the layout's.
  const std::string rows =
      "select count(distinct coalesce(track_group_id, -1 - id)) from track"
      " where id in (select track_id from slice where name != 'katrace trace end');";
  const std::vector<long long> pf_rows = Query(shell.string(), pftrace_, rows, dir_);
  // The JSON's families: its track names without " lane N", counted for tracks with slices.
  nlohmann::json doc = nlohmann::json::parse(ReadWholeFile(json_));
  std::map<std::pair<int, int>, std::string> names;
  std::set<std::pair<int, int>> used;
  for (const auto& e : doc["traceEvents"]) {
    const std::pair<int, int> track{e.value("pid", 0), e.value("tid", 0)};
    if (e["ph"] == "M" && e["name"] == "thread_name") names[track] = e["args"]["name"].get<std::string>();
    if (e["ph"] == "X") used.insert(track);
  }
  std::set<std::pair<int, std::string>> families;
  const std::regex lane(" lane [0-9]+$");
  for (const auto& t : used) families.insert({t.first, std::regex_replace(names[t], lane, "")});
  ASSERT_EQ(pf_rows.size(), 1u);
  EXPECT_EQ(pf_rows[0], static_cast<long long>(families.size()));
  EXPECT_LT(families.size(), used.size()) << "the fixture should need lanes";
}

INSTANTIATE_TEST_SUITE_P(Spools, PerfettoExportTest, ::testing::Values("sim_all_kinds", "sim_default_mask"));

}  // namespace
}  // namespace katrace_test
