#include "test/support/trace_validation.h"

#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <gtest/gtest.h>

#include "test/support/plugin_harness.h"

namespace katrace_test {
namespace {

int64_t Ns(const nlohmann::json& micros) { return llround(micros.get<double>() * 1000.0); }

}  // namespace

nlohmann::json LoadTrace(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files too
  if (f == nullptr) throw std::runtime_error("cannot open " + path);
  std::string text;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return ParseJson(text);
}

nlohmann::json ParseJson(const std::string& text, bool throw_on_error) {
  return nlohmann::json::parse(text, nullptr, throw_on_error);
}

std::string StrictJsonError(const std::string& path) {
  FILE* f = fopen(path.c_str(), "rb");
  if (f == nullptr) return "cannot open " + path;
  std::string bytes;
  char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) bytes.append(buf, n);
  fclose(f);
  try {
    const nlohmann::json parsed = nlohmann::json::parse(bytes);
    (void)parsed;
  } catch (const nlohmann::json::parse_error& e) {
    return e.what();
  }
  return "";
}

const nlohmann::json& Footer(const nlohmann::json& trace) { return trace.at("otherData").at("katrace"); }

std::vector<nlohmann::json> Slices(const nlohmann::json& trace, const std::string& cat) {
  std::vector<nlohmann::json> out;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.value("ph", "") == "X" && e.value("cat", "") == cat) out.push_back(e);
  }
  return out;
}

std::vector<std::string> ValidateTrace(const nlohmann::json& trace) {
  std::vector<std::string> problems;
  auto problem = [&](size_t i, const std::string& what) {
    problems.push_back("event " + std::to_string(i) + ": " + what);
  };
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array()) {
    return {"no traceEvents array"};
  }
  if (!trace.contains("otherData") || !trace["otherData"].contains("katrace")) problems.push_back("no footer");
  const auto& events = trace["traceEvents"];
  if (events.empty() || events[0].value("name", "") != "process_name" ||
      !events[0]["args"].contains("katrace") || !events[0]["args"]["katrace"].contains("base_realtime_ns")) {
    problems.push_back("first event is not the process_name header with the clock base");
  }
  struct Slice {
    int64_t start, end;
    size_t index;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<Slice>> tracks;
  std::set<std::pair<int64_t, int64_t>> named;
  // Record ids are unique per process (pid); a merged trace holds several.
  using RecordKey = std::pair<int64_t, uint64_t>;
  std::map<RecordKey, std::pair<int64_t, int64_t>> gpu_extent;  // Coll/P2p -> [start, end] ns
  std::vector<std::pair<size_t, RecordKey>> gpu_children;
  std::map<uint64_t, int> flow_starts, flow_ends;
  for (size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    if (!e.is_object()) {
      problem(i, "not an object");
      continue;
    }
    if (e.empty()) {
      problem(i, "empty object");
      continue;
    }
    if (!e.contains("ph") || !e["ph"].is_string() || !e.contains("pid") || !e["pid"].is_number_integer() ||
        !e.contains("name") || !e["name"].is_string()) {
      problem(i, "missing ph/pid/name");
      continue;
    }
    std::string ph = e["ph"];
    auto track = std::make_pair(e["pid"].get<int64_t>(), e.value("tid", int64_t{0}));
    if (ph == "M") {
      if (e["name"] == "thread_name") named.insert(track);
      continue;
    }
    if (!e.contains("ts") || !e["ts"].is_number()) {
      problem(i, "no numeric ts");
      continue;
    }
    if (ph == "X") {
      if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0) {
        problem(i, "X without a non-negative dur");
        continue;
      }
      int64_t start = Ns(e["ts"]);
      tracks[track].push_back({start, start + Ns(e["dur"]), i});
      const auto& args = e.value("args", nlohmann::json::object());
      std::string cat = e.value("cat", "");
      if ((cat == "Coll" || cat == "P2p") && args.contains("gpu_start")) {
        gpu_extent[{track.first, args["id"].get<uint64_t>()}] = {Ns(args["gpu_start"]), Ns(args["gpu_end"])};
      }
      // As katrace-check: a GPU child that never stopped (incomplete) has no end to check, and a
      // late one belongs to work its parent had already retired.
      if ((cat == "KernelCh" || cat == "KernelStep") && args.contains("parent") && !args.value("host_timed", false) &&
          !args.value("incomplete", false) && !args.value("late", false)) {
        gpu_children.push_back({i, {track.first, args["parent"].get<uint64_t>()}});
      }
    } else if (ph == "s") {
      ++flow_starts[e.at("id").get<uint64_t>()];
    } else if (ph == "f") {
      ++flow_ends[e.at("id").get<uint64_t>()];
    }
  }
  for (auto& [key, slices] : tracks) {
    if (!named.count(key)) problems.push_back("track " + std::to_string(key.second) + " has no thread_name");
    std::stable_sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    std::vector<Slice> stack;
    for (const Slice& s : slices) {
      while (!stack.empty() && stack.back().end <= s.start) stack.pop_back();
      if (!stack.empty() && s.end > stack.back().end) {
        problem(s.index, "partially overlaps event " + std::to_string(stack.back().index) + " on track " +
                             std::to_string(key.second));
      }
      stack.push_back(s);
    }
  }
  for (const auto& [id, n] : flow_starts) {
    if (flow_ends[id] != n) problems.push_back("flow " + std::to_string(id) + " has no matching end");
  }
  for (const auto& [index, parent] : gpu_children) {
    auto it = gpu_extent.find(parent);
    if (it == gpu_extent.end()) continue;  // parent not recorded (dropped or incomplete)
    const auto& e = events[index];
    int64_t start = Ns(e["ts"]), end = start + Ns(e["dur"]);
    if (start < it->second.first || end > it->second.second) {
      problem(index, "GPU child outside its parent's GPU extent");
    }
  }
  return problems;
}

nlohmann::json ExpectValidTrace(const std::string& path) {
  nlohmann::json trace;
  try {
    trace = LoadTrace(path);
  } catch (const std::exception& e) {
    ADD_FAILURE() << path << ": " << e.what();
    return trace;
  }
  for (const std::string& p : ValidateTrace(trace)) ADD_FAILURE() << path << ": " << p;
  // A checker that is not there fails the test: a validation that silently did not run must not
  // pass.
  struct stat st;
  const std::string check = KATRACE_VALIDATION_CHECKER;
  if (stat(check.c_str(), &st) != 0) {
    ADD_FAILURE() << "cannot validate " << path << ": " << check << " is not built";
    return trace;
  }
  std::string cmd = "'" + check + "' '" + path + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (p != nullptr && fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  int rc = p != nullptr ? pclose(p) : -1;
  EXPECT_EQ(rc, 0) << "katrace-check " << path << ":\n" << out;
  return trace;
}

}  // namespace katrace_test
