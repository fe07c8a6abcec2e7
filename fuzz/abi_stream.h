// Decodes arbitrary bytes into a sequence of profiler ABI calls (init, start, stop, record,
// finalize) on the ncclProfiler_v6/v5/v4 tables of the real katrace .so, with handles taken
// from earlier results, NULLs and garbage, and descriptors whose strings may be NULL or not
// UTF-8. The libFuzzer target and the replay test (built with g++ into the normal suites) both
// call it, so every input the fuzzer keeps replays the same way in `make test`.
#ifndef KATRACE_FUZZ_ABI_STREAM_H_
#define KATRACE_FUZZ_ABI_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace katrace_fuzz {

// dlopens |so_path| once per process; false (with |error|) when it lacks the tables. Sets
// KATRACE_OUTPUT into a fresh temporary folder and KATRACE_SUMMARY=0 first, unless set.
bool LoadPlugin(const std::string& so_path, std::string* error);
// One call sequence; every communicator it opened is finalized before it returns, so inputs
// do not leak state into each other.
void RunAbiStream(const uint8_t* data, size_t size);

}  // namespace katrace_fuzz

#endif  // KATRACE_FUZZ_ABI_STREAM_H_
