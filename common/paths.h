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

// |path|'s file name in TempDir(): where a file goes when its own directory cannot take it. A
// name too long for the directory it was meant for (over 192 bytes: a file system's limit is 255,
// and suffixes such as ".tmp.<pid>" and ".kspool" still have to fit) is shortened in its middle,
// keeping its start and its last 32 bytes (the extensions).
inline std::string InTempDir(const std::string& path) {
  std::string name = Basename(path);
  constexpr size_t kMaxName = 192, kKeptEnd = 32;
  if (name.size() > kMaxName) name = name.substr(0, kMaxName - kKeptEnd) + name.substr(name.size() - kKeptEnd);
  return TempDir() + "/" + name;
}

}  // namespace katrace

#endif  // KATRACE_COMMON_PATHS_H_
