// Decodes one TracePacket of a katrace Perfetto trace into plain structs: the fields katrace
// writes (common/perfetto_wire.h), each checked for its wire type, as views into the packet's
// bytes. It keeps no state and gives nothing a meaning (an interned id stays an id, a timestamp
// a raw reading of its clock): that is pftrace_reader.cc's. Fields it does not know are skipped,
// as protobuf's rules say; a repeated number is taken in both of protobuf's forms (one per
// field, or packed). What does not decode fails the packet with a message naming the byte.
#ifndef KATRACE_TOOLS_COMMON_PFTRACE_PACKET_H_
#define KATRACE_TOOLS_COMMON_PFTRACE_PACKET_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace katrace::tools {

struct PbClock {
  uint64_t id = 0;
  uint64_t timestamp = 0;
};

enum class PbTable { kCategories, kNames, kArgNames, kStringValues };

struct PbInterned {
  PbTable table = PbTable::kNames;
  uint64_t iid = 0;  // 0: none given
  std::string_view text;
};

struct PbDescriptor {
  std::optional<uint64_t> uuid, parent;
  std::optional<int32_t> order;  // sibling_order_rank
  std::optional<std::string_view> name, description, merge_key;
  bool is_process = false;
  std::optional<int32_t> pid;
  std::optional<std::string_view> process_name;
  std::vector<std::string_view> labels;
  bool is_counter = false;
  std::optional<std::string_view> share_key;  // y_axis_share_key
};

// A debug annotation's value: the last of its value fields, as protobuf takes a oneof.
enum class PbValue { kNone, kBool, kUint, kInt, kDouble, kString, kStringIid };

struct PbAnnotation {
  std::optional<uint64_t> name_iid;
  std::optional<std::string_view> name;  // inline, when the writer's table was full
  PbValue kind = PbValue::kNone;
  uint64_t number = 0;    // bool, uint, int (two's complement), double (its bits), string iid
  std::string_view text;  // an inline string value
};

struct PbEvent {
  std::optional<uint64_t> type, track, name_iid, counter_value;
  std::optional<std::string_view> name;  // inline, when the writer's table was full
  std::vector<uint64_t> category_iids;
  std::vector<std::string_view> categories;  // inline
  std::vector<PbAnnotation> annotations;
  std::vector<uint64_t> flow_ids, terminating_flow_ids;
  // Empties it for the next packet, keeping the vectors' storage (no allocation per event).
  void Clear();
};

struct PbPacket {
  std::optional<uint64_t> timestamp, clock, sequence, flags;
  std::optional<std::vector<PbClock>> snapshot;
  std::optional<uint64_t> default_clock;  // trace_packet_defaults.timestamp_clock_id
  std::vector<PbInterned> interned;
  std::optional<PbDescriptor> descriptor;
  // The track event, when has_event. Not an optional: the one PbEvent is reused from packet to
  // packet, so that its vectors keep their storage (a packet is one event, nearly always).
  bool has_event = false;
  PbEvent event;
  // Anything katrace reads (a packet of only unknown fields is a later version's).
  bool has_content() const {
    return timestamp || snapshot || default_clock || !interned.empty() || descriptor || has_event;
  }
};

// Decodes the packet |bytes|, which start at byte |offset| of the file. False, with |*error|
// naming the byte, when it does not decode. |*packet| is overwritten whole (its storage is
// reused: pass the same one for each packet).
bool DecodePacket(std::string_view bytes, uint64_t offset, PbPacket* packet, std::string* error);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_PFTRACE_PACKET_H_
