// A 64-bit value as exactly 16 lower-case hex digits, the way traces, summaries and reports name
// communicators (their hash) so that the same communicator reads the same in every file.
// Hand-rolled rather than snprintf("%016llx"): the export formats one per slice argument.
#ifndef KATRACE_COMMON_HEX16_H_
#define KATRACE_COMMON_HEX16_H_

#include <stdint.h>

#include <string>

namespace katrace {

// Writes the 16 digits to |out| (no terminating NUL).
inline void FormatHex16(uint64_t v, char out[16]) {
  static const char kDigits[] = "0123456789abcdef";
  for (int i = 15; i >= 0; --i, v >>= 4) out[i] = kDigits[v & 0xf];
}

inline std::string Hex16(uint64_t v) {
  char digits[16];
  FormatHex16(v, digits);
  return std::string(digits, sizeof(digits));
}

}  // namespace katrace

#endif  // KATRACE_COMMON_HEX16_H_
