// Collects katrace-check's findings for one file and prints them as "FILE:LINE: error: ... [code]"
// (compiler style, so editors jump to the event), at most |max_per_code| per code, followed by a
// count of what was left out. A protobuf trace has no lines: its positions are byte offsets,
// printed where the line goes and named in the message ("... (at byte N) [code]" unless the
// message says "at byte N" itself).
#ifndef KATRACE_TOOLS_CHECK_DIAGNOSTICS_H_
#define KATRACE_TOOLS_CHECK_DIAGNOSTICS_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

namespace katrace::tools {

enum class Severity { kError, kWarning };

class Diagnostics {
 public:
  Diagnostics(std::string path, uint64_t max_per_code, FILE* out);
  // Positions are byte offsets from now on (a protobuf trace).
  void set_byte_offsets() { byte_offsets_ = true; }
  // "line 12", or "byte 4096" in a protobuf trace: for messages that point at another event.
  std::string Position(uint64_t position) const {
    return (byte_offsets_ ? "byte " : "line ") + std::to_string(position);
  }
  // |line| 0 means the problem belongs to the whole file.
  void Report(Severity severity, const char* code, uint64_t line, const std::string& message);
  void Error(const char* code, uint64_t line, const std::string& message) {
    Report(Severity::kError, code, line, message);
  }
  void Warning(const char* code, uint64_t line, const std::string& message) {
    Report(Severity::kWarning, code, line, message);
  }
  // Prints how many problems of each code were not shown.
  void PrintSuppressed();
  uint64_t errors() const { return errors_; }
  uint64_t warnings() const { return warnings_; }

 private:
  std::string path_;
  uint64_t max_per_code_;
  FILE* out_;
  uint64_t errors_ = 0;
  uint64_t warnings_ = 0;
  bool byte_offsets_ = false;
  std::map<std::string, uint64_t> per_code_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_CHECK_DIAGNOSTICS_H_
