// What counts as well-formed UTF-8 (Unicode 3.9, table 3-7: shortest forms only, no UTF-16
// surrogates, nothing above U+10FFFF), in one place for every writer and reader of trace text:
// the JSON and NVTXT encoders repair or replace what is not, and the tools check and repair
// names read back from trace files the same way.
#ifndef KATRACE_COMMON_UTF8_SEQUENCE_H_
#define KATRACE_COMMON_UTF8_SEQUENCE_H_

#include <stddef.h>

namespace katrace {

// The length (1 to 4) of the well-formed UTF-8 sequence at the start of |s| (|n| > 0 bytes), or
// 0 when the bytes there do not start one; |*bad| is then the length of the maximal ill-formed
// subpart (at least 1), which a repair replaces by one U+FFFD.
inline size_t Utf8SequenceLength(const unsigned char* s, size_t n, size_t* bad) {
  const unsigned char c = s[0];
  if (c < 0x80) return 1;
  // The lead byte fixes the length and the range of the second byte; the others are 80..BF.
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c == 0xe0) lo = 0xa0;  // no overlong forms
    if (c == 0xed) hi = 0x9f;  // no UTF-16 surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c == 0xf0) lo = 0x90;  // no overlong forms
    if (c == 0xf4) hi = 0x8f;  // nothing above U+10FFFF
  }
  if (len == 0) {
    *bad = 1;
    return 0;
  }
  size_t good = 1;
  while (good < len && good < n) {
    const unsigned char b = s[good];
    if (good == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xbf)) break;
    ++good;
  }
  if (good == len) return len;
  *bad = good;
  return 0;
}

}  // namespace katrace

#endif  // KATRACE_COMMON_UTF8_SEQUENCE_H_
