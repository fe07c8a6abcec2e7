// libFuzzer target: the export stage on an arbitrary spool (see spool_export_input.h).
#include <cstddef>

#include "fuzz/spool_export_input.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  katrace_fuzz::ExportSpoolBytes(data, size);
  return 0;
}
