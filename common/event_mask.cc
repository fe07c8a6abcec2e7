// Event mask grammar (see event_mask.h).
#include "common/event_mask.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

namespace katrace {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\n");
  return s.substr(b, e - b + 1);
}

// The bits of every kind on |side|.
constexpr int SideMask(Side side) {
  int bits = 0;
  for (const KindInfo& k : kKindInfo) {
    if (k.side == side) bits |= static_cast<int>(k.type_bit);
  }
  return bits;
}

// Sets users reach for. `gpu` is the table's GPU side; the others are families the table does
// not mark (`proxy` is the proxy's own events: NetPlugin, though called from the proxy thread,
// is `net`, voluminous and asked for on its own).
struct MaskSet {
  const char* name;
  int bits;
};
constexpr MaskSet kMaskSets[] = {
    {"api", ncclProfileGroupApi | ncclProfileCollApi | ncclProfileP2pApi | ncclProfileKernelLaunch},
    {"proxy", ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileProxyCtrl},
    {"net", ncclProfileNetPlugin},
    {"gpu", SideMask(Side::kGpu)},
    {"ce", ncclProfileCeColl | ncclProfileCeSync | ncclProfileCeBatch},
    {"all", kAllKindsMask},
    {"none", 0},
    {"default", kDefaultMask},
};

bool LookupMaskWord(const std::string& word, int* bits) {
  for (const KindInfo& k : kKindInfo) {
    if (Lower(k.name) == word) return *bits = static_cast<int>(k.type_bit), true;
  }
  for (const MaskSet& s : kMaskSets) {
    if (word == s.name) return *bits = s.bits, true;
  }
  return false;
}

bool ParseNumber(const std::string& t, int* mask) {
  errno = 0;
  char* end = nullptr;
  unsigned long long v = strtoull(t.c_str(), &end, 0);
  if (errno != 0 || end == t.c_str() || *end != '\0' || v > 0x7fffffffull) return false;
  *mask = static_cast<int>(v);
  return true;
}

}  // namespace

bool ParseEventMask(const std::string& text, int* mask, std::string* error) {
  std::string t = Lower(Trim(text));
  if (t.empty()) return *error = "empty mask", false;
  if (isdigit(static_cast<unsigned char>(t[0]))) {
    if (!ParseNumber(t, mask)) return *error = "not a valid number", false;
    return true;
  }
  int result = 0;
  size_t pos = 0;
  while (pos <= t.size()) {
    size_t end = t.find_first_of(",+| \t", pos);
    if (end == std::string::npos) end = t.size();
    std::string word = t.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    bool remove = word[0] == '-';
    if (remove) word.erase(0, 1);
    int bits = 0;
    if (!LookupMaskWord(word, &bits)) return *error = "unknown event name '" + word + "'", false;
    result = remove ? (result & ~bits) : (result | bits);
  }
  *mask = result;
  return true;
}

std::string EventMaskWords() {
  std::string words;
  for (const KindInfo& k : kKindInfo) words += (words.empty() ? "" : ", ") + Lower(k.name);
  for (const MaskSet& s : kMaskSets) words += std::string(", ") + s.name;
  return words;
}

std::string DescribeEventMask(int mask) {
  std::string text;
  for (const KindInfo& k : kKindInfo) {
    if ((mask & static_cast<int>(k.type_bit)) == 0) continue;
    if (!text.empty()) text += '|';
    text += k.name;
  }
  return text.empty() ? "none" : text;
}

}  // namespace katrace
