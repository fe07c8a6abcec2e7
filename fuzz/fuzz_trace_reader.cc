// libFuzzer target: the trace tools' reader on arbitrary bytes (see trace_reader_input.h).
#include <cstddef>

#include "fuzz/trace_reader_input.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  katrace_fuzz::ReadTraceBytes(data, size);
  return 0;
}
