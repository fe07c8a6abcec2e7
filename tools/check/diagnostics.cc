// Diagnostics printing with a cap per code.
#include "tools/check/diagnostics.h"

#include <utility>

namespace katrace::tools {

Diagnostics::Diagnostics(std::string path, uint64_t max_per_code, FILE* out)
    : path_(std::move(path)), max_per_code_(max_per_code), out_(out) {}

void Diagnostics::Report(Severity severity, const char* code, uint64_t line,
                         const std::string& message) {
  (severity == Severity::kError ? errors_ : warnings_) += 1;
  if (++per_code_[code] > max_per_code_) return;
  const char* what = severity == Severity::kError ? "error" : "warning";
  if (line > 0) {
    std::fprintf(out_, "%s:%llu: %s: %s [%s]\n", path_.c_str(),
                 static_cast<unsigned long long>(line), what, message.c_str(), code);
  } else {
    std::fprintf(out_, "%s: %s: %s [%s]\n", path_.c_str(), what, message.c_str(), code);
  }
}

void Diagnostics::PrintSuppressed() {
  for (const auto& [code, n] : per_code_) {
    if (n > max_per_code_) {
      std::fprintf(out_, "%s: ... and %llu more [%s] problems\n", path_.c_str(),
                   static_cast<unsigned long long>(n - max_per_code_), code.c_str());
    }
  }
}

}  // namespace katrace::tools
