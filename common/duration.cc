// Duration grammar (see duration.h).
#include "common/duration.h"

#include <ctype.h>

namespace katrace {

const char kDurationSyntax[] =
    "a number with a unit ns, us, ms, s, m or h, e.g. 500ms or 1.5s; a bare number is seconds";

namespace {

struct Unit {
  const char* name;
  uint64_t ns;
};
constexpr uint64_t kSecond = 1000ull * 1000 * 1000;
// "" is the bare number. "min" is kept because KATRACE_DELAY took it before the grammars were
// one; "m" is what the help texts show.
constexpr Unit kUnits[] = {
    {"ns", 1},       {"us", 1000},         {"ms", 1000 * 1000},    {"", kSecond},
    {"s", kSecond},  {"m", 60 * kSecond},  {"min", 60 * kSecond},  {"h", 3600 * kSecond},
};

// Fraction digits past this many are below 1e-18 of the unit (a few millionths of a nanosecond
// even for hours, far below the nanosecond the result is rounded to): they are checked to be
// digits but not used, which keeps the arithmetic exact in 128 bits.
constexpr int kMaxFractionDigits = 18;

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n'; }
bool IsDigit(char c) { return isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsLetter(char c) { return isalpha(static_cast<unsigned char>(c)) != 0; }

bool Parse(const std::string& text, bool allow_sign, int64_t* ns, std::string* error) {
  size_t i = 0;
  size_t end = text.size();
  while (i < end && IsBlank(text[i])) ++i;
  while (end > i && IsBlank(text[end - 1])) --end;
  if (i == end) return *error = "is empty", false;

  bool negative = false;
  if (text[i] == '+' || text[i] == '-') {
    if (!allow_sign) {
      *error = text[i] == '-' ? "is negative" : "has a sign, which only an offset takes";
      return false;
    }
    negative = text[i] == '-';
    ++i;
  }

  // The whole part. An overflow is only flagged here and reported once the rest is known to be
  // valid, so that "99999999999999999999x" is named for its unit first.
  const size_t whole_begin = i;
  unsigned __int128 whole = 0;
  bool whole_too_large = false;
  for (; i < end && IsDigit(text[i]); ++i) {
    whole = whole * 10 + static_cast<unsigned>(text[i] - '0');
    if (whole > static_cast<unsigned __int128>(INT64_MAX)) whole_too_large = true, whole = 0;
  }
  if (i == whole_begin) return *error = "does not start with a number", false;

  uint64_t fraction = 0;  // the first kMaxFractionDigits digits after the point
  uint64_t fraction_scale = 1;
  if (i < end && text[i] == '.') {
    const size_t fraction_begin = ++i;
    for (; i < end && IsDigit(text[i]); ++i) {
      if (i - fraction_begin >= static_cast<size_t>(kMaxFractionDigits)) continue;
      fraction = fraction * 10 + static_cast<uint64_t>(text[i] - '0');
      fraction_scale *= 10;
    }
    if (i == fraction_begin) return *error = "has no digits after its decimal point", false;
  }

  while (i < end && IsBlank(text[i])) ++i;
  const size_t unit_begin = i;
  std::string unit;
  for (; i < end && IsLetter(text[i]); ++i) {
    unit += static_cast<char>(tolower(static_cast<unsigned char>(text[i])));
  }
  const size_t unit_end = i;
  while (i < end && IsBlank(text[i])) ++i;
  if (i < end) {
    *error = "has '" + text.substr(i, end - i) + "' after its " + (unit.empty() ? "number" : "unit");
    return false;
  }
  const Unit* found = nullptr;
  for (const Unit& u : kUnits) {
    if (unit == u.name) found = &u;
  }
  if (found == nullptr) {
    *error = "has an unknown unit '" + text.substr(unit_begin, unit_end - unit_begin) + "'";
    return false;
  }

  // Exact: whole * unit plus the fraction of a unit rounded to the nearest ns (halves up).
  const unsigned __int128 total =
      whole * found->ns + (static_cast<unsigned __int128>(fraction) * found->ns + fraction_scale / 2) / fraction_scale;
  if (whole_too_large || total > static_cast<unsigned __int128>(INT64_MAX)) {
    *error = "is too large (the limit is 2^63-1 ns, about 292 years)";
    return false;
  }
  *ns = negative ? -static_cast<int64_t>(total) : static_cast<int64_t>(total);
  return true;
}

}  // namespace

bool ParseDuration(const std::string& text, int64_t* ns, std::string* error) {
  return Parse(text, false, ns, error);
}

bool ParseSignedDuration(const std::string& text, int64_t* ns, std::string* error) {
  return Parse(text, true, ns, error);
}

}  // namespace katrace
