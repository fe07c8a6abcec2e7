#include "test/support/subprocess.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace katrace_test {

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

ProcessOutput RunProcess(const std::string& binary, const std::vector<std::string>& args,
                         const std::vector<std::string>& env, const std::string& scratch_dir) {
  const std::string out_path = scratch_dir + "/stdout.txt";
  const std::string err_path = scratch_dir + "/stderr.txt";
  ProcessOutput output;
  pid_t child = fork();
  if (child < 0) return output;
  if (child == 0) {
    int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    for (const std::string& assignment : env) putenv(strdup(assignment.c_str()));
    std::vector<std::string> copies = args;
    std::vector<char*> argv = {const_cast<char*>(binary.c_str())};
    for (std::string& arg : copies) argv.push_back(arg.data());
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  output.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  output.out = ReadWholeFile(out_path);
  output.err = ReadWholeFile(err_path);
  return output;
}

}  // namespace katrace_test
