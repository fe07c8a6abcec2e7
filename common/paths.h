// Path helpers shared by the plugin, the tools and the tests: the last component of a path, and
// the directory temporary and fallback files go to. One definition, so that "$TMPDIR, else /tmp"
// (an empty TMPDIR counts as unset) is the same rule for the spool, the trace, the tools' spill
// files and the tests' scratch folders.
#ifndef KATRACE_COMMON_PATHS_H_
#define KATRACE_COMMON_PATHS_H_

#include <stdlib.h>

#include <string>

namespace katrace {

// What follows the last '/' (the whole path when there is none; "" for a path ending in '/').
inline std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// $TMPDIR when set and not empty, else /tmp. Read at each call: tests and jobs change it.
inline std::string TempDir() {
  const char* tmp = getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

}  // namespace katrace

#endif  // KATRACE_COMMON_PATHS_H_
