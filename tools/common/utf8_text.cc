// UTF-8 validation, repair and bounded quoting (see utf8_text.h).
#include "tools/common/utf8_text.h"

#include "common/utf8_sequence.h"

namespace katrace::tools {

namespace {

size_t SequenceLengthAt(std::string_view s, size_t i, size_t* bad) {
  return Utf8SequenceLength(reinterpret_cast<const unsigned char*>(s.data() + i), s.size() - i, bad);
}

}  // namespace

bool IsUtf8(std::string_view s) {
  size_t bad = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t len = SequenceLengthAt(s, i, &bad);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

size_t AppendUtf8Repaired(std::string_view s, std::string* out) {
  size_t replaced = 0;
  size_t i = 0;
  while (i < s.size()) {
    // Runs of ASCII are copied in one append: names are nearly always plain ASCII.
    size_t ascii = i;
    while (ascii < s.size() && static_cast<unsigned char>(s[ascii]) < 0x80) ++ascii;
    out->append(s.data() + i, ascii - i);
    i = ascii;
    if (i == s.size()) break;
    size_t bad = 0;
    const size_t len = SequenceLengthAt(s, i, &bad);
    if (len != 0) {
      out->append(s.data() + i, len);
      i += len;
    } else {
      out->append("\xef\xbf\xbd");
      ++replaced;
      i += bad;
    }
  }
  return replaced;
}

size_t Utf8PrefixLength(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s.size();
  size_t end = max_bytes;
  // Step back over continuation bytes to the start of the sequence that would be cut.
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xc0) == 0x80) --end;
  return end;
}

std::string BoundedForMessage(std::string_view s, size_t max_bytes) {
  const size_t keep = Utf8PrefixLength(s, max_bytes);
  std::string repaired;
  AppendUtf8Repaired(s.substr(0, keep), &repaired);
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char ch : repaired) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  if (keep < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

std::string QuoteForMessage(std::string_view s, size_t max_bytes) {
  const bool cut = Utf8PrefixLength(s, max_bytes) < s.size();
  std::string inner = BoundedForMessage(s, max_bytes);
  if (!cut) return "'" + inner + "'";
  // "'abc...' (N bytes)": the size stays outside the quotes.
  const size_t size_at = inner.rfind(" (");
  return "'" + inner.substr(0, size_at) + "'" + inner.substr(size_at);
}

}  // namespace katrace::tools
