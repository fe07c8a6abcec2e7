// libFuzzer target: ABI call sequences through the real katrace .so (see abi_stream.h). The
// plugin path comes from KATRACE_FUZZ_PLUGIN, else the one the build compiled in.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz/abi_stream.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  const char* path = std::getenv("KATRACE_FUZZ_PLUGIN");
  std::string error;
  if (!katrace_fuzz::LoadPlugin(path != nullptr ? path : KATRACE_FUZZ_DEFAULT_PLUGIN, &error)) {
    std::fprintf(stderr, "fuzz_abi_stream: %s\n", error.c_str());
    std::exit(1);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  katrace_fuzz::RunAbiStream(data, size);
  return 0;
}
