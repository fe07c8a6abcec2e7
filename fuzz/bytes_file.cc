#include "fuzz/bytes_file.h"

#include <sys/mman.h>
#include <unistd.h>

namespace katrace_fuzz {

BytesFile::BytesFile(const uint8_t* data, size_t size) {
  fd_ = memfd_create("katrace-fuzz-input", 0);
  if (fd_ < 0) return;
  size_t done = 0;
  while (done < size) {
    const ssize_t n = write(fd_, data + done, size - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
}

BytesFile::~BytesFile() {
  if (fd_ >= 0) close(fd_);
}

std::string BytesFile::path() const { return "/proc/self/fd/" + std::to_string(fd_); }

}  // namespace katrace_fuzz
