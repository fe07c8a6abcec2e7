// Parses one JSON text held in memory into a Json DOM with the tools' own bounded stream parser
// (json_stream_parser.h), so that text embedded in another format (a protobuf trace's header
// and footer) is read exactly as the same text in a JSON trace: the same number types, the
// same limits, the same repair of bytes that are not UTF-8.
#ifndef KATRACE_TOOLS_COMMON_JSON_TEXT_H_
#define KATRACE_TOOLS_COMMON_JSON_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "tools/common/json_fields.h"

namespace katrace::tools {

struct JsonTextResult {
  bool ok = false;
  std::string error;              // why not, when !ok
  uint64_t repaired_strings = 0;  // strings whose bytes were not UTF-8 (now U+FFFD)
};

JsonTextResult ParseJsonText(std::string_view text, Json* out);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_JSON_TEXT_H_
