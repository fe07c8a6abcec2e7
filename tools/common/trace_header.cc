// Header lookup and parsing (see trace_header.h).
#include "tools/common/trace_header.h"

namespace katrace::tools {
namespace {

void RequireString(const Json& object, const char* key, std::string* out,
                   std::vector<std::string>* problems) {
  const Json* v = Field(object, key);
  if (v == nullptr) {
    problems->push_back(std::string("header lacks '") + key + "'");
  } else if (!v->is_string()) {
    problems->push_back(std::string("header '") + key + "' must be a string, not " +
                        JsonTypeName(*v));
  } else {
    *out = v->get<std::string>();
  }
}

void RequireInt(const Json& object, const char* key, int64_t* out,
                std::vector<std::string>* problems) {
  const Json* v = Field(object, key);
  if (v == nullptr) {
    problems->push_back(std::string("header lacks '") + key + "'");
  } else if (!AsInt64(*v, out)) {
    problems->push_back(std::string("header '") + key + "' must be an integer, not " +
                        JsonTypeName(*v));
  }
}

class HeaderVisitor : public TraceVisitor {
 public:
  explicit HeaderVisitor(HeaderProbe* probe) : probe_(probe) {}
  bool OnEvent(const TraceEvent& event) override {
    const Json* katrace = HeaderObjectOf(event.json);
    if (katrace == nullptr) {
      probe_->problem = "traceEvents[0] is not a process_name event with the katrace header";
      return false;
    }
    std::vector<std::string> problems;
    probe_->found = ParseHeader(*katrace, &probe_->header, &problems);
    if (!probe_->found) probe_->problem = problems.front();
    return false;
  }
  void OnNonObjectEvent(uint64_t, uint64_t) override {
    probe_->problem = "traceEvents[0] is not an object";
  }

 private:
  HeaderProbe* probe_;
};

}  // namespace

const Json* HeaderObjectOf(const Json& event) {
  const Json* name = Field(event, "name");
  const Json* ph = Field(event, "ph");
  if (name == nullptr || ph == nullptr || *name != "process_name" || *ph != "M") return nullptr;
  const Json* args = Field(event, "args");
  if (args == nullptr) return nullptr;
  const Json* katrace = Field(*args, "katrace");
  return katrace != nullptr && katrace->is_object() ? katrace : nullptr;
}

bool ParseHeader(const Json& katrace, TraceHeader* header, std::vector<std::string>* problems) {
  const size_t before = problems->size();
  RequireString(katrace, "format", &header->format, problems);
  if (problems->size() == before && header->format != kTraceFormat &&
      header->format != kMergedFormat) {
    problems->push_back("header format is '" + header->format + "', not '" + kTraceFormat + "'");
  }
  RequireInt(katrace, "version", &header->version, problems);
  RequireInt(katrace, "rank", &header->rank, problems);
  RequireString(katrace, "host", &header->host, problems);
  RequireInt(katrace, "os_pid", &header->os_pid, problems);
  RequireInt(katrace, "base_realtime_ns", &header->base_realtime_ns, problems);
  RequireInt(katrace, "base_monotonic_ns", &header->base_monotonic_ns, problems);
  if (const Json* rebased = Field(katrace, "rebased_ns")) {
    header->rebased = AsInt64(*rebased, &header->rebased_ns);
  }
  header->ranks.clear();
  if (const Json* ranks = Field(katrace, "ranks"); ranks != nullptr) {
    if (!ranks->is_array()) {
      problems->push_back(std::string("header 'ranks' must be an array, not ") + JsonTypeName(*ranks));
    } else {
      for (const Json& r : *ranks) {
        TraceRankEntry entry;
        const Json* pid = r.is_object() ? Field(r, "pid") : nullptr;
        if (pid == nullptr || !AsInt64(*pid, &entry.pid)) {
          problems->push_back("header 'ranks' entry without an integer 'pid': " + r.dump());
          continue;
        }
        if (const Json* v = Field(r, "world_rank")) AsInt64(*v, &entry.world_rank);
        if (const Json* v = Field(r, "launcher_rank")) AsInt64(*v, &entry.launcher_rank);
        if (const Json* v = Field(r, "cuda_device")) AsInt64(*v, &entry.cuda_device);
        header->ranks.push_back(entry);
      }
    }
  }
  if (header->ranks.empty()) {
    TraceRankEntry only;
    only.pid = header->rank;
    only.world_rank = header->rank;
    header->ranks.push_back(only);
  }
  return problems->size() == before;
}

std::vector<int64_t> TraceHeader::Pids() const {
  std::vector<int64_t> pids;
  for (const TraceRankEntry& r : ranks) pids.push_back(r.pid);
  return pids;
}

HeaderProbe ProbeHeader(const std::string& path) {
  HeaderProbe probe;
  HeaderVisitor visitor(&probe);
  probe.read = ReadTrace(path, &visitor);
  if (probe.read.status == ReadStatus::kOk && !probe.found && probe.problem.empty()) {
    probe.problem = "the trace has no events, so no katrace header";
  }
  return probe;
}

}  // namespace katrace::tools
