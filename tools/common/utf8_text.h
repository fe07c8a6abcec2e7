// UTF-8 hygiene for text the tools take from trace files and write out again: strings are
// repaired the way the plugin's encoder repairs them (each maximal ill-formed subpart, as
// common/utf8_sequence.h tells it, becomes U+FFFD), and text quoted in a message is cut to a
// bounded length, so a hostile name can neither break a strict JSON parser downstream nor flood
// a terminal.
#ifndef KATRACE_TOOLS_COMMON_UTF8_TEXT_H_
#define KATRACE_TOOLS_COMMON_UTF8_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace katrace::tools {

// True when every byte of |s| belongs to a well-formed UTF-8 sequence.
bool IsUtf8(std::string_view s);
// Appends |s| to |out| with every maximal ill-formed subpart replaced by U+FFFD; returns how
// many were replaced.
size_t AppendUtf8Repaired(std::string_view s, std::string* out);
// The longest prefix of |s| of at most |max_bytes| that does not cut a UTF-8 sequence.
size_t Utf8PrefixLength(std::string_view s, size_t max_bytes);
// |s| for a message: repaired, control characters as \xNN, and cut after about |max_bytes|
// with "... (N bytes)" so the reader still learns the real size.
std::string BoundedForMessage(std::string_view s, size_t max_bytes = 200);
// |s| in single quotes for a message: repaired, control characters as \xNN, and cut after
// about |max_bytes| with "...' (N bytes)" so the reader still learns the real size.
std::string QuoteForMessage(std::string_view s, size_t max_bytes = 200);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_UTF8_TEXT_H_
