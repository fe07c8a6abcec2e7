// Text helpers for settings, shared so that a trimmed, lower-cased value means the same thing to
// the plugin's configuration and to the event mask grammar. Byte-wise and locale-free: the
// inputs are ASCII settings, never prose. (Suffix tests: common/ends_with.h.)
#ifndef KATRACE_COMMON_TEXT_H_
#define KATRACE_COMMON_TEXT_H_

#include <ctype.h>

#include <string>

namespace katrace {

// ASCII lower case ("Auto" and "TSC" are matched without case).
inline std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return s;
}

// Without leading and trailing spaces, tabs and newlines ("" when nothing else is left).
inline std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\n");
  return s.substr(b, e - b + 1);
}

}  // namespace katrace

#endif  // KATRACE_COMMON_TEXT_H_
