// Feeds arbitrary bytes to the trace tools' reader (tools/common/trace_reader) as a file, the
// way katrace-check, katrace-stats and katrace-merge read one. Shared by the libFuzzer target
// and the replay test.
#ifndef KATRACE_FUZZ_TRACE_READER_INPUT_H_
#define KATRACE_FUZZ_TRACE_READER_INPUT_H_

#include <cstddef>
#include <cstdint>

namespace katrace_fuzz {

void ReadTraceBytes(const uint8_t* data, size_t size);

}  // namespace katrace_fuzz

#endif  // KATRACE_FUZZ_TRACE_READER_INPUT_H_
