// docs/trace-format.md against a real trace: the plugin, driven by katrace-sim with every event
// kind, writes exactly the header and footer keys the document lists, no event argument it does
// not describe, and no track whose name matches none of its track names. The document's tables
// are read as data: in a table row, the backquoted names of the first cell are the keys (for the
// kind-specific table, the kinds) and those of the second cell are a kind's arguments.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "katrace/kind_schema.h"
#include "test/support/plugin_harness.h"
#include "test/support/subprocess.h"

namespace katrace_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The repository root: the first folder above the test binary with the docs (build trees nest at
// different depths), else the working directory (a build folder outside the repository, run
// from its root as `make test` does).
fs::path RepoRoot() {
  for (fs::path dir = fs::canonical("/proc/self/exe").parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / "docs" / "trace-format.md")) return dir;
    if (dir == dir.root_path()) break;
  }
  return fs::current_path();
}

std::string ReadFormatDoc() {
  std::ifstream in(RepoRoot() / "docs" / "trace-format.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The lines of the section whose "## " heading starts with |title|, up to the next "## ".
std::vector<std::string> Section(const std::string& doc, const std::string& title) {
  std::vector<std::string> lines;
  std::istringstream in(doc);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) {
      inside = line.rfind("## " + title, 0) == 0;
      continue;
    }
    if (inside) lines.push_back(line);
  }
  return lines;
}

// Backquoted spans of |text| that are plain names (keys and arguments, not values or patterns).
std::vector<std::string> Names(const std::string& text) {
  static const std::regex kName("`([a-z_][a-z0-9_]*)`");
  std::vector<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), kName), end; it != end; ++it) out.push_back((*it)[1]);
  return out;
}

// The cells of a table row ("| a | b |"), or nothing for other lines and the header separator.
std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> cells;
  if (line.rfind("|", 0) != 0 || line.find("---") != std::string::npos) return cells;
  std::string cell;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '|' && line[i - 1] != '\\') {
      cells.push_back(cell);
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

// First-column names of every table row of a section.
std::set<std::string> TableKeys(const std::vector<std::string>& section) {
  std::set<std::string> keys;
  for (const std::string& line : section) {
    std::vector<std::string> cells = Cells(line);
    if (cells.empty()) continue;
    for (const std::string& k : Names(cells[0])) keys.insert(k);
  }
  return keys;
}

struct DocumentedEvents {
  std::set<std::string> common;                         // arguments every recorded kind may have
  std::map<std::string, std::set<std::string>> by_cat;  // kind (cat) -> its own arguments
};

// The Events section: the bullet list of common arguments ("- `id`: ...") and the kind table.
DocumentedEvents ReadEvents(const std::vector<std::string>& section) {
  static const std::regex kKind("`([A-Za-z][A-Za-z0-9]*)`");
  DocumentedEvents d;
  for (const std::string& line : section) {
    if (line.rfind("- `", 0) == 0) {
      for (const std::string& k : Names(line.substr(0, line.find(':')))) d.common.insert(k);
      // "`comm`: ...; `rank`: ..." names two on one line.
      size_t semi = line.find("; `");
      if (semi != std::string::npos) {
        for (const std::string& k : Names(line.substr(semi, line.find(':', semi + 3) - semi))) d.common.insert(k);
      }
      continue;
    }
    std::vector<std::string> cells = Cells(line);
    if (cells.size() < 2) continue;
    std::vector<std::string> cats;
    for (std::sregex_iterator it(cells[0].begin(), cells[0].end(), kKind), end; it != end; ++it) {
      cats.push_back((*it)[1]);
    }
    for (const std::string& cat : cats) {
      for (const std::string& a : Names(cells[1])) d.by_cat[cat].insert(a);
    }
  }
  return d;
}

// Track name patterns: backquoted spans of the Tracks section's bullets, with <placeholders>
// standing for anything; "..." continues the previous pattern.
std::vector<std::regex> TrackPatterns(const std::vector<std::string>& section) {
  static const std::regex kSpan("`([^`]+)`");
  std::vector<std::regex> patterns;
  std::string previous;
  for (const std::string& line : section) {
    if (line.rfind("- ", 0) != 0) continue;
    for (std::sregex_iterator it(line.begin(), line.end(), kSpan), end; it != end; ++it) {
      std::string p = (*it)[1];
      if (p.rfind("... ", 0) == 0) p = previous + p.substr(3);
      previous = p;
      std::string re;
      for (size_t i = 0; i < p.size(); ++i) {
        if (p[i] == '<') {
          size_t close = p.find('>', i);
          re += ".+";
          i = close == std::string::npos ? p.size() : close;
        } else if (std::string("\\^$.|?*+()[]{}").find(p[i]) != std::string::npos) {
          re += '\\';
          re += p[i];
        } else {
          re += p[i];
        }
      }
      patterns.emplace_back("^" + re + "$");
    }
  }
  return patterns;
}

class TraceFormatDoc : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    doc_ = ReadFormatDoc();
    std::string dir = MakeTempDir();
    std::string path = dir + "/trace.json";
    // Every kind, every op, two ranks in one process, KernelSteps on.
    ProcessOutput run = RunProcess(ToolPath("katrace-sim"),
                                   {"--plugin", PluginPath(), "--ranks", "2", "--channels", "2", "--iters", "2",
                                    "--size", "64K", "--mask", "all", "--quiet"},
                                   {"KATRACE_OUTPUT=" + path}, dir);
    sim_error_ = run.exit_code == 0 ? "" : run.err;
    std::ifstream in(path);
    if (in) trace_ = json::parse(in, nullptr, false);
  }
  void SetUp() override {
    ASSERT_FALSE(doc_.empty()) << "docs/trace-format.md not found above the test binary nor in the working directory";
    ASSERT_EQ(sim_error_, "");
    ASSERT_TRUE(trace_.is_object() && trace_.contains("traceEvents")) << "no trace written";
  }
  static std::string doc_;
  static std::string sim_error_;
  static json trace_;
};
std::string TraceFormatDoc::doc_;
std::string TraceFormatDoc::sim_error_;
json TraceFormatDoc::trace_;

std::set<std::string> KeysOf(const json& object) {
  std::set<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it) keys.insert(it.key());
  return keys;
}

TEST_F(TraceFormatDoc, HeaderKeysAreExactlyTheDocumented) {
  std::set<std::string> documented = TableKeys(Section(doc_, "Header"));
  const json& header = trace_["traceEvents"][0]["args"]["katrace"];
  ASSERT_TRUE(header.is_object()) << "traceEvents[0] carries no katrace header";
  EXPECT_EQ(KeysOf(header), documented);
}

TEST_F(TraceFormatDoc, FooterKeysAreExactlyTheDocumented) {
  std::set<std::string> documented = TableKeys(Section(doc_, "Footer"));
  for (const std::string& k : TableKeys(Section(doc_, "Header"))) documented.insert(k);  // "repeated"
  const json& footer = trace_["otherData"]["katrace"];
  ASSERT_TRUE(footer.is_object()) << "no katrace footer";
  EXPECT_EQ(KeysOf(footer), documented);
}

TEST_F(TraceFormatDoc, EveryEventArgumentIsDocumentedForItsKind) {
  DocumentedEvents d = ReadEvents(Section(doc_, "Events"));
  ASSERT_FALSE(d.common.empty());
  ASSERT_FALSE(d.by_cat.empty());
  std::map<std::string, std::set<std::string>> undocumented;
  std::set<std::string> cats_seen;
  for (const json& e : trace_["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    std::string cat = e.value("cat", "");
    cats_seen.insert(cat);
    if (!e.contains("args")) continue;
    for (auto it = e["args"].begin(); it != e["args"].end(); ++it) {
      const std::string& k = it.key();
      if (d.common.count(k) == 0 && d.by_cat[cat].count(k) == 0) undocumented[cat].insert(k);
    }
  }
  for (const auto& [cat, keys] : undocumented) {
    for (const std::string& k : keys) ADD_FAILURE() << "kind " << cat << " writes undocumented argument '" << k << "'";
  }
  for (const char* cat : {"Coll", "P2p", "ProxyOp", "ProxyStep", "KernelCh", "KernelStep", "CollGpu"}) {
    EXPECT_TRUE(cats_seen.count(cat)) << "the run wrote no " << cat << ": the comparison would prove nothing";
    EXPECT_TRUE(d.by_cat.count(cat)) << cat << " has no row in the kind table";
  }
}

// The kind table of the document and the kind schema the exporter writes from
// (katrace/kind_schema.h) name the same arguments for every kind, recorded and derived: a kind
// or argument added to the schema without its documentation fails here.
TEST_F(TraceFormatDoc, EveryKindsArgumentsAreExactlyItsSchemas) {
  DocumentedEvents d = ReadEvents(Section(doc_, "Events"));
  auto keys = [](const katrace::ArgSpec* specs, size_t n, std::set<std::string>* out) {
    for (size_t i = 0; i < n; ++i) out->insert(std::string(specs[i].key));
  };
  std::set<std::string> common;
  keys(katrace::kCommonArgs, sizeof(katrace::kCommonArgs) / sizeof(katrace::kCommonArgs[0]), &common);
  EXPECT_EQ(d.common, common) << "the common arguments";
  for (const katrace::KindSchema& s : katrace::kKindSchema) {
    std::set<std::string> schema;
    keys(s.args, s.nargs, &schema);
    if (s.gpu_facts) keys(katrace::kGpuFacts, sizeof(katrace::kGpuFacts) / sizeof(katrace::kGpuFacts[0]), &schema);
    const std::string kind = katrace::KindName(s.kind);
    EXPECT_EQ(d.by_cat[kind], schema) << "kind " << kind;
  }
  for (const katrace::DerivedSchema& s : katrace::kDerivedSchema) {
    std::set<std::string> schema;
    keys(s.args, s.nargs, &schema);
    EXPECT_EQ(d.by_cat[s.name], schema) << "derived kind " << s.name;
  }
}

TEST_F(TraceFormatDoc, EveryTrackNameMatchesADocumentedOne) {
  std::vector<std::regex> patterns = TrackPatterns(Section(doc_, "Tracks"));
  ASSERT_FALSE(patterns.empty());
  size_t tracks = 0;
  for (const json& e : trace_["traceEvents"]) {
    if (e.value("ph", "") != "M" || e.value("name", "") != "thread_name") continue;
    ++tracks;
    std::string name = e["args"].value("name", "");
    bool matched = false;
    for (const std::regex& p : patterns) matched = matched || std::regex_match(name, p);
    EXPECT_TRUE(matched) << "track '" << name << "' matches no name in docs/trace-format.md's Tracks";
  }
  EXPECT_GT(tracks, 4u);
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// docs/adding-a-kind.md's numbered steps each say "In `file`:" and name, in backquotes, what that
// file holds for a kind (tables, types, functions). Each name must be in its file, so that a
// renamed table or a moved step fails here instead of misleading whoever adds the next kind.
TEST(AddingAKind, EveryStepNamesWhatItsFileHolds) {
  const fs::path root = RepoRoot();
  ASSERT_TRUE(fs::exists(root / "docs" / "adding-a-kind.md")) << "docs/adding-a-kind.md not found above the test binary nor in the working directory";
  std::istringstream doc(ReadFile(root / "docs" / "adding-a-kind.md"));
  static const std::regex kStep("^[0-9]+\\. In `([^`]+)`:");
  static const std::regex kName("`([A-Za-z_][A-Za-z0-9_]*)`");
  std::vector<std::pair<std::string, std::string>> steps;  // (file, its text)
  for (std::string line; std::getline(doc, line);) {
    std::smatch m;
    if (std::regex_search(line, m, kStep)) {
      steps.emplace_back(m[1], line.substr(static_cast<size_t>(m.length(0))));
    } else if (!steps.empty() && line.rfind("   ", 0) == 0) {
      steps.back().second += line;
    } else if (!steps.empty() && !line.empty()) {
      break;  // the steps end at the first unindented line after them
    }
  }
  ASSERT_GE(steps.size(), 4u) << "the steps were not found";
  bool names_schema = false;
  for (const auto& [file, text] : steps) {
    names_schema = names_schema || file == "include/katrace/kind_schema.h";
    const std::string source = ReadFile(root / file);
    ASSERT_FALSE(source.empty()) << file << " does not exist";
    size_t names = 0;
    for (std::sregex_iterator it(text.begin(), text.end(), kName), end; it != end; ++it, ++names) {
      EXPECT_NE(source.find((*it)[1]), std::string::npos) << file << " does not hold `" << (*it)[1] << "`";
    }
    EXPECT_GT(names, 0u) << "the step for " << file << " names nothing in it";
  }
  EXPECT_TRUE(names_schema) << "the steps skip the kind schema";
}

// docs/architecture.md names the files of each stage; each must exist, so that the page cannot
// drift from the tree. A name without a folder is in the folder of the name before it in its
// cell, else in the first folder its section's heading names; "x.*" is x.h or x.cc.
TEST(Architecture, EveryFileItNamesExists) {
  const fs::path root = RepoRoot();
  ASSERT_FALSE(root.empty());
  std::istringstream doc(ReadFile(root / "docs" / "architecture.md"));
  static const std::regex kSpan("`([^`]+)`");
  std::string section_dir;
  size_t checked = 0;
  auto exists = [&](const std::string& path) {
    if (path.size() > 2 && path.compare(path.size() - 2, 2, ".*") == 0) {
      const std::string stem = path.substr(0, path.size() - 2);
      return fs::exists(root / (stem + ".h")) || fs::exists(root / (stem + ".cc"));
    }
    return fs::exists(root / path);
  };
  for (std::string line; std::getline(doc, line);) {
    if (line.rfind("## ", 0) == 0) {
      section_dir.clear();
      std::smatch m;
      if (std::regex_search(line, m, kSpan)) section_dir = m[1];
      continue;
    }
    std::vector<std::string> cells = Cells(line);
    if (cells.size() < 2) continue;
    // The files are in the second cell of a stage table and the first of the shared one.
    const std::string& files = cells[0].find('`') != std::string::npos && cells.size() == 2 ? cells[0] : cells[1];
    std::string dir = section_dir;
    for (std::sregex_iterator it(files.begin(), files.end(), kSpan), end; it != end; ++it) {
      std::string name = (*it)[1];
      if (name.find('.') == std::string::npos && name.back() != '/') continue;  // a type, not a file
      std::string path = name.find('/') != std::string::npos ? name : dir + name;
      if (name.find('/') != std::string::npos) dir = path.substr(0, path.rfind('/') + 1);
      EXPECT_TRUE(exists(path)) << "docs/architecture.md names " << path << ", which does not exist";
      ++checked;
    }
  }
  EXPECT_GT(checked, 30u) << "the stage tables were not found";
}

}  // namespace
}  // namespace katrace_test
