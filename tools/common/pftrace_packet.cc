// DecodePacket (see pftrace_packet.h): one function per message, each a loop over its fields.
#include "tools/common/pftrace_packet.h"

#include "common/perfetto_wire.h"
#include "tools/common/proto_fields.h"

namespace katrace::tools {
namespace {

namespace pf = katrace::pftrace;

class Decoder {
 public:
  explicit Decoder(std::string* error) : error_(error) {}

  bool Packet(std::string_view bytes, uint64_t offset, PbPacket* out);

 private:
  // |f| has wire type |type|, or the decode fails naming |name| (the proto field). Inline: it
  // runs for every field; the message is built out of line.
  bool Want(const ProtoField& f, pf::WireType type, const char* name) {
    return f.type == type || WrongType(f, type, name);
  }
  bool WrongType(const ProtoField& f, pf::WireType type, const char* name);
  // The walk ended at the end of its message (not on an error).
  bool Done(const ProtoFields& fields);
  bool Repeated(const ProtoField& f, pf::WireType type, const char* name, std::vector<uint64_t>* out);
  bool Snapshot(const ProtoField& field, std::vector<PbClock>* out);
  bool Defaults(const ProtoField& field, std::optional<uint64_t>* out);
  bool Interned(const ProtoField& field, std::vector<PbInterned>* out);
  bool Descriptor(const ProtoField& field, PbDescriptor* out);
  bool Process(const ProtoField& field, PbDescriptor* out);
  bool Counter(const ProtoField& field, PbDescriptor* out);
  bool Event(const ProtoField& field, PbEvent* out);
  bool Annotation(const ProtoField& field, PbAnnotation* out);

  std::string* error_;
};

bool Decoder::WrongType(const ProtoField& f, pf::WireType type, const char* name) {
  *error_ = std::string(name) + " (field " + std::to_string(f.number) + ") at byte " +
            std::to_string(f.offset) + " has wire type " + WireTypeName(f.type) + ", not " +
            WireTypeName(type);
  return false;
}

bool Decoder::Done(const ProtoFields& fields) {
  if (fields.error().empty()) return true;
  *error_ = fields.error();
  return false;
}

bool Decoder::Repeated(const ProtoField& f, pf::WireType type, const char* name,
                       std::vector<uint64_t>* out) {
  if (f.type == type) {
    out->push_back(f.value);
    return true;
  }
  if (f.type != pf::kLengthDelimited) return Want(f, type, name);
  const uint8_t* p = reinterpret_cast<const uint8_t*>(f.bytes.data());
  const uint8_t* end = p + f.bytes.size();
  while (p < end) {
    uint64_t v = 0;
    if (type == pf::kFixed64) {
      if (end - p < 8) break;
      for (int i = 0; i < 8; ++i) v |= uint64_t{p[i]} << (8 * i);  // little-endian
      p += 8;
    } else if (!pf::GetVarint(&p, end, &v)) {
      break;
    }
    out->push_back(v);
  }
  if (p == end) return true;
  *error_ = std::string("packed ") + name + " at byte " + std::to_string(f.offset) +
            " ends inside an element";
  return false;
}

bool Decoder::Packet(std::string_view bytes, uint64_t offset, PbPacket* out) {
  ProtoFields fields(bytes, offset);
  ProtoField f;
  while (fields.Next(&f)) {
    switch (f.number) {
      case pf::packet::kTimestamp:
        if (!Want(f, pf::kVarint, "TracePacket.timestamp")) return false;
        out->timestamp = f.value;
        break;
      case pf::packet::kTimestampClockId:
        if (!Want(f, pf::kVarint, "TracePacket.timestamp_clock_id")) return false;
        out->clock = f.value;
        break;
      case pf::packet::kTrustedPacketSequenceId:
        if (!Want(f, pf::kVarint, "TracePacket.trusted_packet_sequence_id")) return false;
        out->sequence = f.value;
        break;
      case pf::packet::kSequenceFlags:
        if (!Want(f, pf::kVarint, "TracePacket.sequence_flags")) return false;
        out->flags = f.value;
        break;
      case pf::packet::kClockSnapshot:
        if (!Want(f, pf::kLengthDelimited, "TracePacket.clock_snapshot") ||
            !Snapshot(f, &out->snapshot.emplace())) {
          return false;
        }
        break;
      case pf::packet::kTracePacketDefaults:
        if (!Want(f, pf::kLengthDelimited, "TracePacket.trace_packet_defaults") ||
            !Defaults(f, &out->default_clock)) {
          return false;
        }
        break;
      case pf::packet::kInternedData:
        if (!Want(f, pf::kLengthDelimited, "TracePacket.interned_data") || !Interned(f, &out->interned)) {
          return false;
        }
        break;
      case pf::packet::kTrackDescriptor:
        if (!Want(f, pf::kLengthDelimited, "TracePacket.track_descriptor") ||
            !Descriptor(f, &out->descriptor.emplace())) {
          return false;
        }
        break;
      case pf::packet::kTrackEvent:
        // A second track_event replaces the first, as a second optional message would.
        out->has_event = true;
        out->event.Clear();
        if (!Want(f, pf::kLengthDelimited, "TracePacket.track_event") || !Event(f, &out->event)) {
          return false;
        }
        break;
      default: break;
    }
  }
  return Done(fields);
}

bool Decoder::Snapshot(const ProtoField& field, std::vector<PbClock>* out) {
  ProtoFields fields(field.bytes, field.payload_offset);
  ProtoField f;
  while (fields.Next(&f)) {
    if (f.number != pf::clock_snapshot::kClocks) continue;
    if (!Want(f, pf::kLengthDelimited, "ClockSnapshot.clocks")) return false;
    ProtoFields clock(f.bytes, f.payload_offset);
    ProtoField c;
    PbClock& entry = out->emplace_back();
    while (clock.Next(&c)) {
      if (c.number == pf::clock_snapshot::kClockId) {
        if (!Want(c, pf::kVarint, "Clock.clock_id")) return false;
        entry.id = c.value;
      } else if (c.number == pf::clock_snapshot::kTimestamp) {
        if (!Want(c, pf::kVarint, "Clock.timestamp")) return false;
        entry.timestamp = c.value;
      }
    }
    if (!Done(clock)) return false;
  }
  return Done(fields);
}

bool Decoder::Defaults(const ProtoField& field, std::optional<uint64_t>* out) {
  ProtoFields fields(field.bytes, field.payload_offset);
  ProtoField f;
  while (fields.Next(&f)) {
    if (f.number != pf::defaults::kTimestampClockId) continue;
    if (!Want(f, pf::kVarint, "TracePacketDefaults.timestamp_clock_id")) return false;
    *out = f.value;
  }
  return Done(fields);
}

bool Decoder::Interned(const ProtoField& field, std::vector<PbInterned>* out) {
  ProtoFields fields(field.bytes, field.payload_offset);
  ProtoField f;
  while (fields.Next(&f)) {
    PbTable table;
    switch (f.number) {
      case pf::interned::kEventCategories: table = PbTable::kCategories; break;
      case pf::interned::kEventNames: table = PbTable::kNames; break;
      case pf::interned::kDebugAnnotationNames: table = PbTable::kArgNames; break;
      case pf::interned::kDebugAnnotationStringValues: table = PbTable::kStringValues; break;
      default: continue;
    }
    if (!Want(f, pf::kLengthDelimited, "an InternedData entry")) return false;
    PbInterned& entry = out->emplace_back();
    entry.table = table;
    ProtoFields fields_of_entry(f.bytes, f.payload_offset);
    ProtoField e;
    while (fields_of_entry.Next(&e)) {
      if (e.number == pf::interned::kIid) {
        if (!Want(e, pf::kVarint, "an interned entry's iid")) return false;
        entry.iid = e.value;
      } else if (e.number == pf::interned::kName) {
        if (!Want(e, pf::kLengthDelimited, "an interned entry's string")) return false;
        entry.text = e.bytes;
      }
    }
    if (!Done(fields_of_entry)) return false;
  }
  return Done(fields);
}

// int32 fields hold the low 32 bits of their varint (a negative one is written in ten bytes).
int32_t Int32(uint64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

bool Decoder::Descriptor(const ProtoField& field, PbDescriptor* out) {
  ProtoFields fields(field.bytes, field.payload_offset);
  ProtoField f;
  while (fields.Next(&f)) {
    switch (f.number) {
      case pf::track::kUuid:
        if (!Want(f, pf::kVarint, "TrackDescriptor.uuid")) return false;
        out->uuid = f.value;
        break;
      case pf::track::kName:
        if (!Want(f, pf::kLengthDelimited, "TrackDescriptor.name")) return false;
        out->name = f.bytes;
        break;
      case pf::track::kParentUuid:
        if (!Want(f, pf::kVarint, "TrackDescriptor.parent_uuid")) return false;
        out->parent = f.value;
        break;
      case pf::track::kSiblingOrderRank:
        if (!Want(f, pf::kVarint, "TrackDescriptor.sibling_order_rank")) return false;
        out->order = Int32(f.value);
        break;
      case pf::track::kDescription:
        if (!Want(f, pf::kLengthDelimited, "TrackDescriptor.description")) return false;
        out->description = f.bytes;
        break;
      case pf::track::kSiblingMergeKey:
        if (!Want(f, pf::kLengthDelimited, "TrackDescriptor.sibling_merge_key")) return false;
        out->merge_key = f.bytes;
        break;
      case pf::track::kProcess:
        if (!Want(f, pf::kLengthDelimited, "TrackDescriptor.process") || !Process(f, out)) return false;
        break;
      case pf::track::kCounter:
        if (!Want(f, pf::kLengthDelimited, "TrackDescriptor.counter") || !Counter(f, out)) return false;
        break;
      default: break;
    }
  }
  return Done(fields);
}

bool Decoder::Process(const ProtoField& field, PbDescriptor* out) {
  out->is_process = true;
  ProtoFields fields(field.bytes, field.payload_offset);
  ProtoField f;
  while (fields.Next(&f)) {
    if (f.number == pf::process::kPid) {
      if (!Want(f, pf::kVarint, "ProcessDescriptor.pid")) return false;
      out->pid = Int32(f.value);
    } else if (f.number == pf::process::kProcessName) {
      if (!Want(f, pf::kLengthDelimited, "ProcessDescriptor.process_name")) return false;
      out->process_name = f.bytes;
    } else if (f.number == pf::process::kProcessLabels) {
      if (!Want(f, pf::kLengthDelimited, "ProcessDescriptor.process_labels")) return false;
      out->labels.push_back(f.bytes);
    }
  }
  return Done(fields);
}

bool Decoder::Counter(const ProtoField& field, PbDescriptor* out) {
  out->is_counter = true;
  ProtoFields fields(field.bytes, field.payload_offset);
  ProtoField f;
  while (fields.Next(&f)) {
    if (f.number != pf::counter::kYAxisShareKey) continue;
    if (!Want(f, pf::kLengthDelimited, "CounterDescriptor.y_axis_share_key")) return false;
    out->share_key = f.bytes;
  }
  return Done(fields);
}

// Fields the encoder writes inline when an interning table is full (Perfetto's numbers).
constexpr uint32_t kEventCategories = 22, kEventName = 23;
constexpr uint32_t kAnnotationName = 10, kAnnotationStringValue = 6;

bool Decoder::Event(const ProtoField& field, PbEvent* out) {
  namespace ev = pf::event;
  ProtoFields fields(field.bytes, field.payload_offset);
  ProtoField f;
  while (fields.Next(&f)) {
    switch (f.number) {
      case ev::kType:
        if (!Want(f, pf::kVarint, "TrackEvent.type")) return false;
        out->type = f.value;
        break;
      case ev::kTrackUuid:
        if (!Want(f, pf::kVarint, "TrackEvent.track_uuid")) return false;
        out->track = f.value;
        break;
      case ev::kNameIid:
        if (!Want(f, pf::kVarint, "TrackEvent.name_iid")) return false;
        out->name_iid = f.value;
        break;
      case kEventName:
        if (!Want(f, pf::kLengthDelimited, "TrackEvent.name")) return false;
        out->name = f.bytes;
        break;
      case ev::kCategoryIids:
        if (!Repeated(f, pf::kVarint, "TrackEvent.category_iids", &out->category_iids)) return false;
        break;
      case kEventCategories:
        if (!Want(f, pf::kLengthDelimited, "TrackEvent.categories")) return false;
        out->categories.push_back(f.bytes);
        break;
      case ev::kDebugAnnotations:
        if (!Want(f, pf::kLengthDelimited, "TrackEvent.debug_annotations") ||
            !Annotation(f, &out->annotations.emplace_back())) {
          return false;
        }
        break;
      case ev::kCounterValue:
        if (!Want(f, pf::kVarint, "TrackEvent.counter_value")) return false;
        out->counter_value = f.value;
        break;
      case ev::kFlowIds:
        if (!Repeated(f, pf::kFixed64, "TrackEvent.flow_ids", &out->flow_ids)) return false;
        break;
      case ev::kTerminatingFlowIds:
        if (!Repeated(f, pf::kFixed64, "TrackEvent.terminating_flow_ids", &out->terminating_flow_ids)) {
          return false;
        }
        break;
      default: break;
    }
  }
  return Done(fields);
}

bool Decoder::Annotation(const ProtoField& field, PbAnnotation* out) {
  namespace an = pf::annotation;
  ProtoFields fields(field.bytes, field.payload_offset);
  ProtoField f;
  const auto value = [&](PbValue kind, pf::WireType type, const char* name) {
    if (!Want(f, type, name)) return false;
    out->kind = kind;
    out->number = f.value;
    out->text = f.bytes;
    return true;
  };
  while (fields.Next(&f)) {
    bool ok = true;
    switch (f.number) {
      case an::kNameIid:
        ok = Want(f, pf::kVarint, "DebugAnnotation.name_iid");
        out->name_iid = f.value;
        break;
      case kAnnotationName:
        ok = Want(f, pf::kLengthDelimited, "DebugAnnotation.name");
        out->name = f.bytes;
        break;
      case an::kBoolValue: ok = value(PbValue::kBool, pf::kVarint, "DebugAnnotation.bool_value"); break;
      case an::kUintValue: ok = value(PbValue::kUint, pf::kVarint, "DebugAnnotation.uint_value"); break;
      case an::kIntValue: ok = value(PbValue::kInt, pf::kVarint, "DebugAnnotation.int_value"); break;
      case an::kDoubleValue:
        ok = value(PbValue::kDouble, pf::kFixed64, "DebugAnnotation.double_value");
        break;
      case kAnnotationStringValue:
        ok = value(PbValue::kString, pf::kLengthDelimited, "DebugAnnotation.string_value");
        break;
      case an::kStringValueIid:
        ok = value(PbValue::kStringIid, pf::kVarint, "DebugAnnotation.string_value_iid");
        break;
      default: break;  // value kinds katrace does not write
    }
    if (!ok) return false;
  }
  return Done(fields);
}

}  // namespace

void PbEvent::Clear() {
  type.reset();
  track.reset();
  name_iid.reset();
  counter_value.reset();
  name.reset();
  category_iids.clear();
  categories.clear();
  annotations.clear();
  flow_ids.clear();
  terminating_flow_ids.clear();
}

bool DecodePacket(std::string_view bytes, uint64_t offset, PbPacket* packet, std::string* error) {
  // Field by field rather than |*packet = PbPacket()|, which would free the vectors' storage.
  packet->timestamp.reset();
  packet->clock.reset();
  packet->sequence.reset();
  packet->flags.reset();
  packet->snapshot.reset();
  packet->default_clock.reset();
  packet->interned.clear();
  packet->descriptor.reset();
  packet->has_event = false;
  return Decoder(error).Packet(bytes, offset, packet);
}

}  // namespace katrace::tools
