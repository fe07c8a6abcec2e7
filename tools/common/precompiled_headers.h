// The headers most of the trace tools' files include, precompiled once per build tree
// (tools/module.mk) and included first by each file of katrace-check, katrace-merge,
// katrace-stats and their common code: nlohmann::json, which json_fields.h brings to nearly all
// of them, alone took 2.3 s of a file's build to parse at -O2 -g. Each file still includes what
// it uses itself; this list only decides what is parsed ahead of time.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>
