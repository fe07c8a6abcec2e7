// The export's JSON text buffer: the same bytes as plugin/json_buffer.h (integers, µs with three
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

#include "plugin/json_buffer.h"

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
    Reserve(20);
    p_ = WriteUint(p_, v);
    return *this;
  }
  JsonOut& Int(int64_t v) {
    Reserve(21);
    if (v < 0) {
      *p_++ = '-';
      p_ = WriteUint(p_, static_cast<uint64_t>(-(v + 1)) + 1);
    } else {
      p_ = WriteUint(p_, static_cast<uint64_t>(v));
    }
    return *this;
  }
  // Nanoseconds written as microseconds with three decimals: 12345 -> "12.345". The magnitude
  // is an unsigned negation: the bytes JsonBuffer gives, without signed overflow at INT64_MIN.
  JsonOut& Micros(int64_t ns) {
    Reserve(26);
    uint64_t u = static_cast<uint64_t>(ns);
    if (ns < 0) {
      *p_++ = '-';
      u = 0 - u;
    }
    p_ = WriteUint(p_, u / 1000);
    unsigned frac = static_cast<unsigned>(u % 1000);
    p_[0] = '.';
    p_[1] = static_cast<char>('0' + frac / 100);
    memcpy(p_ + 2, kPairs + 2 * (frac % 100), 2);
    p_ += 4;
    return *this;
  }
  JsonOut& Hex64(uint64_t v) {
    static const char kDigits[] = "0123456789abcdef";
    Reserve(16);
    for (int i = 15; i >= 0; --i, v >>= 4) p_[i] = kDigits[v & 0xf];
    p_ += 16;
    return *this;
  }

  // A quoted, escaped JSON string.
  JsonOut& String(std::string_view s) {
    Reserve(s.size() + 2);
    bool plain = true;
    for (char ch : s) {
      unsigned char c = static_cast<unsigned char>(ch);
      if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') {
        plain = false;
        break;
      }
    }
    if (!plain) return Escaped(s);
    *p_++ = '"';
    Copy(p_, s.data(), s.size());
    p_ += s.size();
    *p_++ = '"';
    return *this;
  }

  // "key":
  JsonOut& Key(std::string_view key) {
    Reserve(key.size() + 3);
    *p_++ = '"';
    Copy(p_, key.data(), key.size());
    p_ += key.size();
    p_[0] = '"';
    p_[1] = ':';
    p_ += 2;
    return *this;
  }

 private:
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

  // Decimal digits of |v|, then the digits written in place from the last pair backwards.
  static int DecimalDigits(uint64_t v) {
    int n = 1;
    for (;;) {
      if (v < 10) return n;
      if (v < 100) return n + 1;
      if (v < 1000) return n + 2;
      if (v < 10000) return n + 3;
      v /= 10000;
      n += 4;
    }
  }
  static char* WriteUint(char* out, uint64_t v) {
    int n = DecimalDigits(v);
    char* q = out + n;
    while (v >= 100) {
      q -= 2;
      memcpy(q, kPairs + 2 * (v % 100), 2);
      v /= 100;
    }
    if (v >= 10) {
      memcpy(q - 2, kPairs + 2 * v, 2);
    } else {
      q[-1] = static_cast<char>('0' + v);
    }
    return out + n;
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
