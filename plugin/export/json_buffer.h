// Append-only text buffer with the few JSON primitives the trace needs. Numbers are formatted
// from integers (no floating point, no locale), and times in microseconds keep exactly three
// decimals, i.e. nanosecond precision, as Perfetto reads them.
#ifndef KATRACE_PLUGIN_EXPORT_JSON_BUFFER_H_
#define KATRACE_PLUGIN_EXPORT_JSON_BUFFER_H_

#include <stdint.h>
#include <string.h>

#include <string>

#include "common/hex16.h"
#include "common/utf8_sequence.h"

namespace katrace {

inline void AppendWellFormedUtf8(std::string* out, const char* s, size_t n, bool json_escape);

class JsonBuffer {
 public:
  const std::string& str() const { return out_; }
  size_t size() const { return out_.size(); }
  void clear() { out_.clear(); }

  JsonBuffer& Raw(const char* s) {
    out_.append(s);
    return *this;
  }
  JsonBuffer& Raw(const char* s, size_t n) {
    out_.append(s, n);
    return *this;
  }
  JsonBuffer& Char(char c) {
    out_.push_back(c);
    return *this;
  }

  JsonBuffer& Uint(uint64_t v) {
    char tmp[24];
    char* p = tmp + sizeof(tmp);
    do {
      *--p = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    out_.append(p, static_cast<size_t>(tmp + sizeof(tmp) - p));
    return *this;
  }

  JsonBuffer& Int(int64_t v) {
    if (v < 0) {
      out_.push_back('-');
      return Uint(static_cast<uint64_t>(-(v + 1)) + 1);
    }
    return Uint(static_cast<uint64_t>(v));
  }

  // Nanoseconds written as microseconds with three decimals: 12345 -> "12.345".
  JsonBuffer& Micros(int64_t ns) {
    // The magnitude by an unsigned negation, so that INT64_MIN does not overflow.
    uint64_t magnitude = static_cast<uint64_t>(ns);
    if (ns < 0) {
      out_.push_back('-');
      magnitude = ~magnitude + 1;
    }
    Uint(magnitude / 1000);
    unsigned frac = static_cast<unsigned>(magnitude % 1000);
    char f[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                 static_cast<char>('0' + frac % 10)};
    out_.append(f, 4);
    return *this;
  }

  JsonBuffer& Hex64(uint64_t v) {
    char digits[16];
    FormatHex16(v, digits);
    out_.append(digits, sizeof(digits));
    return *this;
  }

  // A quoted, escaped JSON string; NULL becomes "" so a missing NCCL string never breaks the file.
  JsonBuffer& String(const char* s) {
    out_.push_back('"');
    if (s != nullptr) Escaped(s, strlen(s));
    out_.push_back('"');
    return *this;
  }
  JsonBuffer& String(const std::string& s) {
    out_.push_back('"');
    Escaped(s.data(), s.size());
    out_.push_back('"');
    return *this;
  }

  // "key":
  JsonBuffer& Key(const char* key) {
    out_.push_back('"');
    out_.append(key);
    out_.append("\":", 2);
    return *this;
  }

 private:
  void Escaped(const char* s, size_t n) { AppendWellFormedUtf8(&out_, s, n, true); }

  std::string out_;
};

// Appends |s| to |out| with every byte sequence that is not well-formed UTF-8 (Unicode 3.9,
// table 3-7) replaced by U+FFFD, one per maximal ill-formed subpart, so a communicator or host
// name with stray bytes still yields a file strict parsers accept; with |json_escape|, control
// characters, quotes and backslashes are escaped as a JSON string needs.
inline void AppendWellFormedUtf8(std::string* out, const char* s, size_t n, bool json_escape) {
  static const char kHex[] = "0123456789abcdef";
  size_t i = 0;
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (json_escape && (c == '"' || c == '\\')) {
        out->push_back('\\');
        out->push_back(static_cast<char>(c));
      } else if (json_escape && c < 0x20) {
        char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
        out->append(esc, 6);
      } else {
        out->push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    size_t bad = 0;
    const size_t len = Utf8SequenceLength(reinterpret_cast<const unsigned char*>(s + i), n - i, &bad);
    if (len != 0) {
      out->append(s + i, len);
      i += len;
    } else {
      out->append("\xef\xbf\xbd", 3);
      i += bad;
    }
  }
}


}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_JSON_BUFFER_H_
