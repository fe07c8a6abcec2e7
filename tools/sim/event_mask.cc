#include "tools/sim/event_mask.h"

#include <strings.h>

#include <cerrno>
#include <cstdlib>

namespace katrace::sim {
namespace {

struct NamedBit {
  const char* name;
  int bit;
};

constexpr NamedBit kNamedBits[] = {
    {"Group", ncclProfileGroup},         {"Coll", ncclProfileColl},
    {"P2p", ncclProfileP2p},             {"ProxyOp", ncclProfileProxyOp},
    {"ProxyStep", ncclProfileProxyStep}, {"ProxyCtrl", ncclProfileProxyCtrl},
    {"KernelCh", ncclProfileKernelCh},   {"NetPlugin", ncclProfileNetPlugin},
    {"GroupApi", ncclProfileGroupApi},   {"CollApi", ncclProfileCollApi},
    {"P2pApi", ncclProfileP2pApi},       {"KernelLaunch", ncclProfileKernelLaunch},
    {"CeColl", ncclProfileCeColl},       {"CeSync", ncclProfileCeSync},
    {"CeBatch", ncclProfileCeBatch},     {"KernelStep", ncclProfileKernelStep},
};

// "all" means every upstream v6 event; KernelStep is opt-in because it needs a patched core.
constexpr int kAllUpstreamEvents = 0x7FFF;

std::string Trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t");
  size_t end = text.find_last_not_of(" \t");
  return begin == std::string::npos ? std::string() : text.substr(begin, end - begin + 1);
}

}  // namespace

int EventKindIndex(uint64_t type) {
  if (type == static_cast<uint64_t>(ncclProfileKernelStep)) return kKernelStepKind;
  if (type == 0 || (type & (type - 1)) != 0 || type > ncclProfileCeBatch) return kOtherKind;
  return __builtin_ctzll(type);
}

const char* EventKindName(int kind_index) {
  if (kind_index == kKernelStepKind) return "KernelStep";
  if (kind_index >= 0 && kind_index < 15) return kNamedBits[kind_index].name;
  return "Other";
}

std::optional<int> ParseEventMask(const std::string& text, std::string* error) {
  std::string trimmed = Trim(text);
  if (trimmed.empty()) {
    *error = "empty event mask";
    return std::nullopt;
  }
  if (trimmed[0] >= '0' && trimmed[0] <= '9') {
    errno = 0;
    char* end = nullptr;
    long long value = std::strtoll(trimmed.c_str(), &end, 0);
    if (errno != 0 || end == nullptr || *end != '\0' || value < 0 || value > 0x7FFFFFFF) {
      *error = "'" + trimmed + "' is not a valid event mask number";
      return std::nullopt;
    }
    return static_cast<int>(value);
  }
  int mask = 0;
  size_t start = 0;
  while (start <= trimmed.size()) {
    size_t comma = trimmed.find(',', start);
    std::string name = Trim(trimmed.substr(start, comma == std::string::npos ? std::string::npos
                                                                              : comma - start));
    if (strcasecmp(name.c_str(), "all") == 0) {
      mask |= kAllUpstreamEvents;
    } else if (strcasecmp(name.c_str(), "none") == 0) {
    } else {
      bool found = false;
      for (const NamedBit& named : kNamedBits) {
        if (strcasecmp(name.c_str(), named.name) == 0) {
          mask |= named.bit;
          found = true;
          break;
        }
      }
      if (!found) {
        *error = "unknown event name '" + name +
                 "' in mask (known: group, coll, p2p, proxyop, proxystep, proxyctrl, kernelch, "
                 "netplugin, groupapi, collapi, p2papi, kernellaunch, cecoll, cesync, cebatch, "
                 "kernelstep, all, none)";
        return std::nullopt;
      }
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return mask;
}

std::string DescribeEventMask(int mask) {
  std::string text;
  for (const NamedBit& named : kNamedBits) {
    if ((mask & named.bit) == 0) continue;
    if (!text.empty()) text += '|';
    text += named.name;
  }
  return text.empty() ? "none" : text;
}

}  // namespace katrace::sim
