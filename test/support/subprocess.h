// Test support: runs a program of ours (the simulator, a trace tool) as a child process and
// captures what it printed, so tests see exactly what a user would.
#ifndef KATRACE_TEST_SUPPORT_SUBPROCESS_H_
#define KATRACE_TEST_SUPPORT_SUBPROCESS_H_

#include <string>
#include <vector>

namespace katrace_test {

struct ProcessOutput {
  int exit_code = -1;  // 128 + signal number when the child was killed
  std::string out;
  std::string err;
};

// Runs |binary| with |args| and the extra environment |env| ("NAME=value" each). Standard output
// and error go through files in |scratch_dir|, so any amount of output is fine.
ProcessOutput RunProcess(const std::string& binary, const std::vector<std::string>& args,
                         const std::vector<std::string>& env, const std::string& scratch_dir);

// The whole content of a file, or "" when it cannot be read.
std::string ReadWholeFile(const std::string& path);

}  // namespace katrace_test

#endif  // KATRACE_TEST_SUPPORT_SUBPROCESS_H_
