// "1 file", "2 files": counts in messages agree with their noun.
#ifndef KATRACE_TOOLS_COMMON_PLURAL_H_
#define KATRACE_TOOLS_COMMON_PLURAL_H_

#include <cstdint>
#include <string>

namespace katrace::tools {

// |n| and |noun|, with "s" added unless |n| is 1 (every noun the tools count takes "s").
inline std::string Plural(uint64_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_PLURAL_H_
