// Replays every committed fuzz input (the seeds in fuzz/corpus/<target>/ and the crashes kept in
// fuzz/regressions/<target>/) through the same entry points as the libFuzzer targets, built
// with g++ into the normal suites: a fixed crash stays fixed, under ASan+UBSan and TSan too.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/abi_stream.h"
#include "fuzz/spool_export_input.h"
#include "fuzz/trace_tools_input.h"
#include "fuzz/trace_reader_input.h"

namespace {

namespace fs = std::filesystem;

fs::path FuzzDir() {
  for (fs::path dir = fs::read_symlink("/proc/self/exe").parent_path(); !dir.empty();
       dir = dir.parent_path()) {
    if (fs::exists(dir / "fuzz/corpus")) return dir / "fuzz";
    if (dir == dir.parent_path()) break;
  }
  return "fuzz";
}

std::vector<fs::path> Inputs(const std::string& target) {
  std::vector<fs::path> files;
  for (const char* kind : {"corpus", "regressions"}) {
    const fs::path dir = FuzzDir() / kind / target;
    if (!fs::exists(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
  }
  return files;
}

std::string Bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Every committed input of |target| through |entry|, the target's own entry point.
void ReplayEach(const std::string& target, void (*entry)(const uint8_t*, size_t)) {
  const std::vector<fs::path> inputs = Inputs(target);
  EXPECT_FALSE(inputs.empty()) << "no seeds under " << FuzzDir() << " for " << target;
  for (const fs::path& input : inputs) {
    SCOPED_TRACE(input.string());
    const std::string bytes = Bytes(input);
    entry(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
}

TEST(FuzzReplayTest, AbiStreamInputs) {
  const fs::path plugin =
      fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "libnccl-profiler-katrace.so";
  std::string error;
  ASSERT_TRUE(katrace_fuzz::LoadPlugin(plugin.string(), &error)) << error;
  ReplayEach("fuzz_abi_stream", katrace_fuzz::RunAbiStream);
}

TEST(FuzzReplayTest, TraceReaderInputs) { ReplayEach("fuzz_trace_reader", katrace_fuzz::ReadTraceBytes); }

TEST(FuzzReplayTest, SpoolExportInputs) { ReplayEach("fuzz_spool_export", katrace_fuzz::ExportSpoolBytes); }

TEST(FuzzReplayTest, TraceToolsInputs) { ReplayEach("fuzz_trace_tools", katrace_fuzz::RunTraceToolsOnBytes); }

}  // namespace
