// Dismantle (see json_dismantle.h).
#include "tools/common/json_dismantle.h"

namespace katrace::tools {

void Dismantle(Json* value, int depth) {
  if (depth == 0) return;
  if (value->is_object()) {
    auto& members = value->get_ref<Json::object_t&>();
    for (auto& member : members) Dismantle(&member.second, depth - 1);
    members.clear();
  } else if (value->is_array()) {
    auto& elements = value->get_ref<Json::array_t&>();
    for (Json& element : elements) Dismantle(&element, depth - 1);
    elements.clear();
  }
}

}  // namespace katrace::tools
