// The temporary file a complete output is written to before it is renamed onto its final name.
//
// Why unique: two processes that write the same output (two ranks whose template fell back to
// one directory, two katrace-export runs on one spool, a tool run twice at once) must never
// share the temporary file. With one fixed "<path>.tmp" opened with O_TRUNC, the second
// truncated the first one's half-written file, both wrote into it, and the renamed result was
// neither output. The name carries the process id and the file is created exclusively, so a
// name that exists already (left by a dead process whose pid was reused, or this process
// writing the same output twice) is never opened: the next free suffix is taken instead.
#ifndef KATRACE_COMMON_UNIQUE_TEMP_FILE_H_
#define KATRACE_COMMON_UNIQUE_TEMP_FILE_H_

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>

namespace katrace {

// Creates "<path>.tmp.<pid>" (or "<path>.tmp.<pid>.<n>" when that exists) for writing and returns
// its descriptor, with its name in |*tmp_path|; -1 with errno set when none could be created.
inline int CreateUniqueTempFile(const std::string& path, std::string* tmp_path) {
  constexpr int kAttempts = 64;
  const std::string stem = path + ".tmp." + std::to_string(getpid());
  for (int n = 0; n < kAttempts; ++n) {
    std::string name = n == 0 ? stem : stem + "." + std::to_string(n);
    int fd = open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      *tmp_path = std::move(name);
      return fd;
    }
    if (errno != EEXIST) return -1;
  }
  return -1;  // errno is EEXIST
}

}  // namespace katrace

#endif  // KATRACE_COMMON_UNIQUE_TEMP_FILE_H_
