// One environment variable set for a test's scope, and put back as it was (set or unset) after
// it, whatever the test's path out: the suites share one process, and a test that left TMPDIR
// pointing into its removed scratch folder would move every later test's files.
#ifndef KATRACE_TEST_SUPPORT_SCOPED_ENV_H_
#define KATRACE_TEST_SUPPORT_SCOPED_ENV_H_

#include <stdlib.h>

#include <optional>
#include <string>

namespace katrace_test {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace katrace_test

#endif  // KATRACE_TEST_SUPPORT_SCOPED_ENV_H_
