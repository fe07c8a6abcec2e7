// Feeds arbitrary bytes, as a trace file, through what the trace tools do with one: katrace-check's
// checks, katrace-stats' tables and straggler report, katrace-merge (of the file with itself, as
// two ranks, into /dev/null), and, as a hang report, katrace-stats --hang. Shared by the
// libFuzzer target and the replay test.
#ifndef KATRACE_FUZZ_TRACE_TOOLS_INPUT_H_
#define KATRACE_FUZZ_TRACE_TOOLS_INPUT_H_

#include <cstddef>
#include <cstdint>

namespace katrace_fuzz {

void RunTraceToolsOnBytes(const uint8_t* data, size_t size);

}  // namespace katrace_fuzz

#endif  // KATRACE_FUZZ_TRACE_TOOLS_INPUT_H_
