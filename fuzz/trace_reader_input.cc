// The bytes go into an anonymous in-memory file (memfd), read through its /proc path: the
// reader opens paths, and a memfd is a regular file to stat and zlib, with nothing on disk.
#include "fuzz/trace_reader_input.h"

#include <sys/mman.h>
#include <unistd.h>

#include <string>

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
  const int fd = memfd_create("katrace-fuzz-trace", 0);
  if (fd < 0) return;
  size_t done = 0;
  while (done < size) {
    const ssize_t n = write(fd, data + done, size - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  Visitor visitor;
  katrace::tools::ReadTrace("/proc/self/fd/" + std::to_string(fd), &visitor);
  close(fd);
}

}  // namespace katrace_fuzz
