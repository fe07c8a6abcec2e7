// Diagnostics printing with a cap per code.
#include "tools/check/diagnostics.h"

#include <utility>

#include "tools/common/utf8_text.h"

namespace katrace::tools {

Diagnostics::Diagnostics(std::string path, uint64_t max_per_code, FILE* out)
    : path_(std::move(path)), max_per_code_(max_per_code), out_(out) {}

void Diagnostics::Report(Severity severity, const char* code, uint64_t line,
                         const std::string& message) {
  (severity == Severity::kError ? errors_ : warnings_) += 1;
  if (++per_code_[code] > max_per_code_) return;
  const char* what = severity == Severity::kError ? "error" : "warning";
  // A backstop for any message that quotes input at length: at most kMaxMessageBytes of it,
  // cut on a character boundary, with bytes that are not UTF-8 repaired.
  constexpr size_t kMaxMessageBytes = 1000;
  std::string text;
  AppendUtf8Repaired(std::string_view(message).substr(0, Utf8PrefixLength(message, kMaxMessageBytes)),
                     &text);
  if (text.size() < message.size() && message.size() > kMaxMessageBytes) text += "...";
  // In a protobuf trace the position is a byte offset: the message says so, unless it does
  // already (the reader's own messages name their byte).
  const std::string at_byte = "at byte " + std::to_string(line);
  bool says_where = false;
  for (size_t at = text.find(at_byte); at != std::string::npos && !says_where;
       at = text.find(at_byte, at + 1)) {
    const size_t after = at + at_byte.size();
    says_where = after == text.size() || text[after] < '0' || text[after] > '9';
  }
  if (line > 0 && byte_offsets_ && !says_where) {
    std::fprintf(out_, "%s:%llu: %s: %s (%s) [%s]\n", path_.c_str(),
                 static_cast<unsigned long long>(line), what, text.c_str(), at_byte.c_str(), code);
  } else if (line > 0) {
    std::fprintf(out_, "%s:%llu: %s: %s [%s]\n", path_.c_str(),
                 static_cast<unsigned long long>(line), what, text.c_str(), code);
  } else {
    std::fprintf(out_, "%s: %s: %s [%s]\n", path_.c_str(), what, text.c_str(), code);
  }
}

void Diagnostics::PrintSuppressed() {
  for (const auto& [code, n] : per_code_) {
    if (n > max_per_code_) {
      std::fprintf(out_, "%s: ... and %llu more [%s] problem%s\n", path_.c_str(),
                   static_cast<unsigned long long>(n - max_per_code_), code.c_str(),
                   n - max_per_code_ == 1 ? "" : "s");
    }
  }
}

}  // namespace katrace::tools
