// ParseJsonText (see json_text.h): the stream parser over the bytes, its SAX calls into a DOM.
#include "tools/common/json_text.h"

#include <utility>

#include "tools/common/dom_builder.h"
#include "tools/common/gz_input.h"
#include "tools/common/json_stream_parser.h"

namespace katrace::tools {
namespace {

class DomSax : public nlohmann::json_sax<Json> {
 public:
  bool null() override { return Value(nullptr); }
  bool boolean(bool value) override { return Value(value); }
  bool number_integer(number_integer_t value) override { return Value(value); }
  bool number_unsigned(number_unsigned_t value) override { return Value(value); }
  bool number_float(number_float_t value, const string_t& /*text*/) override {
    return Value(value);
  }
  bool string(string_t& value) override { return Value(std::move(value)); }
  bool binary(binary_t& /*value*/) override { return Value(nullptr); }
  bool key(string_t& key) override {
    builder_.Key(key);
    return true;
  }
  bool start_object(std::size_t /*elements*/) override {
    builder_.StartObject();
    return true;
  }
  bool start_array(std::size_t /*elements*/) override {
    builder_.StartArray();
    return true;
  }
  bool end_object() override {
    builder_.End();
    return true;
  }
  bool end_array() override {
    builder_.End();
    return true;
  }
  // The parser reports its own errors; this is only here to complete the interface.
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& /*ex*/) override {
    return false;
  }
  Json& root() { return builder_.root(); }

 private:
  template <typename T>
  bool Value(T&& value) {
    builder_.Value(std::forward<T>(value));
    return true;
  }
  DomBuilder builder_;
};

}  // namespace

JsonTextResult ParseJsonText(std::string_view text, Json* out) {
  JsonTextResult result;
  GzInput input;
  input.OpenBytes(text);
  DomSax sax;
  JsonStreamParser parser(&input, &sax);
  const JsonParseStatus status = parser.Parse();
  result.repaired_strings = parser.repaired_strings();
  if (status == JsonParseStatus::kOk) {
    result.ok = true;
    *out = std::move(sax.root());
  } else if (status == JsonParseStatus::kEndOfInput) {
    result.error = text.empty() ? "empty" : "it ends inside a value";
  } else {
    result.error = parser.message() + " (byte " + std::to_string(input.bytes_read()) + " of it)";
  }
  return result;
}

}  // namespace katrace::tools
