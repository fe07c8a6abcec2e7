// Sorts fixed-size records within a memory budget: records collect in memory, a full buffer is
// sorted and spilled to an anonymous temporary file (in $TMPDIR, else /tmp), and Next() k-way
// merges the runs. The tools use it to join and order events of a trace that is not sorted (the
// plugin writes events as they complete) without holding the trace in memory.
// Thread safety: none.
#ifndef KATRACE_TOOLS_COMMON_EXTERNAL_SORTER_H_
#define KATRACE_TOOLS_COMMON_EXTERNAL_SORTER_H_

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <queue>
#include <string>
#include <type_traits>
#include <vector>

#include "common/paths.h"

namespace katrace::tools {

template <typename T, typename Less>
class ExternalSorter {
  static_assert(std::is_trivially_copyable_v<T>, "records are spilled with fwrite");

 public:
  explicit ExternalSorter(size_t memory_bytes, Less less = Less())
      : less_(less), capacity_(std::max<size_t>(64, memory_bytes / sizeof(T))),
        memory_bytes_(memory_bytes) {}
  ~ExternalSorter() {
    for (Run& run : runs_) {
      if (run.file != nullptr) std::fclose(run.file);
    }
  }
  ExternalSorter(const ExternalSorter&) = delete;
  ExternalSorter& operator=(const ExternalSorter&) = delete;

  // False once an I/O error happened (see error()); later records are dropped.
  bool Add(const T& record) {
    if (!error_.empty()) return false;
    // Grow by hand so the buffer never overshoots the budget the way doubling would.
    if (buffer_.size() == buffer_.capacity()) {
      buffer_.reserve(std::min(capacity_, std::max<size_t>(1024, 2 * buffer_.capacity())));
    }
    buffer_.push_back(record);
    ++size_;
    if (buffer_.size() >= capacity_) return Spill();
    return true;
  }

  // Sorts what is left and prepares the merge; call once, before Next().
  bool Finish() {
    if (!error_.empty()) return false;
    std::sort(buffer_.begin(), buffer_.end(), less_);
    if (runs_.empty()) return true;  // everything fits: Next() walks buffer_ directly
    if (!buffer_.empty() && !Spill()) return false;
    const size_t per_run = std::max<size_t>(64, memory_bytes_ / sizeof(T) / (runs_.size() + 1));
    for (size_t i = 0; i < runs_.size(); ++i) {
      Run& run = runs_[i];
      std::rewind(run.file);
      run.chunk.resize(per_run);
      if (Refill(&run)) heap_.push(i);
    }
    return error_.empty();
  }

  bool Next(T* out) {
    if (runs_.empty()) {
      if (next_ >= buffer_.size()) return false;
      *out = buffer_[next_++];
      return true;
    }
    if (heap_.empty()) return false;
    const size_t i = heap_.top();
    heap_.pop();
    Run& run = runs_[i];
    *out = run.chunk[run.pos++];
    if (run.pos < run.len || Refill(&run)) heap_.push(i);
    return true;
  }

  uint64_t size() const { return size_; }
  size_t spilled_runs() const { return runs_.size(); }
  const std::string& error() const { return error_; }

 private:
  struct Run {
    FILE* file = nullptr;
    std::vector<T> chunk;
    size_t pos = 0;
    size_t len = 0;
  };

  // Orders run indices by their current head; std::priority_queue wants "less" = lower priority.
  struct HeadGreater {
    const ExternalSorter* self;
    bool operator()(size_t a, size_t b) const {
      const Run& ra = self->runs_[a];
      const Run& rb = self->runs_[b];
      if (self->less_(rb.chunk[rb.pos], ra.chunk[ra.pos])) return true;
      if (self->less_(ra.chunk[ra.pos], rb.chunk[rb.pos])) return false;
      return a > b;  // equal heads: earlier run first, so the merge is stable
    }
  };

  bool Spill() {
    std::sort(buffer_.begin(), buffer_.end(), less_);
    FILE* file = OpenTemporary();
    if (file == nullptr) return false;
    runs_.push_back(Run{file, {}, 0, 0});
    if (std::fwrite(buffer_.data(), sizeof(T), buffer_.size(), file) != buffer_.size() ||
        std::fflush(file) != 0) {
      error_ = std::string("cannot write sort spill file: ") + std::strerror(errno);
      return false;
    }
    buffer_.clear();
    return true;
  }

  bool Refill(Run* run) {
    run->pos = 0;
    run->len = std::fread(run->chunk.data(), sizeof(T), run->chunk.size(), run->file);
    if (run->len == 0 && std::ferror(run->file)) {
      error_ = std::string("cannot read sort spill file: ") + std::strerror(errno);
    }
    return run->len > 0;
  }

  FILE* OpenTemporary() {
    std::string path = TempDir() + "/katrace-sort-XXXXXX";
    const int fd = mkstemp(path.data());
    if (fd < 0) {
      error_ = "cannot create sort spill file in " + path + ": " + std::strerror(errno);
      return nullptr;
    }
    unlink(path.c_str());  // anonymous: gone when closed, even after a crash
    FILE* file = fdopen(fd, "w+b");
    if (file == nullptr) {
      close(fd);
      error_ = std::string("cannot open sort spill file: ") + std::strerror(errno);
    }
    return file;
  }

  Less less_;
  size_t capacity_;
  size_t memory_bytes_;
  std::vector<T> buffer_;
  std::vector<Run> runs_;
  std::priority_queue<size_t, std::vector<size_t>, HeadGreater> heap_{HeadGreater{this}};
  size_t next_ = 0;
  uint64_t size_ = 0;
  std::string error_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_EXTERNAL_SORTER_H_
