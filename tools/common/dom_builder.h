// Builds one JSON value (a Json DOM) from SAX calls: the trace reader keeps one event or the
// footer at a time this way, and the protobuf reader its embedded JSON texts.
// An open container is filled in a vector of its level's, which its Json then takes over whole
// (a swap, not a move of each member): an ordered_json member's key is const, so copying is all
// that the vector of an object can do with its members when it grows, args and all. A level
// therefore starts with room for the most members it has seen, and grows by hand when that is
// not enough, moving each value.
#ifndef KATRACE_TOOLS_COMMON_DOM_BUILDER_H_
#define KATRACE_TOOLS_COMMON_DOM_BUILDER_H_

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "tools/common/json_fields.h"

namespace katrace::tools {

class DomBuilder {
 public:
  // Also drops what a value left unfinished (a parse stopped inside it) left in its levels.
  void Reset() {
    root_ = Json();
    for (; depth_ > 0; --depth_) {
      levels_[depth_ - 1].members.clear();
      levels_[depth_ - 1].elements.clear();
    }
  }
  void StartObject() { Open(true); }
  void StartArray() { Open(false); }
  void End() {
    Level& level = levels_[--depth_];
    Json value(level.is_object ? Json::value_t::object : Json::value_t::array);
    if (level.is_object) {
      level.room = std::max(level.room, std::min(level.members.size(), kMaxRoom));
      value.get_ref<Json::object_t&>().swap(level.members);
    } else {
      value.get_ref<Json::array_t&>().swap(level.elements);
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
    Json::object_t members;
    Json::array_t elements;
    size_t room = 0;  // the most members an object at this level has had, up to kMaxRoom
  };

  // A level's starting room is no larger than this (a larger object grows by hand).
  static constexpr size_t kMaxRoom = 64;

  void Open(bool is_object) {
    if (depth_ == levels_.size()) levels_.emplace_back();
    Level& level = levels_[depth_++];
    level.is_object = is_object;
    level.key = std::move(key_);
    if (is_object) level.members.reserve(level.room);
  }

  // Copies each key (short, and mostly in the string itself) but moves each value.
  static void Grow(Json::object_t* members) {
    Json::object_t bigger;
    bigger.reserve(std::max<size_t>(8, 2 * members->size()));
    for (auto& [key, value] : *members) bigger.emplace_back(key, std::move(value));
    members->swap(bigger);
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
      if (parent.members.size() == parent.members.capacity()) Grow(&parent.members);
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
