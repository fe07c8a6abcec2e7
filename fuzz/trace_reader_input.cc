#include "fuzz/trace_reader_input.h"

#include "fuzz/bytes_file.h"
#include "tools/common/trace_header.h"
#include "tools/common/trace_reader.h"

namespace katrace_fuzz {
namespace {

using katrace::tools::Json;

// Touches what the tools touch in each event, so the accessors run on hostile values too.
class Visitor : public katrace::tools::TraceVisitor {
 public:
  bool OnEvent(const katrace::tools::TraceEvent& event) override {
    int64_t ns = 0;
    uint64_t key = 0;
    if (const Json* ts = katrace::tools::Field(event.json, "ts")) katrace::tools::UsToNs(*ts, &ns);
    katrace::tools::FlowKeyOf(event.json, &key);
    if (const Json* header = katrace::tools::HeaderObjectOf(event.json)) {
      katrace::tools::TraceHeader parsed;
      std::vector<std::string> problems;
      katrace::tools::ParseHeader(*header, &parsed, &problems);
    }
    return true;
  }
};

}  // namespace

void ReadTraceBytes(const uint8_t* data, size_t size) {
  BytesFile file(data, size);
  if (!file.ok()) return;
  Visitor visitor;
  katrace::tools::ReadTrace(file.path(), &visitor);
}

}  // namespace katrace_fuzz
