// Event kind grammar (see event_mask.h).
#include "common/event_mask.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "common/text.h"

namespace katrace {
namespace {

constexpr int kDerivedCount = sizeof(kDerivedKinds) / sizeof(kDerivedKinds[0]);
static_assert(kDerivedCount <= 32, "KindSelection::derived has a bit per derived kind");

// The bits of every kind on |side|.
constexpr int SideMask(Side side) {
  int bits = 0;
  for (const KindInfo& k : kKindInfo) {
    if (k.side == side) bits |= static_cast<int>(k.type_bit);
  }
  return bits;
}

// The derived kinds whose source kind is in |bits|: what a trace holds of them once those kinds
// are recorded.
uint32_t DerivedOf(int bits) {
  uint32_t derived = 0;
  for (int i = 0; i < kDerivedCount; ++i) {
    if ((bits & static_cast<int>(kKindInfo[static_cast<int>(kDerivedKinds[i].from)].type_bit)) != 0) {
      derived |= 1u << i;
    }
  }
  return derived;
}

// Sets users reach for. `gpu` is the table's GPU side and `host` the rest (the application's
// and the proxy's callbacks: the two sides of the summary tables); the others are families the
// table does not mark (`proxy` is the proxy's own events: NetPlugin, though called from the
// proxy thread, is `net`, voluminous and asked for on its own).
struct MaskSet {
  const char* name;
  int bits;
};
constexpr MaskSet kMaskSets[] = {
    {"api", ncclProfileGroupApi | ncclProfileCollApi | ncclProfileP2pApi | ncclProfileKernelLaunch},
    {"proxy", ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileProxyCtrl},
    {"net", ncclProfileNetPlugin},
    {"host", SideMask(Side::kHost) | SideMask(Side::kProxy)},
    {"gpu", SideMask(Side::kGpu)},
    {"ce", ncclProfileCeColl | ncclProfileCeSync | ncclProfileCeBatch},
    {"all", kAllKindsMask},
    {"none", 0},
    {"default", kDefaultMask},
};

// Every word of the grammar, lower case, comma separated: kinds, then (for --kinds) the derived
// kinds, then the sets.
std::string KindWords(bool with_derived) {
  std::string words;
  for (const KindInfo& k : kKindInfo) words += (words.empty() ? "" : ", ") + Lower(k.name);
  if (with_derived) {
    for (const DerivedKindInfo& d : kDerivedKinds) words += ", " + Lower(d.name);
  }
  for (const MaskSet& s : kMaskSets) words += std::string(", ") + s.name;
  return words;
}

// What one word adds or removes; |written| is the word as the user wrote it, for messages. |extras|
// is null for the mask grammar, where derived kinds are refused: they are drawn at export, never
// recorded, so a mask cannot ask for them.
bool LookupWord(const std::string& written, const std::vector<std::string>* extras, KindSelection* bits,
                std::string* error) {
  const std::string word = Lower(written);
  for (const KindInfo& k : kKindInfo) {
    if (Lower(k.name) != word) continue;
    const int bit = static_cast<int>(k.type_bit);
    *bits = {bit, DerivedOf(bit), 0};
    return true;
  }
  for (int i = 0; i < kDerivedCount; ++i) {
    const DerivedKindInfo& d = kDerivedKinds[i];
    if (Lower(d.name) != word) continue;
    if (extras == nullptr) {
      *error = "'" + written + "' is not recorded but derived from " + KindName(d.from) + " at export (name " +
               Lower(KindName(d.from)) + " to record it)";
      return false;
    }
    *bits = {0, 1u << i, 0};
    return true;
  }
  for (const MaskSet& s : kMaskSets) {
    if (word != s.name) continue;
    *bits = {s.bits, DerivedOf(s.bits), 0};
    // `all` is everything a trace holds, the caller's words (flows, counters) included.
    if (extras != nullptr && word == "all") {
      for (size_t i = 0; i < extras->size(); ++i) bits->extras |= 1u << i;
    }
    return true;
  }
  if (extras != nullptr) {
    for (size_t i = 0; i < extras->size(); ++i) {
      if ((*extras)[i] == word) return *bits = {0, 0, 1u << i}, true;
    }
  }
  *error = (word.empty() ? std::string("'-' without a name") : "unknown event name '" + written + "'") +
           " (known: " + (extras == nullptr ? KindWords(false) : KindSelectionWords(*extras)) + ")";
  return false;
}

bool ParseNumber(const std::string& t, int* mask) {
  errno = 0;
  char* end = nullptr;
  // Decimal, or hexadecimal after 0x: never octal ("010" is ten).
  const bool hex = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
  unsigned long long v = strtoull(t.c_str(), &end, hex ? 16 : 10);
  if (errno != 0 || end == t.c_str() || *end != '\0' || v > 0x7fffffffull) return false;
  *mask = static_cast<int>(v);
  return true;
}

// The one parser behind both entry points: |extras| null is the mask grammar.
bool ParseWords(const std::string& text, const std::vector<std::string>* extras, KindSelection* selection,
                std::string* error) {
  const std::string t = Trim(text);
  if (t.empty()) return *error = "empty list", false;
  if (isdigit(static_cast<unsigned char>(t[0]))) {
    int mask = 0;
    if (!ParseNumber(Lower(t), &mask)) return *error = "not a valid number", false;
    *selection = {mask, DerivedOf(mask), 0};
    return true;
  }
  KindSelection result;
  size_t pos = 0;
  while (pos <= t.size()) {
    size_t end = t.find_first_of(",+| \t", pos);
    if (end == std::string::npos) end = t.size();
    std::string word = t.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    const bool remove = word[0] == '-';
    if (remove) word.erase(0, 1);
    KindSelection bits;
    if (!LookupWord(word, extras, &bits, error)) return false;
    if (remove) {
      result = {result.mask & ~bits.mask, result.derived & ~bits.derived, result.extras & ~bits.extras};
    } else {
      result = {result.mask | bits.mask, result.derived | bits.derived, result.extras | bits.extras};
    }
  }
  *selection = result;
  return true;
}

}  // namespace

bool ParseEventMask(const std::string& text, int* mask, std::string* error) {
  KindSelection selection;
  if (!ParseWords(text, nullptr, &selection, error)) return false;
  *mask = selection.mask;
  return true;
}

std::string EventMaskWords() { return KindWords(false); }

bool ParseKindSelection(const std::string& text, const std::vector<std::string>& extra_words,
                        KindSelection* selection, std::string* error) {
  return ParseWords(text, &extra_words, selection, error);
}

std::string KindSelectionWords(const std::vector<std::string>& extra_words) {
  std::string words = KindWords(true);
  for (const std::string& w : extra_words) words += ", " + w;
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
