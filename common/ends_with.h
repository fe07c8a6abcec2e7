// Whether a string ends with a suffix: how the plugin and the tools test file names (".gz",
// ".kspool", ".pftrace"). Its own header, kept free of other helpers, because
// common/trace_format.h includes it and so does nearly every file.
#ifndef KATRACE_COMMON_ENDS_WITH_H_
#define KATRACE_COMMON_ENDS_WITH_H_

#include <string_view>

namespace katrace {

inline bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace katrace

#endif  // KATRACE_COMMON_ENDS_WITH_H_
