// libFuzzer target: the trace tools on an arbitrary trace (see trace_tools_input.h).
#include <cstddef>

#include "fuzz/trace_tools_input.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  katrace_fuzz::RunTraceToolsOnBytes(data, size);
  return 0;
}
