// The parser of json_stream_parser.h: an explicit stack instead of recursion (depth is capped,
// but a fuzzer or a corrupt file should not be able to reach the C++ stack limit either), and a
// token buffer that is the only thing growing with the input, up to its cap.
#include "tools/common/json_stream_parser.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <vector>

#include "tools/common/utf8_text.h"

namespace katrace::tools {
namespace {

constexpr bool IsDigit(int c) { return c >= '0' && c <= '9'; }

// What a number token is made of; IsJsonNumber then checks their order.
constexpr bool IsNumberChar(int c) {
  return IsDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
}

// By byte: true where a string holds the byte as it is (not a quote, a backslash or a control
// byte), and where a number token goes on; a table, as the scans below run for every byte.
struct ByteClasses {
  bool plain_in_string[256];
  bool in_number[256];
};
constexpr ByteClasses kBytes = [] {
  ByteClasses t{};
  for (int c = 0; c < 256; ++c) {
    t.plain_in_string[c] = c >= 0x20 && c != '"' && c != '\\';
    t.in_number[c] = IsNumberChar(c);
  }
  return t;
}();

int HexValue(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendCodePoint(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | cp >> 6));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | cp >> 12));
    out->push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | cp >> 18));
    out->push_back(static_cast<char>(0x80 | (cp >> 12 & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

// JSON's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool IsJsonNumber(const std::string& t, bool* is_integer) {
  size_t i = 0;
  const size_t n = t.size();
  if (i < n && t[i] == '-') ++i;
  if (i == n) return false;
  if (t[i] == '0') {
    ++i;
  } else if (IsDigit(t[i])) {
    while (i < n && IsDigit(t[i])) ++i;
  } else {
    return false;
  }
  *is_integer = true;
  if (i < n && t[i] == '.') {
    *is_integer = false;
    const size_t digits = ++i;
    while (i < n && IsDigit(t[i])) ++i;
    if (i == digits) return false;
  }
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    *is_integer = false;
    ++i;
    if (i < n && (t[i] == '+' || t[i] == '-')) ++i;
    const size_t digits = i;
    while (i < n && IsDigit(t[i])) ++i;
    if (i == digits) return false;
  }
  return i == n;
}

std::string Describe(int c) {
  if (c > 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  static const char kHex[] = "0123456789abcdef";
  return std::string("byte 0x") + kHex[(c >> 4) & 0xf] + kHex[c & 0xf];
}

}  // namespace

int JsonStreamParser::SkipSpaceAndPeek() { return in_->SkipBlanksAndPeek(); }

JsonParseStatus JsonStreamParser::Fail(JsonParseStatus status, std::string message) {
  message_ = std::move(message);
  return status;
}

JsonParseStatus JsonStreamParser::Unexpected(int c, const char* wanted) {
  return Fail(JsonParseStatus::kSyntax, "unexpected " + Describe(c) + " where " + wanted +
                                            " should be");
}

JsonParseStatus JsonStreamParser::ReadString() {
  token_.clear();
  bool non_ascii = false;
  bool repaired = false;
  for (;;) {
    // The run of plain bytes ahead in the buffer, up to the cap, is appended at once; the byte
    // that ends it (a quote, an escape, a control byte, the cap, the buffer's end) is taken
    // below, one at a time as before, so every outcome and message is the same.
    const char* const run = in_->buffered();
    const size_t cap = limits_.max_string_bytes;
    const size_t room = token_.size() < cap ? cap - token_.size() : 0;  // escapes may pass it
    const char* const run_end = run + std::min(in_->buffered_size(), room);
    const char* p = run;
    unsigned char high = 0;
    while (p < run_end && kBytes.plain_in_string[static_cast<unsigned char>(*p)]) {
      high |= static_cast<unsigned char>(*p++);
    }
    if (p != run) {
      non_ascii |= high >= 0x80;
      token_.append(run, static_cast<size_t>(p - run));
      in_->Consume(static_cast<size_t>(p - run));
    }
    const int c = Get();
    if (c == kEof) return JsonParseStatus::kEndOfInput;
    if (c == '"') break;
    if (token_.size() >= limits_.max_string_bytes) {
      return Fail(JsonParseStatus::kLimit, "a string longer than " +
                                               std::to_string(limits_.max_string_bytes) +
                                               " bytes (the limit; a corrupt or hostile file?)");
    }
    if (c < 0x20) return Fail(JsonParseStatus::kSyntax, "unescaped " + Describe(c) + " in a string");
    if (c != '\\') {
      non_ascii |= c >= 0x80;
      token_.push_back(static_cast<char>(c));
      continue;
    }
    const int e = Get();
    switch (e) {
      case '"': token_.push_back('"'); break;
      case '\\': token_.push_back('\\'); break;
      case '/': token_.push_back('/'); break;
      case 'b': token_.push_back('\b'); break;
      case 'f': token_.push_back('\f'); break;
      case 'n': token_.push_back('\n'); break;
      case 'r': token_.push_back('\r'); break;
      case 't': token_.push_back('\t'); break;
      case 'u': {
        uint32_t cp = 0;
        for (int k = 0; k < 4; ++k) {
          const int h = Get();
          if (h == kEof) return JsonParseStatus::kEndOfInput;
          if (HexValue(h) < 0) return Unexpected(h, "a hex digit of \\u");
          cp = cp << 4 | static_cast<uint32_t>(HexValue(h));
        }
        if (cp >= 0xd800 && cp <= 0xdbff && Peek() == '\\') {
          // A high surrogate pairs with a following \uDC00..\uDFFF into one code point.
          Get();
          if (Get() != 'u') return Fail(JsonParseStatus::kSyntax, "bad escape after \\u" );
          uint32_t low = 0;
          for (int k = 0; k < 4; ++k) {
            const int h = Get();
            if (h == kEof) return JsonParseStatus::kEndOfInput;
            if (HexValue(h) < 0) return Unexpected(h, "a hex digit of \\u");
            low = low << 4 | static_cast<uint32_t>(HexValue(h));
          }
          if (low >= 0xdc00 && low <= 0xdfff) {
            AppendCodePoint(0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00), &token_);
          } else {
            token_ += "\xef\xbf\xbd";
            repaired = true;
            if (low >= 0xd800 && low <= 0xdfff) {
              token_ += "\xef\xbf\xbd";
            } else {
              AppendCodePoint(low, &token_);
            }
          }
        } else if (cp >= 0xd800 && cp <= 0xdfff) {
          token_ += "\xef\xbf\xbd";  // a lone surrogate is no character
          repaired = true;
        } else {
          AppendCodePoint(cp, &token_);
        }
        break;
      }
      case kEof: return JsonParseStatus::kEndOfInput;
      default: return Unexpected(e, "an escape letter");
    }
  }
  if (non_ascii && !IsUtf8(token_)) {
    std::string fixed;
    fixed.reserve(token_.size() + 16);
    AppendUtf8Repaired(token_, &fixed);
    token_.swap(fixed);
    repaired = true;
  }
  repaired_strings_ += repaired ? 1 : 0;
  return JsonParseStatus::kOk;
}

JsonParseStatus JsonStreamParser::ReadNumber(int first) {
  token_.clear();
  token_.push_back(static_cast<char>(first));
  // The number's characters ahead in the buffer, up to the cap, are appended at once; one that
  // spans two buffers, or goes past the cap, goes on below a byte at a time as before.
  const size_t cap = limits_.max_number_bytes;
  const char* const run = in_->buffered();
  const char* const run_end = run + std::min(in_->buffered_size(), cap > 1 ? cap - 1 : 0);
  const char* p = run;
  while (p < run_end && kBytes.in_number[static_cast<unsigned char>(*p)]) ++p;
  if (p != run) {
    token_.append(run, static_cast<size_t>(p - run));
    in_->Consume(static_cast<size_t>(p - run));
  }
  for (int c = Peek(); IsNumberChar(c); c = Peek()) {
    if (token_.size() >= limits_.max_number_bytes) {
      return Fail(JsonParseStatus::kLimit, "a number longer than " +
                                               std::to_string(limits_.max_number_bytes) +
                                               " characters (the limit)");
    }
    token_.push_back(static_cast<char>(Get()));
  }
  bool is_integer = false;
  if (!IsJsonNumber(token_, &is_integer)) {
    return Fail(JsonParseStatus::kSyntax, "malformed number " + QuoteForMessage(token_, 40));
  }
  const char* begin = token_.data();
  const char* end = begin + token_.size();
  if (is_integer) {
    // As nlohmann does: negative integers as int64, others as uint64, and floats past that.
    if (token_[0] == '-') {
      int64_t v = 0;
      const auto r = std::from_chars(begin, end, v);
      if (r.ec == std::errc() && r.ptr == end) {
        return sax_->number_integer(v) ? JsonParseStatus::kOk : JsonParseStatus::kStopped;
      }
    } else {
      uint64_t v = 0;
      const auto r = std::from_chars(begin, end, v);
      if (r.ec == std::errc() && r.ptr == end) {
        return sax_->number_unsigned(v) ? JsonParseStatus::kOk : JsonParseStatus::kStopped;
      }
    }
  }
  // from_chars rounds as strtod does (both to the nearest double) at a fraction of its cost;
  // past double's range it gives up, and strtod gives what it gave before (an infinity, a zero).
  double v = 0;
  const auto r = std::from_chars(begin, end, v);
  if (r.ec != std::errc() || r.ptr != end) v = std::strtod(token_.c_str(), nullptr);
  return sax_->number_float(v, token_) ? JsonParseStatus::kOk : JsonParseStatus::kStopped;
}

JsonParseStatus JsonStreamParser::ReadLiteral(int first) {
  const char* word = first == 't' ? "true" : first == 'f' ? "false" : "null";
  for (const char* p = word + 1; *p != '\0'; ++p) {
    const int c = Get();
    if (c == kEof) return JsonParseStatus::kEndOfInput;
    if (c != *p) return Fail(JsonParseStatus::kSyntax, std::string("invalid literal (not ") + word + ")");
  }
  bool go_on = true;
  if (first == 'n') {
    go_on = sax_->null();
  } else {
    go_on = sax_->boolean(first == 't');
  }
  return go_on ? JsonParseStatus::kOk : JsonParseStatus::kStopped;
}

JsonParseStatus JsonStreamParser::ReadKey() {
  int c = SkipSpaceAndPeek();
  if (c == kEof) return JsonParseStatus::kEndOfInput;
  if (c != '"') return Unexpected(c, "a quoted key");
  Get();
  JsonParseStatus status = ReadString();
  if (status != JsonParseStatus::kOk) return status;
  if (!sax_->key(token_)) return JsonParseStatus::kStopped;
  c = SkipSpaceAndPeek();
  if (c == kEof) return JsonParseStatus::kEndOfInput;
  if (c != ':') return Unexpected(c, "':' after a key");
  Get();
  return JsonParseStatus::kOk;
}

JsonParseStatus JsonStreamParser::Parse() {
  std::vector<char> open;  // '{' or '[' per open container, innermost last
  for (;;) {
    // A value is due here.
    int c = SkipSpaceAndPeek();
    if (c == kEof) return JsonParseStatus::kEndOfInput;
    Get();
    JsonParseStatus status = JsonParseStatus::kOk;
    if (c == '{' || c == '[') {
      if (open.size() >= static_cast<size_t>(limits_.max_depth)) {
        return Fail(JsonParseStatus::kLimit, "nesting deeper than " +
                                                 std::to_string(limits_.max_depth) +
                                                 " levels (the limit)");
      }
      const bool is_object = c == '{';
      const size_t unknown = static_cast<size_t>(-1);
      if (!(is_object ? sax_->start_object(unknown) : sax_->start_array(unknown))) {
        return JsonParseStatus::kStopped;
      }
      open.push_back(static_cast<char>(c));
      const int next = SkipSpaceAndPeek();
      if (next != (is_object ? '}' : ']')) {
        if (is_object && (status = ReadKey()) != JsonParseStatus::kOk) return status;
        continue;
      }
      Get();
      open.pop_back();
      if (!(is_object ? sax_->end_object() : sax_->end_array())) return JsonParseStatus::kStopped;
    } else if (c == '"') {
      if ((status = ReadString()) != JsonParseStatus::kOk) return status;
      if (!sax_->string(token_)) return JsonParseStatus::kStopped;
    } else if (c == '-' || IsDigit(c)) {
      if ((status = ReadNumber(c)) != JsonParseStatus::kOk) return status;
    } else if (c == 't' || c == 'f' || c == 'n') {
      if ((status = ReadLiteral(c)) != JsonParseStatus::kOk) return status;
    } else {
      return Unexpected(c, "a value");
    }
    // After a value: close what ends here, then either the next element or the end.
    for (;;) {
      c = SkipSpaceAndPeek();
      if (open.empty()) {
        return c == kEof ? JsonParseStatus::kOk : Unexpected(c, "the end of the input");
      }
      if (c == kEof) return JsonParseStatus::kEndOfInput;
      Get();
      const bool in_object = open.back() == '{';
      if (c == ',') {
        if (in_object && (status = ReadKey()) != JsonParseStatus::kOk) return status;
        break;
      }
      if (c != (in_object ? '}' : ']')) return Unexpected(c, in_object ? "',' or '}'" : "',' or ']'");
      open.pop_back();
      if (!(in_object ? sax_->end_object() : sax_->end_array())) return JsonParseStatus::kStopped;
    }
  }
}

}  // namespace katrace::tools
