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

#include "test/support/plugin_harness.h"
#include "test/support/subprocess.h"

namespace katrace_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The document, found from the test binary upwards (build trees nest at different depths).
std::string ReadFormatDoc() {
  for (fs::path dir = fs::canonical("/proc/self/exe").parent_path(); !dir.empty(); dir = dir.parent_path()) {
    fs::path doc = dir / "docs" / "trace-format.md";
    if (fs::exists(doc)) {
      std::ifstream in(doc);
      std::stringstream text;
      text << in.rdbuf();
      return text.str();
    }
    if (dir == dir.root_path()) break;
  }
  return "";
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
    ASSERT_FALSE(doc_.empty()) << "docs/trace-format.md not found above the test binary";
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

}  // namespace
}  // namespace katrace_test
