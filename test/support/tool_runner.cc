#include "test/support/tool_runner.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>

namespace katrace_test {

namespace fs = std::filesystem;

fs::path ToolBinDir() { return fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "bin"; }

fs::path TestDataDir() {
  for (fs::path dir = fs::read_symlink("/proc/self/exe").parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / "test/data/valid_rank0.json")) return dir / "test/data";
    if (dir == dir.parent_path()) break;
  }
  return "test/data";
}

ToolResult RunTool(const std::string& tool, const std::string& args, bool with_stderr) {
  const std::string command = (ToolBinDir() / tool).string() + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  ToolResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run " << command;
    return result;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) result.output.append(buf, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  EXPECT_EQ(result.output.find("AddressSanitizer"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("runtime error:"), std::string::npos) << result.output;
  return result;
}

}  // namespace katrace_test
