// Builds one JSON value (a Json DOM) from SAX calls: the trace reader keeps one event or the
// footer at a time this way, and the protobuf reader its embedded JSON texts.
// An open container's members are gathered in a vector of the builder's own, kept from one
// value to the next, and the container is made at its end with room for exactly them: an
// ordered_json member's key is const, so an object that grew one member at a time copied its
// members (args and all) each time its vector grew, instead of moving them.
#ifndef KATRACE_TOOLS_COMMON_DOM_BUILDER_H_
#define KATRACE_TOOLS_COMMON_DOM_BUILDER_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "tools/common/json_fields.h"

namespace katrace::tools {

class DomBuilder {
 public:
  // Also gives back the room a large value left in the gathering vectors.
  void Reset() {
    root_ = Json();
    depth_ = 0;
    for (Level& level : levels_) {
      if (level.members.capacity() > kKeptCapacity) {
        std::vector<std::pair<std::string, Json>>().swap(level.members);
      }
      if (level.elements.capacity() > kKeptCapacity) std::vector<Json>().swap(level.elements);
    }
  }
  void StartObject() { Open(true); }
  void StartArray() { Open(false); }
  void End() {
    Level& level = levels_[--depth_];
    Json value(level.is_object ? Json::value_t::object : Json::value_t::array);
    if (level.is_object) {
      auto& members = value.get_ref<Json::object_t&>();
      members.reserve(level.members.size());
      for (auto& [key, member] : level.members) {
        members.emplace_back(std::move(key), std::move(member));
      }
      level.members.clear();
    } else {
      auto& elements = value.get_ref<Json::array_t&>();
      elements.reserve(level.elements.size());
      for (Json& element : level.elements) elements.push_back(std::move(element));
      level.elements.clear();
    }
    Place(std::move(level.key), std::move(value));
  }
  void Key(std::string& key) { key_ = std::move(key); }
  // A scalar: a number, a bool, a string moved in, or nullptr.
  template <typename T>
  void Value(T&& value) {
    Place(std::move(key_), std::forward<T>(value));
  }
  Json& root() { return root_; }

 private:
  struct Level {
    bool is_object = false;
    std::string key;  // its key in the enclosing object
    // Duplicate keys stay, in order; Field() reads the last one, as a DOM parser would.
    std::vector<std::pair<std::string, Json>> members;
    std::vector<Json> elements;
  };

  // Past this many members, a level's vector is not kept for the next value.
  static constexpr size_t kKeptCapacity = 4096;

  void Open(bool is_object) {
    if (depth_ == levels_.size()) levels_.emplace_back();
    Level& level = levels_[depth_++];
    level.is_object = is_object;
    level.key = std::move(key_);
  }

  // The value is made in place in its parent (or the root), from |value|.
  template <typename T>
  void Place(std::string&& key, T&& value) {
    if (depth_ == 0) {
      root_ = Json(std::forward<T>(value));
      return;
    }
    Level& parent = levels_[depth_ - 1];
    if (parent.is_object) {
      parent.members.emplace_back(std::move(key), std::forward<T>(value));
    } else {
      parent.elements.emplace_back(std::forward<T>(value));
    }
  }

  Json root_;
  std::vector<Level> levels_;  // the first depth_ are open, innermost last
  size_t depth_ = 0;
  std::string key_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_DOM_BUILDER_H_
