// Command-line helpers (see cli_args.h).
#include "tools/common/cli_args.h"

#include <sys/stat.h>

#include <charconv>
#include <cstring>

namespace katrace::tools {

bool TakeOption(int argc, char** argv, int* i, const char* name, std::string* value, bool* ok) {
  const char* arg = argv[*i];
  const size_t len = std::strlen(name);
  if (std::strncmp(arg, name, len) != 0) return false;
  if (arg[len] == '=') {
    *value = arg + len + 1;
    *ok = true;
    return true;
  }
  if (arg[len] != '\0') return false;
  if (*i + 1 >= argc) {
    *ok = false;
    return true;
  }
  *value = argv[++*i];
  *ok = true;
  return true;
}

std::vector<std::string> SplitList(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string::npos) end = text.size();
    if (end > start) parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

bool ParseUint64(const std::string& text, uint64_t* value) {
  if (text.empty()) return false;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), *value);
  return result.ec == std::errc() && result.ptr == text.data() + text.size();
}

bool RankSelection::Parse(const std::string& text, std::string* error) {
  ranges_.clear();
  for (const std::string& part : SplitList(text)) {
    const size_t dash = part.find('-');
    uint64_t lo = 0, hi = 0;
    const bool ok = dash == std::string::npos
                        ? ParseUint64(part, &lo) && (hi = lo, true)
                        : ParseUint64(part.substr(0, dash), &lo) &&
                              ParseUint64(part.substr(dash + 1), &hi);
    if (!ok || lo > hi || hi > static_cast<uint64_t>(INT64_MAX)) {
      *error = "bad rank list '" + text + "' at '" + part + "' (want e.g. 0-7,12)";
      return false;
    }
    ranges_.emplace_back(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
  }
  if (ranges_.empty()) {
    *error = "empty rank list";
    return false;
  }
  return true;
}

bool RankSelection::Contains(int64_t rank) const {
  if (ranges_.empty()) return true;
  for (const auto& [lo, hi] : ranges_) {
    if (rank >= lo && rank <= hi) return true;
  }
  return false;
}

bool ParseByteSize(const std::string& text, uint64_t* bytes, std::string* error) {
  std::string digits = text;
  uint64_t scale = 1;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'k': case 'K': scale = uint64_t{1} << 10; break;
      case 'm': case 'M': scale = uint64_t{1} << 20; break;
      case 'g': case 'G': scale = uint64_t{1} << 30; break;
      default: break;
    }
    if (scale != 1) digits.pop_back();
  }
  uint64_t value = 0;
  if (!ParseUint64(digits, &value) || value > UINT64_MAX / scale) {
    *error = "bad size '" + text + "' (want e.g. 256M)";
    return false;
  }
  *bytes = value * scale;
  return true;
}

bool OutputIsAnInput(const std::string& output, const std::vector<std::string>& inputs,
                     std::string* error) {
  struct stat out_st;
  // An output that does not exist yet cannot be read as an input either.
  if (output == "-" || stat(output.c_str(), &out_st) != 0) return false;
  for (const std::string& input : inputs) {
    struct stat in_st;
    if (stat(input.c_str(), &in_st) == 0 && in_st.st_dev == out_st.st_dev &&
        in_st.st_ino == out_st.st_ino) {
      *error = "the output " + output + " is also an input (" + input +
               "); refusing to overwrite it";
      return true;
    }
  }
  return false;
}

}  // namespace katrace::tools
