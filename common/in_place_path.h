// Which output paths are written in place rather than through a temporary file and a rename:
// renaming onto them would replace the thing itself. Shared by the output file, the spool (which
// cannot go "next to" such a path) and the names derived from a trace's (a gzip suffix, a dump's
// tag), so that all of them agree.
//
// Two cases: a name of one of this process's own descriptors (/dev/stdout, /dev/stderr,
// /dev/fd/N, /proc/self/fd/N), whatever the descriptor is (a terminal, a pipe, or a regular file
// the shell redirected to, which stat() would call a regular file: renaming onto the name then
// replaced the /dev/stdout link with a file); and an existing file that is neither a regular file
// nor a directory (a device, a FIFO, a socket).
#ifndef KATRACE_COMMON_IN_PLACE_PATH_H_
#define KATRACE_COMMON_IN_PLACE_PATH_H_

#include <sys/stat.h>

#include <string>

namespace katrace {

// The descriptor |path| names in this process (1 for /dev/stdout), or -1 when it names none.
inline int DescriptorNamedBy(const std::string& path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) continue;
    int fd = 0;
    for (size_t i = prefix.size(); i < path.size(); ++i) {
      if (path[i] < '0' || path[i] > '9' || fd > 100000) return -1;
      fd = fd * 10 + (path[i] - '0');
    }
    return fd;
  }
  return -1;
}

inline bool IsWrittenInPlace(const std::string& path) {
  if (DescriptorNamedBy(path) >= 0) return true;
  struct stat st;
  return stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

}  // namespace katrace

#endif  // KATRACE_COMMON_IN_PLACE_PATH_H_
