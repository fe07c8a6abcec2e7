// Builds one JSON value (a Json DOM) from SAX calls: the trace reader keeps one event or the
// footer at a time this way, and the protobuf reader its embedded JSON texts. Pointers on the
// stack stay valid because only the innermost open container ever grows.
#ifndef KATRACE_TOOLS_COMMON_DOM_BUILDER_H_
#define KATRACE_TOOLS_COMMON_DOM_BUILDER_H_

#include <string>
#include <utility>
#include <vector>

#include "tools/common/json_fields.h"

namespace katrace::tools {

class DomBuilder {
 public:
  void Reset() {
    root_ = Json();
    stack_.clear();
  }
  void StartObject() { stack_.push_back(Place(Json::object())); }
  void StartArray() { stack_.push_back(Place(Json::array())); }
  void End() { stack_.pop_back(); }
  void Key(std::string& key) { key_ = std::move(key); }
  void Value(Json&& value) { Place(std::move(value)); }
  Json& root() { return root_; }

 private:
  Json* Place(Json&& value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    // Appended without nlohmann's duplicate-key search (quadratic in the key count); a
    // duplicate key stays in the object and Field() reads the last one, as a DOM parser would.
    auto& members = parent.get_ref<Json::object_t&>();
    members.emplace_back(std::move(key_), std::move(value));
    return &members.back().second;
  }

  Json root_;
  std::vector<Json*> stack_;
  std::string key_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_DOM_BUILDER_H_
