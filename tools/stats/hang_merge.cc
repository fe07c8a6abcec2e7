#include "tools/stats/hang_merge.h"

#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/output_file.h"
#include "tools/common/json_fields.h"

namespace katrace::tools {
namespace {

// The report format this reader knows (plugin/export/hang_report.h, kHangReportVersion).
constexpr int64_t kKnownVersion = 1;
// A hang report is a few KB per communicator; anything this big is not one.
constexpr uint64_t kMaxReportBytes = uint64_t{64} << 20;

struct Wait {
  uint64_t since_ns = 0;  // realtime
  double seconds_before = 0;
  std::string comm;       // hash
  int64_t rank = -1, nranks = 0, peer = -1, channel = -1, step = -1;
  std::string what;       // the rest of the line
  std::string where;      // host and pid
};

int64_t IntAt(const Json& o, const char* key, int64_t fallback = -1) {
  const Json* v = Field(o, key);
  int64_t n = 0;
  return v != nullptr && AsInt64(*v, &n) ? n : fallback;
}
uint64_t UintAt(const Json& o, const char* key) {
  const Json* v = Field(o, key);
  uint64_t n = 0;
  return v != nullptr && AsUint64(*v, &n) ? n : 0;
}
double SecondsAt(const Json& o, const char* key) {
  const Json* v = Field(o, key);
  return v != nullptr && v->is_number() ? v->get<double>() : 0.0;
}
const Json& ArrayAt(const Json& o, const char* key) {
  static const Json kEmpty = Json::array();
  const Json* v = Field(o, key);
  return v != nullptr && v->is_array() ? *v : kEmpty;
}

std::string Utc(uint64_t realtime_ns) {
  // A time the report does not give (absent, negative, not a number) reads as 0: not 1970.
  if (realtime_ns == 0) return "an unknown time";
  const time_t secs = static_cast<time_t>(realtime_ns / 1000000000ull);
  struct tm tm;
  if (gmtime_r(&secs, &tm) == nullptr) return std::to_string(realtime_ns) + " ns";
  char b[48];
  snprintf(b, sizeof(b), "%04d-%02d-%02d %02d:%02d:%02d.%03u UTC", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
           tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<unsigned>(realtime_ns / 1000000ull % 1000));
  return b;
}

std::string Seconds(double s) {
  char b[32];
  snprintf(b, sizeof(b), "%.3f", s);
  return b;
}

bool ReadReport(const std::string& path, Json* out, std::string* error) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    *error = "cannot be read";
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = "is not a regular file";
    return false;
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxReportBytes) {
    *error = "is " + std::to_string(st.st_size) + " bytes: too big for a hang report";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot be read";
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  *out = Json::parse(text.str(), nullptr, false);
  if (out->is_discarded()) {
    *error = "is not JSON (a cut or foreign file?)";
    return false;
  }
  const int64_t version = out->is_object() ? IntAt(*out, "katrace_hang_report", 0) : 0;
  if (version <= 0) {
    *error = "is not a katrace hang report (no katrace_hang_report version)";
    return false;
  }
  if (version > kKnownVersion) {
    *error = "is a hang report of version " + std::to_string(version) + ", newer than this katrace-stats (" +
             std::to_string(kKnownVersion) + ")";
    return false;
  }
  const Json* comms = Field(*out, "communicators");
  if (comms == nullptr || !comms->is_array()) {
    *error = "is not a katrace hang report (no communicators list)";
    return false;
  }
  return true;
}

// The collective a communicator is stuck in, for the end of its lines.
std::string Task(const Json& comm) {
  const Json* o = Field(comm, "oldest_in_flight");
  if (o == nullptr || !o->is_object()) return "";
  std::string t = " in " + StringField(*o, "func", "?");
  if (StringField(*o, "kind") == "P2p") {
    t += " with peer " + std::to_string(IntAt(*o, "peer"));
  } else {
    t += " seq " + std::to_string(IntAt(*o, "seq"));
  }
  return t + " (" + std::to_string(UintAt(*o, "bytes")) + " B)";
}

void CollectWaits(const Json& report, std::vector<Wait>* waits, std::map<std::string, std::set<int64_t>>* ranks,
                  std::map<std::string, int64_t>* sizes) {
  const Json* process = Field(report, "process");
  std::string where;
  if (process != nullptr && process->is_object()) {
    where = "host " + StringField(*process, "host", "?") + " pid " + std::to_string(IntAt(*process, "pid"));
  }
  for (const Json& quiet : ArrayAt(report, "quiet_communicators")) {
    if (!quiet.is_object()) continue;
    const std::string comm = StringField(quiet, "comm_hash", "?");
    (*ranks)[comm].insert(IntAt(quiet, "rank"));
    (*sizes)[comm] = std::max((*sizes)[comm], IntAt(quiet, "nranks", 0));
  }
  for (const Json& comm : ArrayAt(report, "communicators")) {
    if (!comm.is_object()) continue;
    Wait base;
    base.comm = StringField(comm, "comm_hash", "?");
    base.rank = IntAt(comm, "rank");
    base.nranks = IntAt(comm, "nranks", 0);
    base.where = where;
    (*ranks)[base.comm].insert(base.rank);
    (*sizes)[base.comm] = std::max((*sizes)[base.comm], base.nranks);
    const std::string task = Task(comm);
    const size_t waits_before = waits->size();
    std::set<int64_t> channels_with_steps;
    std::map<int64_t, const Json*> proxy_by_peer;
    for (const Json& p : ArrayAt(comm, "proxy_steps")) {
      if (p.is_object()) proxy_by_peer[IntAt(p, "peer")] = &p;
    }
    std::set<int64_t> peers_named;
    for (const Json& s : ArrayAt(comm, "open_kernel_steps")) {
      if (!s.is_object()) continue;
      Wait w = base;
      w.peer = IntAt(s, "peer");
      w.channel = IntAt(s, "channel");
      w.since_ns = UintAt(s, "since_realtime_ns");
      w.seconds_before = SecondsAt(s, "seconds_before_report");
      w.what = "(" + StringField(s, "direction", "?") + " step " + std::to_string(IntAt(s, "step")) + ", " +
               std::to_string(UintAt(s, "size")) + " B)" + task;
      auto proxy = proxy_by_peer.find(w.peer);
      if (proxy != proxy_by_peer.end()) {
        w.what += "; proxy step " + std::to_string(IntAt(*proxy->second, "step")) + " in " +
                  StringField(*proxy->second, "state", "?");
      }
      channels_with_steps.insert(w.channel);
      peers_named.insert(w.peer);
      waits->push_back(w);
    }
    for (const Json& c : ArrayAt(comm, "open_channels")) {
      if (!c.is_object() || channels_with_steps.count(IntAt(c, "channel")) != 0) continue;
      Wait w = base;
      w.channel = IntAt(c, "channel");
      w.since_ns = UintAt(c, "since_realtime_ns");
      w.seconds_before = SecondsAt(c, "seconds_before_report");
      w.what = "(KernelCh open, no KernelStep)" + task;
      waits->push_back(w);
    }
    for (const auto& [peer, p] : proxy_by_peer) {
      if (peers_named.count(peer) != 0) continue;
      Wait w = base;
      w.peer = peer;
      w.channel = IntAt(*p, "channel");
      w.since_ns = UintAt(*p, "since_realtime_ns");
      w.seconds_before = SecondsAt(*p, "seconds_before_report");
      w.what = "(proxy " + StringField(*p, "direction", "?") + " step " + std::to_string(IntAt(*p, "step")) + " in " +
               StringField(*p, "state", "?") + ")" + task;
      waits->push_back(w);
    }
    const Json* o = Field(comm, "oldest_in_flight");
    if (waits->size() == waits_before) {
      if (o != nullptr && o->is_object()) {
        Wait w = base;
        w.since_ns = UintAt(*o, "since_realtime_ns");
        w.seconds_before = SecondsAt(*o, "seconds_before_report");
        w.what = "(no GPU or proxy work open)" + task;
        waits->push_back(w);
      }
    }
  }
}

std::string Line(const Wait& w, bool name_comm) {
  std::string line = "rank " + std::to_string(w.rank);
  if (w.peer >= 0) {
    line += " waits on peer " + std::to_string(w.peer) + (w.channel >= 0 ? " on channel " + std::to_string(w.channel) : "");
  } else if (w.channel >= 0) {
    line += " is stuck on channel " + std::to_string(w.channel);
  } else {
    line += " has work in flight";
  }
  line += " since " + Utc(w.since_ns) + " (" + Seconds(w.seconds_before) + " s before its report) " + w.what;
  if (name_comm) line += " [comm " + w.comm + "]";
  if (!w.where.empty()) line += " [" + w.where + "]";
  return line;
}

}  // namespace

std::string RenderHangReports(const std::vector<std::string>& paths, int* unreadable) {
  std::vector<Wait> waits;
  std::map<std::string, std::set<int64_t>> ranks;  // per comm: the ranks that reported
  std::map<std::string, int64_t> sizes;
  int read = 0;
  *unreadable = 0;
  for (const std::string& path : paths) {
    Json report;
    std::string error;
    if (!ReadReport(path, &report, &error)) {
      fprintf(stderr, "katrace-stats: %s %s; left out\n", path.c_str(), error.c_str());
      ++*unreadable;
      continue;
    }
    ++read;
    CollectWaits(report, &waits, &ranks, &sizes);
  }
  std::stable_sort(waits.begin(), waits.end(), [](const Wait& a, const Wait& b) { return a.since_ns < b.since_ns; });
  const bool name_comm = ranks.size() > 1;
  std::string out = "hang reports: " + std::to_string(read) + " read" +
                    (*unreadable != 0 ? ", " + std::to_string(*unreadable) + " left out" : "") + "\n";
  for (const Wait& w : waits) out += Line(w, name_comm) + "\n";
  // Ranks of a communicator with no report: a rank that never hung reports nothing, and is often
  // the one the others wait for.
  std::map<std::string, std::vector<int64_t>> silent;
  for (const auto& [comm, seen] : ranks) {
    for (int64_t r = 0; r < sizes[comm] && r < 4096; ++r) {
      if (seen.count(r) == 0) silent[comm].push_back(r);
    }
  }
  for (const auto& [comm, list] : silent) {
    std::string l = "no report from rank";
    l += list.size() > 1 ? "s" : "";
    for (size_t i = 0; i < list.size() && i < 32; ++i) l += (i == 0 ? " " : ",") + std::to_string(list[i]);
    if (list.size() > 32) l += ",...";
    out += l + (name_comm ? " of comm " + comm : "") + "\n";
  }
  std::string verdict;
  if (read == 0) {
    verdict = "no hang report could be read";
  } else if (waits.empty()) {
    verdict = "no rank has work in flight in these reports";
  } else {
    const Wait& first = waits.front();
    std::set<std::pair<std::string, int64_t>> waiting;
    for (const Wait& w : waits) waiting.insert({w.comm, w.rank});
    verdict = "rank " + std::to_string(first.rank) + " stopped first";
    if (first.peer >= 0) {
      verdict += ", waiting on peer " + std::to_string(first.peer);
      if (first.channel >= 0) verdict += " on channel " + std::to_string(first.channel);
    } else if (first.channel >= 0) {
      verdict += ", on channel " + std::to_string(first.channel);
    }
    verdict += " since " + Utc(first.since_ns) + "; " + std::to_string(waiting.size()) +
               (waiting.size() == 1 ? " rank waits" : " ranks wait") + " in all";
    if (first.peer >= 0 && ranks[first.comm].count(first.peer) == 0 && first.peer < sizes[first.comm]) {
      verdict += "; peer " + std::to_string(first.peer) + " sent no report: look at it first";
    }
  }
  out += "verdict: " + verdict + "\n";
  return out;
}

int MergeHangReports(const std::vector<std::string>& paths, const std::string& output) {
  int unreadable = 0;
  const std::string text = RenderHangReports(paths, &unreadable);
  OutputFile out;
  std::string error;
  if (!out.Open(output, false, &error) || !out.Write(text) || !out.Commit(&error)) {
    fprintf(stderr, "katrace-stats: %s\n", error.c_str());
    return 2;
  }
  return unreadable != 0 ? 1 : 0;
}

}  // namespace katrace::tools
