// katrace-merge's protobuf writer (see pftrace_merge_writer.h).
#include "tools/merge/pftrace_merge_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "common/perfetto_wire.h"

namespace katrace::tools {

namespace pf = katrace::pftrace;

namespace {

constexpr size_t kMaxInterned = 1 << 16;  // as the export's encoder: then strings go inline
constexpr size_t kFlushBytes = 1 << 20;

// ns as the JSON merge's µs text parses: below 2^53 ns the quotient is the same double.
double MicrosOf(int64_t ns) {
  constexpr int64_t kExact = int64_t{1} << 53;
  if (ns > -kExact && ns < kExact) return static_cast<double>(ns) / 1000.0;
  return std::strtod(NsToUsText(ns).c_str(), nullptr);
}

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

// " lane N" at the end of a track name: N, else 0.
uint64_t LaneOf(const std::string& name, std::string* family) {
  const size_t at = name.rfind(" lane ");
  if (at == std::string::npos || at + 6 >= name.size()) return 0;
  uint64_t n = 0;
  for (size_t i = at + 6; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || n > (uint64_t{1} << 40)) return 0;
    n = n * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  if (n == 0 || name[at + 6] == '0') return 0;
  *family = name.substr(0, at);
  return n;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// FlowPlan

uint64_t FlowPlan::Key(int64_t pid, uint64_t tid, int64_t ts_ns) {
  return Mix(Mix(Mix(0, static_cast<uint64_t>(pid)), tid), static_cast<uint64_t>(ts_ns));
}

void FlowPlan::AddSlice(int64_t pid, uint64_t tid, int64_t ts_ns) { slices_.push_back(Key(pid, tid, ts_ns)); }

void FlowPlan::AddFlowEnd(int64_t pid, uint64_t tid, int64_t ts_ns, uint64_t id, bool start) {
  ends_.emplace_back(Key(pid, tid, ts_ns), End{id, start});
}

uint64_t FlowPlan::Seal() {
  std::sort(slices_.begin(), slices_.end());
  std::unordered_map<uint64_t, int> ends_with_slice;  // id -> 1 per end (s, f) with a slice
  for (const auto& [key, end] : ends_) {
    if (std::binary_search(slices_.begin(), slices_.end(), key)) {
      ends_with_slice[end.id] |= end.start ? 1 : 2;
    }
  }
  std::unordered_set<uint64_t> ids;
  for (const auto& [key, end] : ends_) ids.insert(end.id);
  for (const auto& [key, end] : ends_) {
    const auto it = ends_with_slice.find(end.id);
    if (it != ends_with_slice.end() && it->second == 3) {
      by_key_.emplace(key, end);
      drawn_.insert(end.id);
    }
  }
  std::vector<uint64_t>().swap(slices_);
  std::vector<std::pair<uint64_t, End>>().swap(ends_);
  return ids.size() - drawn_.size();
}

std::vector<FlowPlan::End> FlowPlan::Take(int64_t pid, uint64_t tid, int64_t ts_ns) {
  std::vector<End> out;
  if (by_key_.empty()) return out;
  const auto range = by_key_.equal_range(Key(pid, tid, ts_ns));
  for (auto it = range.first; it != range.second; ++it) out.push_back(it->second);
  by_key_.erase(range.first, range.second);
  return out;
}

void FlowPlan::Clear() {
  slices_.clear();
  ends_.clear();
  by_key_.clear();
  drawn_.clear();
}

// ---------------------------------------------------------------------------------------------
// The writer

PftraceMergeWriter::PftraceMergeWriter(OutputFile* out, int64_t merged_base_realtime_ns, int64_t boottime_ns)
    : out_(out), base_realtime_ns_(merged_base_realtime_ns) {
  // The first packet: the sequence's state, one clock snapshot and the default clock.
  packet_.clear();
  packet_.Varint(pf::packet::kTrustedPacketSequenceId, pf::kSequenceId);
  packet_.Varint(pf::packet::kFirstPacketOnSequence, 1);
  packet_.Varint(pf::packet::kSequenceFlags, pf::kSeqIncrementalStateCleared);
  descriptor_.clear();
  auto clock = [&](uint32_t id, uint64_t ts) {
    sub_.clear();
    sub_.Varint(pf::clock_snapshot::kClockId, id);
    sub_.Varint(pf::clock_snapshot::kTimestamp, ts);
    descriptor_.Message(pf::clock_snapshot::kClocks, sub_);
  };
  clock(pf::kClockTraceAbsolute, 0);
  clock(pf::kClockRealtime, static_cast<uint64_t>(base_realtime_ns_));
  if (boottime_ns > 0) clock(pf::kClockBoottime, static_cast<uint64_t>(boottime_ns));
  descriptor_.Varint(pf::clock_snapshot::kPrimaryTraceClock, pf::kClockRealtime);
  packet_.Message(pf::packet::kClockSnapshot, descriptor_);
  sub_.clear();
  sub_.Varint(pf::defaults::kTimestampClockId, pf::kClockTraceAbsolute);
  packet_.Message(pf::packet::kTracePacketDefaults, sub_);
  Packet(packet_);
}

void PftraceMergeWriter::Packet(const exporting::ProtoBytes& body) {
  outer_.clear();
  outer_.Message(pf::kTracePacket, body);
  buf_.append(reinterpret_cast<const char*>(outer_.data()), outer_.size());
  bytes_ += outer_.size();
  if (buf_.size() >= kFlushBytes) {
    out_->Write(buf_);
    buf_.clear();
  }
}

void PftraceMergeWriter::DescriptorPacket() {
  packet_.clear();
  packet_.Varint(pf::packet::kTrustedPacketSequenceId, pf::kSequenceId);
  packet_.Message(pf::packet::kTrackDescriptor, descriptor_);
  Packet(packet_);
}

void PftraceMergeWriter::EventPacket(int64_t ts_ns) {
  packet_.clear();
  if (ts_ns >= 0) {
    packet_.Varint(pf::packet::kTimestamp, static_cast<uint64_t>(ts_ns));
  } else {
    // Before the merged timeline's start (a rank's event before its own base): on REALTIME.
    packet_.Varint(pf::packet::kTimestamp, static_cast<uint64_t>(base_realtime_ns_ + ts_ns));
    packet_.Varint(pf::packet::kTimestampClockId, pf::kClockRealtime);
  }
  packet_.Varint(pf::packet::kTrustedPacketSequenceId, pf::kSequenceId);
  packet_.Varint(pf::packet::kSequenceFlags, pf::kSeqNeedsIncrementalState);
  if (!interned_.empty()) {
    packet_.Message(pf::packet::kInternedData, interned_);
    interned_.clear();
  }
  packet_.Message(pf::packet::kTrackEvent, event_);
  Packet(packet_);
}

uint64_t PftraceMergeWriter::Intern(Table table, const std::string& s) {
  auto& map = tables_[table];
  const auto found = map.find(s);
  if (found != map.end()) return found->second;
  if (map.size() >= kMaxInterned) return 0;
  const uint64_t iid = map.size() + 1;
  map.emplace(s, iid);
  static constexpr uint32_t kField[kTables] = {pf::interned::kEventNames, pf::interned::kEventCategories,
                                               pf::interned::kDebugAnnotationNames,
                                               pf::interned::kDebugAnnotationStringValues};
  entry_.clear();
  entry_.Varint(pf::interned::kIid, iid);
  entry_.String(pf::interned::kName, s);
  interned_.Message(kField[table], entry_);
  return iid;
}

void PftraceMergeWriter::BeginInput(const EventRewriter* rewriter, FlowPlan* flows) {
  rewriter_ = rewriter;
  flows_ = flows;
}

void PftraceMergeWriter::EndInput() {
  FlushPending();
  CloseEndsUpTo(INT64_MAX);
  open_.clear();
  left_out_ += flows_begun_.size();  // none: the plan pairs them
  flows_begun_.clear();
}

uint64_t PftraceMergeWriter::ProcessUuid(int64_t pid) const {
  return pf::kProcessUuidBase + static_cast<uint32_t>(pid);
}

bool PftraceMergeWriter::Event(const Json& event) {
  const std::string ph = StringField(event, "ph");
  const char phase = ph.size() == 1 ? ph[0] : '?';
  int64_t own_pid = 0;
  const Json* pid_value = Field(event, "pid");
  if (pid_value == nullptr || !AsInt64(*pid_value, &own_pid)) {
    ++left_out_;
    return false;
  }
  const int64_t pid = rewriter_->MapPid(own_pid);
  if (phase == 'M') {
    Metadata(event, StringField(event, "name"), pid);
    return true;
  }
  FlushPending();
  int64_t ts_ns = 0;
  const Json* ts = Field(event, "ts");
  if (ts == nullptr || !UsToNs(*ts, &ts_ns)) {
    ++left_out_;
    return false;
  }
  ts_ns += rewriter_->offset_ns();
  bool ok = false;
  switch (phase) {
    case 'X': {
      uint64_t tid = 0;
      const Json* tid_value = Field(event, "tid");
      ok = tid_value != nullptr && AsUint64(*tid_value, &tid);
      if (ok) {
        const uint64_t uuid = TrackUuid(pid, tid);
        ok = uuid != 0;
        if (ok) {
          int64_t dur_ns = 0;
          if (const Json* dur = Field(event, "dur")) UsToNs(*dur, &dur_ns);
          const int64_t end_ns = ts_ns + std::max<int64_t>(dur_ns, 0);
          const Json* args = Field(event, "args");
          const Json* owner_value = args != nullptr ? Field(*args, "kernel_step") : nullptr;
          uint64_t owner = 0;
          std::optional<uint64_t> owner_order;
          if (owner_value != nullptr && AsUint64(*owner_value, &owner)) {
            for (const Open& o : open_[uuid]) {
              if (o.id == owner && o.end == ts_ns) owner_order = o.order;
            }
          }
          if (owner_order) {
            CloseEndsUpTo(ts_ns, uuid, *owner_order);
          } else {
            CloseEndsUpTo(ts_ns);
          }
          // Slices this one encloses that came before it (it was placed late): ended first.
          std::vector<Open>& open = open_[uuid];
          while (!open.empty() && (open.back().ts > ts_ns || (open.back().ts == ts_ns && open.back().end < end_ns))) {
            ended_early_.insert(open.back().order);
            EndSlice(uuid, open.back().end);
            open.pop_back();
          }
          std::optional<uint64_t> id;
          uint64_t id_value = 0;
          const Json* id_field = args != nullptr ? Field(*args, "id") : nullptr;
          if (id_field != nullptr && AsUint64(*id_field, &id_value)) id = id_value;
          open.push_back(Open{ts_ns, end_ns, begun_, id});
          event_.clear();
          event_.Varint(pf::event::kType, pf::kTypeSliceBegin);
          event_.Varint(pf::event::kTrackUuid, uuid);
          NameAndCategory(event);
          Args(event);
          for (const FlowPlan::End& end : flows_->Take(own_pid, tid, ts_ns)) {
            const auto begun = flows_begun_.find(end.id);
            if (begun == flows_begun_.end()) {
              // The first of its slices begins the arrow; when that is the GPU end, the id
              // says so (the host end, which terminates it, is the source).
              const uint64_t carried = end.start ? end.id : end.id | pf::kReversedFlowBit;
              event_.Fixed64(pf::event::kFlowIds, carried);
              flows_begun_.emplace(end.id, carried);
            } else {
              event_.Fixed64(pf::event::kTerminatingFlowIds, begun->second);
              flows_begun_.erase(begun);
            }
          }
          EventPacket(ts_ns);
          ends_.push(PendingEnd{end_ns, begun_++, uuid});
        }
      }
      break;
    }
    case 'i':
    case 'I': {
      const std::string scope = StringField(event, "s", "t");
      uint64_t track = 0;
      ok = true;
      if (scope == "p") {
        ok = process_numbers_.count(pid) != 0;
        track = ProcessUuid(pid);
      } else if (scope != "g") {
        uint64_t tid = 0;
        const Json* tid_value = Field(event, "tid");
        ok = tid_value != nullptr && AsUint64(*tid_value, &tid) && (track = TrackUuid(pid, tid)) != 0;
      }
      if (ok) {
        CloseEndsUpTo(ts_ns);
        event_.clear();
        event_.Varint(pf::event::kType, pf::kTypeInstant);
        if (track != 0) event_.Varint(pf::event::kTrackUuid, track);
        NameAndCategory(event);
        Args(event);
        EventPacket(ts_ns);
      }
      break;
    }
    case 'C': {
      const Json* args = Field(event, "args");
      ok = args != nullptr && args->is_object() && !args->empty();
      if (!ok) break;
      CloseEndsUpTo(ts_ns);
      const std::string name = StringField(event, "name");
      for (const auto& [series, value] : args->items()) {
        int64_t v = 0;
        if (!AsInt64(value, &v)) {
          ok = false;
          continue;
        }
        event_.clear();
        event_.Varint(pf::event::kType, pf::kTypeCounter);
        event_.Varint(pf::event::kTrackUuid, CounterUuid(pid, name, series));
        event_.Signed(pf::event::kCounterValue, v);
        EventPacket(ts_ns);
      }
      break;
    }
    case 's':
    case 'f': {
      // Written with their slices; here only counted.
      const Json* id = Field(event, "id");
      ok = id != nullptr && flows_->Drawn(rewriter_->FlowId(*id));
      break;
    }
    default: break;
  }
  if (!ok) ++left_out_;
  return ok;
}

void PftraceMergeWriter::Metadata(const Json& event, const std::string& name, int64_t pid) {
  const Json* args = Field(event, "args");
  const auto arg = [&](const char* key) { return args != nullptr ? StringField(*args, key) : std::string(); };
  uint64_t tid = 0;
  const Json* tid_value = Field(event, "tid");
  const bool has_tid = tid_value != nullptr && AsUint64(*tid_value, &tid);
  if (name == "process_name") {
    FlushPending();
    PendingProcess p;
    p.pid = pid;
    p.name = arg("name");
    p.order = pid;  // as the JSON merge's process_sort_index: ranks read top-down
    if (const Json* header = args != nullptr ? Field(*args, "katrace") : nullptr; header != nullptr && header->is_object()) {
      p.header = rewriter_->Header(*header);
    }
    pending_process_ = std::move(p);
    return;
  }
  if (name == "process_labels" && pending_process_ && pending_process_->pid == pid) {
    pending_process_->labels = arg("labels");
    return;
  }
  if (name == "process_sort_index" && pending_process_ && pending_process_->pid == pid) return;
  if (name == "thread_name" && has_tid) {
    FlushPending();
    pending_thread_ = PendingThread{pid, tid, arg("name"), std::nullopt};
    return;
  }
  int64_t order = 0;
  if (name == "thread_sort_index" && pending_thread_ && pending_thread_->pid == pid && has_tid &&
      pending_thread_->tid == tid && args != nullptr) {
    if (const Json* v = Field(*args, "sort_index"); v != nullptr && AsInt64(*v, &order)) {
      pending_thread_->order = order;
      return;
    }
  }
  ++left_out_;
}

void PftraceMergeWriter::FlushPending() {
  if (pending_process_) {
    const PendingProcess p = std::move(*pending_process_);
    pending_process_.reset();
    WriteProcess(p);
  }
  if (pending_thread_) {
    const PendingThread t = std::move(*pending_thread_);
    pending_thread_.reset();
    WriteThread(t);
  }
}

void PftraceMergeWriter::WriteProcess(const PendingProcess& p) {
  if (process_numbers_.count(p.pid) != 0) {
    ++left_out_;  // a second process_name for one merged pid
    return;
  }
  process_numbers_.emplace(p.pid, process_numbers_.size());
  descriptor_.clear();
  descriptor_.Varint(pf::track::kUuid, ProcessUuid(p.pid));
  sub_.clear();
  sub_.Signed(pf::process::kPid, p.pid);
  sub_.String(pf::process::kProcessName, p.name);
  if (p.labels) sub_.String(pf::process::kProcessLabels, *p.labels);
  descriptor_.Message(pf::track::kProcess, sub_);
  descriptor_.Varint(pf::track::kChildOrdering, pf::kChildOrderingExplicit);
  descriptor_.Signed(pf::track::kSiblingOrderRank, p.order);
  if (p.header) {
    descriptor_.String(pf::track::kDescription, p.header->dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  DescriptorPacket();
}

// A JSON track: a child of its process, named by its family; "<family> lane N" is the family's
// N-th track after the first when N tracks came before it, as a reader counts them back.
void PftraceMergeWriter::WriteThread(const PendingThread& t) {
  if (t.tid > pf::kTidMask || tracks_.count({t.pid, t.tid}) != 0) {
    ++left_out_;
    return;
  }
  if (process_numbers_.count(t.pid) == 0) {
    PendingProcess p;
    p.pid = t.pid;
    p.order = t.pid;
    WriteProcess(p);
  }
  const uint64_t uuid = pf::kMergedTrackUuidBase + (process_numbers_[t.pid] << 32) + t.tid;
  tracks_.emplace(std::make_pair(t.pid, t.tid), uuid);
  std::string family;
  const uint64_t lane = LaneOf(t.name, &family);
  std::string key;
  auto it = lane != 0 ? families_.find({t.pid, family}) : families_.end();
  if (it != families_.end() && it->second.first == lane) {
    ++it->second.first;
    key = it->second.second;
  } else {
    family = t.name;
    key = "lanes of " + std::to_string(uuid);
    families_[{t.pid, family}] = {1, key};
  }
  descriptor_.clear();
  descriptor_.Varint(pf::track::kUuid, uuid);
  descriptor_.Varint(pf::track::kParentUuid, ProcessUuid(t.pid));
  descriptor_.String(pf::track::kName, family);
  if (t.order) descriptor_.Signed(pf::track::kSiblingOrderRank, *t.order);
  descriptor_.Varint(pf::track::kSiblingMergeBehavior, pf::kSiblingMergeByKey);
  descriptor_.String(pf::track::kSiblingMergeKey, key);
  DescriptorPacket();
}

uint64_t PftraceMergeWriter::TrackUuid(int64_t pid, uint64_t tid) {
  auto it = tracks_.find({pid, tid});
  if (it != tracks_.end()) return it->second;
  if (tid > pf::kTidMask) return 0;
  WriteThread(PendingThread{pid, tid, "tid " + std::to_string(tid), std::nullopt});
  it = tracks_.find({pid, tid});
  return it != tracks_.end() ? it->second : 0;
}

uint64_t PftraceMergeWriter::CounterUuid(int64_t pid, const std::string& name, const std::string& series) {
  const auto key = std::make_tuple(pid, name, series);
  const auto found = counters_.find(key);
  if (found != counters_.end()) return found->second;
  if (process_numbers_.count(pid) == 0) {
    PendingProcess p;
    p.pid = pid;
    p.order = pid;
    WriteProcess(p);
  }
  const uint64_t uuid = pf::kCounterUuidBase + counters_.size();
  counters_.emplace(key, uuid);
  descriptor_.clear();
  descriptor_.Varint(pf::track::kUuid, uuid);
  descriptor_.Varint(pf::track::kParentUuid, ProcessUuid(pid));
  descriptor_.String(pf::track::kName, name + " " + series);
  sub_.clear();
  sub_.String(pf::counter::kYAxisShareKey, name);
  descriptor_.Message(pf::track::kCounter, sub_);
  DescriptorPacket();
  return uuid;
}

void PftraceMergeWriter::NameAndCategory(const Json& event) {
  if (const Json* name = Field(event, "name"); name != nullptr && name->is_string()) {
    const std::string& text = name->get_ref<const std::string&>();
    if (const uint64_t iid = Intern(kEventNames, text)) {
      event_.Varint(pf::event::kNameIid, iid);
    } else {
      event_.String(pf::event::kName, text);
    }
  }
  if (const Json* cat = Field(event, "cat"); cat != nullptr && cat->is_string()) {
    const std::string& text = cat->get_ref<const std::string&>();
    if (const uint64_t iid = Intern(kCategories, text)) {
      event_.Varint(pf::event::kCategoryIids, iid);
    } else {
      event_.String(pf::event::kCategories, text);
    }
  }
}

// Every argument as a typed debug annotation, typed as the JSON reader types it back: unsigned
// and negative integers, bools, doubles (times that move with ts moved), strings interned.
void PftraceMergeWriter::Args(const Json& event) {
  namespace an = pf::annotation;
  const Json* args = Field(event, "args");
  if (args == nullptr || !args->is_object()) return;
  const std::string cat = StringField(event, "cat");
  for (const auto& [key, value] : args->items()) {
    annotation_.clear();
    if (const uint64_t iid = Intern(kArgNames, key)) {
      annotation_.Varint(an::kNameIid, iid);
    } else {
      annotation_.String(an::kName, key);
    }
    int64_t ns = 0;
    // A time first: one written as a whole number of µs moves with ts as the JSON merge moves
    // it (and reads back as the JSON merge's "<us>.<3 digits>" does).
    if (value.is_number() && EventRewriter::ShiftsArg(cat, key) && UsToNs(value, &ns) &&
        !__builtin_add_overflow(ns, rewriter_->offset_ns(), &ns)) {
      annotation_.Double(an::kDoubleValue, MicrosOf(ns));
    } else if (value.is_boolean()) {
      annotation_.Varint(an::kBoolValue, value.get<bool>() ? 1 : 0);
    } else if (value.is_number_unsigned()) {
      annotation_.Varint(an::kUintValue, value.get<uint64_t>());
    } else if (value.is_number_integer()) {
      annotation_.Signed(an::kIntValue, value.get<int64_t>());
    } else if (value.is_number_float()) {
      annotation_.Double(an::kDoubleValue, value.get<double>());
    } else if (value.is_null()) {
      annotation_.Double(an::kDoubleValue, std::nan(""));  // read back as null, as JSON has it
    } else {
      // A string; an object or array (katrace's slices have none) as its JSON text.
      const std::string text = value.is_string() ? value.get<std::string>()
                                                 : value.dump(-1, ' ', false, Json::error_handler_t::replace);
      if (const uint64_t iid = Intern(kStringValues, text)) {
        annotation_.Varint(an::kStringValueIid, iid);
      } else {
        annotation_.String(an::kStringValue, text);
      }
    }
    event_.Message(pf::event::kDebugAnnotations, annotation_);
  }
}

void PftraceMergeWriter::CloseEndsUpTo(int64_t ts, uint64_t keep_track, uint64_t keep_order) {
  std::vector<PendingEnd> kept;
  while (!ends_.empty() && ends_.top().ts <= ts) {
    const PendingEnd end = ends_.top();
    ends_.pop();
    if (ended_early_.erase(end.order) != 0) continue;
    if (keep_track != 0 && end.track == keep_track && end.ts == ts && end.order <= keep_order) {
      kept.push_back(end);
      continue;
    }
    std::vector<Open>& open = open_[end.track];
    for (size_t i = open.size(); i-- > 0;) {
      if (open[i].order == end.order) {
        open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
    EndSlice(end.track, end.ts);
  }
  for (const PendingEnd& end : kept) ends_.push(end);
}

// TrackEvent { type: SLICE_END, track_uuid } at |ts|; event_ is free again after.
void PftraceMergeWriter::EndSlice(uint64_t track, int64_t ts) {
  event_.clear();
  event_.Varint(pf::event::kType, pf::kTypeSliceEnd);
  event_.Varint(pf::event::kTrackUuid, track);
  EventPacket(ts);
}

void PftraceMergeWriter::End(const Json& katrace) {
  FlushPending();
  CloseEndsUpTo(INT64_MAX);
  descriptor_.clear();
  descriptor_.Varint(pf::track::kUuid, pf::kFooterUuid);
  if (!process_numbers_.empty()) {
    // Under the first process, as one rank's footer (a track without events: not drawn).
    int64_t first = process_numbers_.begin()->first;
    for (const auto& [pid, k] : process_numbers_) {
      if (k == 0) first = pid;
    }
    descriptor_.Varint(pf::track::kParentUuid, ProcessUuid(first));
  }
  descriptor_.String(pf::track::kName, "katrace footer");
  descriptor_.String(pf::track::kDescription, katrace.dump(-1, ' ', false, Json::error_handler_t::replace));
  DescriptorPacket();
  out_->Write(buf_);
  buf_.clear();
}

}  // namespace katrace::tools
