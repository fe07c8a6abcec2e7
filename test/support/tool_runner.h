// Test support: runs one of the trace tools (katrace-check, -merge, -stats, -export) as a user
// would, through the shell, and finds the tool binaries and the committed test data from the test
// binary's own place in the build tree.
#ifndef KATRACE_TEST_SUPPORT_TOOL_RUNNER_H_
#define KATRACE_TEST_SUPPORT_TOOL_RUNNER_H_

#include <filesystem>
#include <string>

namespace katrace_test {

// The build's bin/ folder (the test binary lives in the sibling test/).
std::filesystem::path ToolBinDir();

// The repository's test/data, found upward from the test binary (or "test/data" as a last guess).
std::filesystem::path TestDataDir();

struct ToolResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string output;  // stdout, and stderr unless asked apart
};

// Runs `bin/|tool| |args|` through the shell (|args| may hold globs and redirections). A sanitizer
// finding in the tool's output fails the calling test even when the exit status expected hides it:
// under the ASan/UBSan builds the tools are instrumented too.
ToolResult RunTool(const std::string& tool, const std::string& args, bool with_stderr = true);

}  // namespace katrace_test

#endif  // KATRACE_TEST_SUPPORT_TOOL_RUNNER_H_
