// The export's JSON text buffer: the same bytes as plugin/export/json_buffer.h (integers, µs with three
// decimals from integer ns, 16-digit hex, escaped strings), written through a raw pointer into
// one growing char array instead of std::string appends, since the export formats hundreds of
// millions of small pieces. Numbers use a two-digit table; plain ASCII strings are copied as is
// and only a string that needs escaping (rare: control bytes, quotes, non-ASCII) goes through
// JsonBuffer itself, so the escaping rules live in one place.
#ifndef KATRACE_PLUGIN_EXPORT_JSON_OUT_H_
#define KATRACE_PLUGIN_EXPORT_JSON_OUT_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <memory>
#include <string_view>

#include "plugin/export/json_buffer.h"

namespace katrace {
namespace exporting {

class JsonOut {
 public:
  JsonOut() { Grow(1 << 16); }

  const char* data() const { return buf_.get(); }
  size_t size() const { return static_cast<size_t>(p_ - buf_.get()); }
  void clear() { p_ = buf_.get(); }

  // Makes room for |n| more bytes; every writer below calls it for what it may write.
  void Reserve(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) Grow(size() + n);
  }

  JsonOut& Raw(std::string_view s) {
    Reserve(s.size());
    Copy(p_, s.data(), s.size());
    p_ += s.size();
    return *this;
  }
  JsonOut& Char(char c) {
    Reserve(1);
    *p_++ = c;
    return *this;
  }

  JsonOut& Uint(uint64_t v) {
    Reserve(kMaxUint);
    p_ = PutUint(p_, v);
    return *this;
  }
  JsonOut& Int(int64_t v) {
    Reserve(kMaxInt);
    p_ = PutInt(p_, v);
    return *this;
  }
  // Nanoseconds written as microseconds with three decimals: 12345 -> "12.345".
  JsonOut& Micros(int64_t ns) {
    Reserve(kMaxMicros);
    p_ = PutMicros(p_, ns);
    return *this;
  }
  JsonOut& Hex64(uint64_t v) {
    Reserve(16);
    p_ = PutHex64(p_, v);
    return *this;
  }

  // A quoted, escaped JSON string.
  JsonOut& String(std::string_view s) {
    if (!Plain(s)) return Escaped(s);
    Reserve(s.size() + 2);
    p_ = PutPlainString(p_, s);
    return *this;
  }

  // "key":
  JsonOut& Key(std::string_view key) {
    Reserve(key.size() + 3);
    p_ = PutKey(p_, key);
    return *this;
  }

  // For a writer that formats many pieces at once (an encoder's most common event): room for
  // |n| bytes, written through the returned pointer with the Put functions below, then
  // Commit(the pointer past the last byte). A local pointer stays in a register; each char
  // stored through p_ itself makes the compiler load p_ again.
  char* Claim(size_t n) {
    Reserve(n);
    return p_;
  }
  void Commit(char* end) { p_ = end; }

  // The most bytes each Put below writes.
  static constexpr size_t kMaxUint = 20, kMaxInt = 21, kMaxMicros = 26;

  static char* PutRaw(char* p, std::string_view s) {
    Copy(p, s.data(), s.size());
    return p + s.size();
  }
  static char* PutUint(char* p, uint64_t v) { return WriteUint(p, v); }
  static char* PutInt(char* p, int64_t v) {
    if (v < 0) {
      *p++ = '-';
      return WriteUint(p, static_cast<uint64_t>(-(v + 1)) + 1);
    }
    return WriteUint(p, static_cast<uint64_t>(v));
  }
  // The magnitude is an unsigned negation: the bytes JsonBuffer gives, without signed overflow
  // at INT64_MIN.
  static char* PutMicros(char* p, int64_t ns) {
    uint64_t u = static_cast<uint64_t>(ns);
    if (ns < 0) {
      *p++ = '-';
      u = 0 - u;
    }
    p = WriteUint(p, u / 1000);
    unsigned frac = static_cast<unsigned>(u % 1000);
    p[0] = '.';
    p[1] = static_cast<char>('0' + frac / 100);
    memcpy(p + 2, kPairs + 2 * (frac % 100), 2);
    return p + 4;
  }
  // Two digits at a time, from a table of the 256 byte values.
  static char* PutHex64(char* p, uint64_t v) {
    for (int i = 14; i >= 0; i -= 2, v >>= 8) memcpy(p + i, kHexPairs + 2 * (v & 0xff), 2);
    return p + 16;
  }
  // True when |s| goes between quotes as it is (no control bytes, quotes, backslashes or
  // non-ASCII); PutPlainString takes only such a string. Eight bytes at a time: a byte loop was
  // a fifth of a JSON slice's own instructions (its name and each string argument are checked).
  static bool Plain(std::string_view s) {
    const char* p = s.data();
    const size_t n = s.size();
    if (n < 8) {
      uint64_t w = kOnes * 'a';  // padded with a plain byte
      if (n != 0) memcpy(&w, p, n);
      return PlainWord(w);
    }
    for (size_t i = 0; i + 8 < n; i += 8) {
      uint64_t w;
      memcpy(&w, p + i, 8);
      if (!PlainWord(w)) return false;
    }
    uint64_t last;  // the last eight bytes, overlapping the words before
    memcpy(&last, p + n - 8, 8);
    return PlainWord(last);
  }
  static char* PutPlainString(char* p, std::string_view s) {
    *p++ = '"';
    Copy(p, s.data(), s.size());
    p += s.size();
    *p++ = '"';
    return p;
  }
  static char* PutKey(char* p, std::string_view key) {
    *p++ = '"';
    Copy(p, key.data(), key.size());
    p += key.size();
    p[0] = '"';
    p[1] = ':';
    return p + 2;
  }

 private:
  static constexpr uint64_t kOnes = 0x0101010101010101ull;
  static constexpr uint64_t kHighBits = kOnes * 0x80;
  // Nonzero when a byte of |w| is 0 (exact as a truth value; the bit set may not be that byte's).
  static constexpr uint64_t ZeroByte(uint64_t w) { return (w - kOnes) & ~w & kHighBits; }
  // True when no byte of |w| is a control byte, non-ASCII, a quote or a backslash. A byte below
  // 0x20 is found as in ZeroByte, its subtrahend 0x20 (exact for any subtrahend up to 0x80).
  static constexpr bool PlainWord(uint64_t w) {
    const uint64_t below_space = (w - kOnes * 0x20) & ~w;
    return ((below_space | w | ZeroByte(w ^ (kOnes * '"')) | ZeroByte(w ^ (kOnes * '\\'))) & kHighBits) == 0;
  }

  static constexpr char kHexPairs[] =
      "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
      "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
      "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
      "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
      "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
      "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
      "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
      "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";

  // Most pieces are a few bytes: fixed-size overlapping moves the compiler turns into plain loads
  // and stores, instead of a call into the library's memcpy for each.
  static void Copy(char* dst, const char* src, size_t n) {
    if (n >= 8) {
      if (n > 16) {
        memcpy(dst, src, n);
        return;
      }
      uint64_t a, b;
      memcpy(&a, src, 8);
      memcpy(&b, src + n - 8, 8);
      memcpy(dst, &a, 8);
      memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4) {
      uint32_t a, b;
      memcpy(&a, src, 4);
      memcpy(&b, src + n - 4, 4);
      memcpy(dst, &a, 4);
      memcpy(dst + n - 4, &b, 4);
    } else if (n > 0) {
      dst[0] = src[0];
      dst[n / 2] = src[n / 2];
      dst[n - 1] = src[n - 1];
    }
  }

  // A number is written in chunks of eight digits done in 32-bit arithmetic, whose pairs do not
  // depend on each other (a 19-digit GPU stamp is two chunks and a head, not nine dependent
  // 64-bit divisions).
  static char* WriteUint(char* out, uint64_t v) {
    constexpr uint64_t k8 = 100000000, k16 = k8 * k8;
    if (v < k8) return WriteHead(out, static_cast<uint32_t>(v));
    if (v < k16) {
      out = WriteHead(out, static_cast<uint32_t>(v / k8));
      Write8(out, static_cast<uint32_t>(v % k8));
      return out + 8;
    }
    out = WriteHead(out, static_cast<uint32_t>(v / k16));  // at most 1844
    const uint64_t rest = v % k16;
    Write8(out, static_cast<uint32_t>(rest / k8));
    Write8(out + 8, static_cast<uint32_t>(rest % k8));
    return out + 16;
  }
  // Exactly eight digits, leading zeros included.
  static void Write8(char* out, uint32_t v) {
    const uint64_t digits = Digits8(v);
    memcpy(out, &digits, 8);
  }
  // |v| < 10^8 without leading zeros: all eight digits made, and the last |n| of them written as
  // eight bytes (the room every caller takes), so that neither the count of digits nor the copy
  // is a loop or a chain of compares whose outcome changes from number to number. The digits
  // are shifted in a register: made in memory and loaded back from an offset, the load waited
  // for the four stores it spans (half of this function's time in the JSON export).
  static char* WriteHead(char* out, uint32_t v) {
    static constexpr uint32_t kPowers[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
    const int bits = 32 - __builtin_clz(v | 1);
    const int t = (bits * 1233) >> 12;  // log10(2^bits), rounded down: the digits, or one more
    const int n = t + 1 - ((v | 1) < kPowers[t]);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    const uint64_t digits = Digits8(v) << (8 * (8 - n));  // the leading zeros are the high bytes
#else
    const uint64_t digits = Digits8(v) >> (8 * (8 - n));  // the leading zeros are the low bytes
#endif
    memcpy(out, &digits, 8);
    return out + n;
  }
  // The eight digits of |v| < 10^8 as the bytes of a word in memory order (the first digit in
  // the lowest byte on a little-endian host, the highest on a big-endian one).
  static uint64_t Digits8(uint32_t v) {
    const uint32_t hi = v / 10000, lo = v % 10000;
    const uint64_t pairs[4] = {Pair(hi / 100), Pair(hi % 100), Pair(lo / 100), Pair(lo % 100)};
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return pairs[0] << 48 | pairs[1] << 32 | pairs[2] << 16 | pairs[3];
#else
    return pairs[0] | pairs[1] << 16 | pairs[2] << 32 | pairs[3] << 48;
#endif
  }
  static uint16_t Pair(uint32_t below_100) {
    uint16_t pair;
    memcpy(&pair, kPairs + 2 * below_100, 2);
    return pair;
  }

  JsonOut& Escaped(std::string_view s) {
    JsonBuffer b;
    b.String(std::string(s));
    return Raw(b.str());
  }

  void Grow(size_t need) {
    size_t cap = static_cast<size_t>(end_ - buf_.get());
    size_t n = cap == 0 ? need : cap;
    while (n < need) n *= 2;
    std::unique_ptr<char[]> next(new char[n]);
    size_t used = size();
    if (used != 0) memcpy(next.get(), buf_.get(), used);
    buf_ = std::move(next);
    p_ = buf_.get() + used;
    end_ = buf_.get() + n;
  }

  std::unique_ptr<char[]> buf_;
  char* p_ = nullptr;
  char* end_ = nullptr;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_JSON_OUT_H_
