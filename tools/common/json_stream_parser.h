// A streaming JSON parser that drives nlohmann's SAX interface from a GzInput with
// hard limits: a string or number longer than its cap, or nesting deeper than its cap, stops
// the parse with a message instead of growing memory. Whitespace is consumed without being
// kept (nlohmann's own lexer keeps every byte since the last token, so a file of blanks costs
// twice its size in memory). Strings with bytes that are not UTF-8 are repaired to U+FFFD and
// counted, so the tools can go on and say so.
// Thread safety: none; one parser per input.
#ifndef KATRACE_TOOLS_COMMON_JSON_STREAM_PARSER_H_
#define KATRACE_TOOLS_COMMON_JSON_STREAM_PARSER_H_

#include <cstdint>
#include <string>

#include "tools/common/gz_input.h"
#include "tools/common/json_fields.h"

namespace katrace::tools {

struct JsonLimits {
  size_t max_string_bytes = size_t{1} << 20;  // katrace's longest strings are ~100 bytes
  size_t max_number_bytes = 1024;
  int max_depth = 512;
};

enum class JsonParseStatus {
  kOk,          // one value and then only whitespace
  kStopped,     // a SAX callback returned false
  kEndOfInput,  // the input ended inside the value
  kSyntax,      // not JSON
  kLimit,       // a cap of JsonLimits was hit
};

class JsonStreamParser {
 public:
  JsonStreamParser(GzInput* input, nlohmann::json_sax<Json>* sax,
                   const JsonLimits& limits = JsonLimits())
      : in_(input), sax_(sax), limits_(limits) {}

  JsonParseStatus Parse();
  // Why, for kSyntax and kLimit; quotes at most a few bytes of the input.
  const std::string& message() const { return message_; }
  // Strings (keys included) in which ill-formed UTF-8 was replaced, so far.
  uint64_t repaired_strings() const { return repaired_strings_; }

 private:
  int Peek() { return in_->sgetc(); }
  int Get() { return in_->sbumpc(); }
  int SkipSpaceAndPeek();
  JsonParseStatus Fail(JsonParseStatus status, std::string message);
  JsonParseStatus Unexpected(int c, const char* wanted);
  JsonParseStatus ReadString();  // the opening quote is consumed; result in token_
  JsonParseStatus ReadNumber(int first);
  JsonParseStatus ReadLiteral(int first);
  JsonParseStatus ReadKey();  // the quoted key, its colon, and the SAX key() call

  GzInput* in_;
  nlohmann::json_sax<Json>* sax_;
  JsonLimits limits_;
  std::string token_;
  std::string message_;
  uint64_t repaired_strings_ = 0;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_JSON_STREAM_PARSER_H_
