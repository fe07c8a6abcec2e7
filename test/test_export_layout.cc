// TraceLayout through a recording encoder: events handed over in completion order come out on
// lanes chosen in start order; host calls nest on their thread while enqueued tasks get lanes;
// sub-slices stay on their own event's lane; GPU slices are held within the run and a GPU stop
// before its start is flagged; each rank's events are on its own pid.
#include <stdint.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plugin/export/trace_layout.h"

namespace katrace {
namespace exporting {
namespace {

struct RecordedSlice {
  std::string name, cat;
  int track;
  int64_t ts, dur;
  std::map<std::string, int64_t> args;  // numbers and booleans
  bool part = false;                     // SliceEvent::part
};

class RecordingEncoder : public TraceEncoder {
 public:
  void Begin(const TraceProcess& process) override { ranks = process.ranks; }
  void Track(const TrackInfo& t) override {
    EXPECT_EQ(track_name.count(t.track), 0u) << "track " << t.track << " announced twice";
    track_name[t.track] = std::string(t.name);
    track_pid[t.track] = t.pid;
  }
  void Slice(const SliceEvent& s) override {
    EXPECT_EQ(track_name.count(s.track), 1u) << "slice before its track";
    RecordedSlice r{std::string(s.name), std::string(s.category), s.track, s.ts, s.dur, {}, s.part};
    for (size_t i = 0; i < s.nargs; ++i) {
      const Arg& a = s.args[i];
      r.args[std::string(a.key)] = a.type == ArgType::kInt || a.type == ArgType::kTime ? a.i : static_cast<int64_t>(a.u);
    }
    slices.push_back(r);
    // A flow is recorded once both its ends were seen, from the out end to the in end.
    if (s.flow_out != 0) FlowEnd(s.flow_out, true, s.track);
    if (s.flow_in != 0) FlowEnd(s.flow_in, false, s.track);
  }
  void FlowEnd(uint64_t id, bool out, int track) {
    auto it = flow_half.find(id);
    if (it == flow_half.end()) {
      flow_half[id] = {out, track};
      return;
    }
    EXPECT_NE(it->second.first, out) << "flow " << id << " has two ends of one kind";
    flows.push_back({id, out ? track : it->second.second, out ? it->second.second : track});
    flow_half.erase(it);
  }
  void Counter(std::string_view, int64_t, const Arg*, size_t) override {}
  void Instant(std::string_view, int64_t, const Arg*, size_t) override {}
  void End(const TraceTotals&) override { ended = true; }

  std::vector<const RecordedSlice*> OfCat(const std::string& cat) const {
    std::vector<const RecordedSlice*> out;
    for (const RecordedSlice& s : slices) {
      if (s.cat == cat) out.push_back(&s);
    }
    return out;
  }
  const RecordedSlice* ById(uint64_t id) const {
    for (const RecordedSlice& s : slices) {
      auto it = s.args.find("id");
      if (it != s.args.end() && static_cast<uint64_t>(it->second) == id) return &s;
    }
    return nullptr;
  }
  // No two slices of one track partially overlap, and on every non-host track a slice encloses
  // only its own parts.
  void ExpectNoPartialOverlap() const {
    for (size_t i = 0; i < slices.size(); ++i) {
      for (size_t j = i + 1; j < slices.size(); ++j) {
        const RecordedSlice& a = slices[i];
        const RecordedSlice& b = slices[j];
        if (a.track != b.track) continue;
        int64_t ae = a.ts + a.dur, be = b.ts + b.dur;
        bool disjoint = ae <= b.ts || be <= a.ts;
        bool nested = (a.ts <= b.ts && be <= ae) || (b.ts <= a.ts && ae <= be);
        EXPECT_TRUE(disjoint || nested) << a.name << " and " << b.name << " on " << track_name.at(a.track);
      }
    }
  }

  std::vector<TraceRank> ranks;
  std::map<int, std::string> track_name;
  std::map<int, int> track_pid;
  std::map<uint64_t, std::pair<bool, int>> flow_half;  // flow id -> (out end?, track) of its first end
  std::vector<RecordedSlice> slices;
  struct FlowRec {
    uint64_t id;
    int from, to;
  };
  std::vector<FlowRec> flows;
  bool ended = false;
};

constexpr uint64_t kBase = 1000000000;  // host ns of the trace base

TraceProcess TwoRanks() {
  TraceProcess p;
  p.rank = 4;
  p.base_monotonic_ns = kBase;
  p.end_monotonic_ns = kBase + 1000000;
  p.ranks = {TraceRank{4, 4, -1, 0, "rank 4"}, TraceRank{5, 5, -1, 1, "rank 5"}};
  p.comm_rank = {0, 1};
  return p;
}

AssembledEvent Event(Kind kind, uint64_t id, uint64_t parent, uint64_t start, uint64_t stop) {
  AssembledEvent e;
  e.kind = kind;
  e.id = id;
  e.parent_id = parent;
  e.start_ns = kBase + start;
  e.stop_ns = kBase + stop;
  e.comm_index = 0;
  e.comm_hash = 0x1234;
  e.os_tid = 77;
  return e;
}

// Hands |e| to the layout placed as the export places it, its GPU clock |gpu_offset| from the host's
// (the run of TwoRanks()).
void Add(TraceLayout& layout, const AssembledEvent& e, int64_t gpu_offset = 0) {
  const GpuPlacement placement(nullptr, kBase, kBase + 1000000);
  layout.Add(e, placement.PlaceAt(e, gpu_offset));
}

TEST(TraceLayoutTest, CompletionOrderStillGivesTheFewestLanesInStartOrder) {
  RecordingEncoder enc;
  TraceLayout layout(TwoRanks(), &enc);
  // Three ProxyOps on one connection, arriving as they complete: [5,8], [0,10], [9,20].
  Add(layout, Event(Kind::kProxyOp, 2, 0, 5, 8));
  Add(layout, Event(Kind::kProxyOp, 1, 0, 0, 10));
  Add(layout, Event(Kind::kProxyOp, 3, 0, 9, 20));
  TraceTotals t;
  layout.Finish(kBase + 30, &t);
  ASSERT_TRUE(enc.ended);
  auto ops = enc.OfCat("ProxyOp");
  ASSERT_EQ(ops.size(), 3u);
  // Written in start order; [0,10] on the first lane, [5,8] on the second, [9,20] back on the
  // second (free since 8), never nested in an unrelated op.
  EXPECT_EQ(ops[0]->args.at("id"), 1);
  EXPECT_EQ(ops[1]->args.at("id"), 2);
  EXPECT_EQ(ops[2]->args.at("id"), 3);
  EXPECT_NE(ops[0]->track, ops[1]->track);
  EXPECT_EQ(ops[2]->track, ops[1]->track);
  EXPECT_EQ(enc.track_name.size(), 2u);
  EXPECT_EQ(enc.track_name.at(ops[0]->track), "proxy comm 00000000 rank 0 ch 0 recv peer 0");
  EXPECT_EQ(enc.track_name.at(ops[1]->track), "proxy comm 00000000 rank 0 ch 0 recv peer 0 lane 1");
  enc.ExpectNoPartialOverlap();
}

TEST(TraceLayoutTest, HostCallsNestOnTheThreadAndEnqueuedTasksGetLanes) {
  RecordingEncoder enc;
  TraceLayout layout(TwoRanks(), &enc);
  // GroupApi [0,100] with two P2pApi calls; each enqueues a P2p that lives past the group.
  Add(layout, Event(Kind::kP2pApi, 11, 10, 10, 20));
  Add(layout, Event(Kind::kP2pApi, 12, 10, 30, 40));
  Add(layout, Event(Kind::kGroupApi, 10, 0, 0, 100));
  Add(layout, Event(Kind::kP2p, 22, 12, 35, 300));
  Add(layout, Event(Kind::kP2p, 21, 11, 15, 400));
  TraceTotals t;
  layout.Finish(kBase + 500, &t);
  const RecordedSlice* group = enc.ById(10);
  const RecordedSlice* p1 = enc.ById(21);
  const RecordedSlice* p2 = enc.ById(22);
  ASSERT_TRUE(group && p1 && p2);
  EXPECT_EQ(enc.track_name.at(group->track), "host 77");
  EXPECT_EQ(enc.ById(11)->track, group->track);
  EXPECT_EQ(enc.ById(12)->track, group->track);
  EXPECT_EQ(enc.track_name.at(p1->track), "host 77 enqueue");
  EXPECT_EQ(enc.track_name.at(p2->track), "host 77 enqueue lane 1");
  EXPECT_EQ(layout.unnested(), 0u);
  enc.ExpectNoPartialOverlap();
}

TEST(TraceLayoutTest, ACallThatBreaksNestingGoesToTheThreadsLanesNotOverIt) {
  RecordingEncoder enc;
  TraceLayout layout(TwoRanks(), &enc);
  Add(layout, Event(Kind::kGroupApi, 1, 0, 0, 50));
  Add(layout, Event(Kind::kKernelLaunch, 2, 1, 40, 60));  // times that contradict call nesting
  TraceTotals t;
  layout.Finish(kBase + 100, &t);
  EXPECT_EQ(layout.unnested(), 1u);
  EXPECT_EQ(enc.track_name.at(enc.ById(2)->track), "host 77 unnested");
  enc.ExpectNoPartialOverlap();
}

TEST(TraceLayoutTest, ProxyStepStatesStayInsideTheirOwnStep) {
  RecordingEncoder enc;
  TraceLayout layout(TwoRanks(), &enc);
  // Two overlapping steps of one connection, each with two states.
  AssembledEvent a = Event(Kind::kProxyStep, 1, 9, 0, 30);
  a.nstates = 2;
  a.state_ns[0] = kBase + 0;
  a.state_ns[1] = kBase + 10;
  AssembledEvent b = Event(Kind::kProxyStep, 2, 9, 5, 20);
  b.nstates = 2;
  b.state_ns[0] = kBase + 5;
  b.state_ns[1] = kBase + 20;  // the last state at its stop: a zero-length tail
  Add(layout, b);
  Add(layout, a);
  Add(layout, Event(Kind::kProxyStep, 3, 9, 20, 25));
  TraceTotals t;
  layout.Finish(kBase + 100, &t);
  for (const RecordedSlice* s : enc.OfCat("ProxyStepState")) {
    const RecordedSlice* owner = enc.ById(static_cast<uint64_t>(s->args.at("proxy_step")));
    ASSERT_NE(owner, nullptr);
    EXPECT_EQ(s->track, owner->track);
    EXPECT_GE(s->ts, owner->ts);
    EXPECT_LE(s->ts + s->dur, owner->ts + owner->dur);
  }
  EXPECT_NE(enc.ById(1)->track, enc.ById(2)->track);
  // Step 3 starts where step 2's zero-length last state sits: not on that lane.
  EXPECT_NE(enc.ById(3)->track, enc.ById(2)->track);
  enc.ExpectNoPartialOverlap();
}

TEST(TraceLayoutTest, GpuStopBeforeStartIsFlaggedAndGpuSlicesStayInTheRun) {
  RecordingEncoder enc;
  TraceLayout layout(TwoRanks(), &enc);
  AssembledEvent backwards = Event(Kind::kKernelCh, 1, 0, 0, 10);
  backwards.gpu_start = 500;
  backwards.gpu_stop = 400;
  backwards.flags = kEvGpuStopSeen;
  Add(layout, backwards, static_cast<int64_t>(kBase));
  // Both ends outside the run (a clock 57 years off, or one past its end): at host times.
  AssembledEvent early = Event(Kind::kKernelCh, 2, 0, 20, 30);
  early.channel = 1;
  early.gpu_start = 600;
  early.gpu_stop = 700;
  early.flags = kEvGpuStopSeen;
  Add(layout, early, -static_cast<int64_t>(kBase) * 1000);
  AssembledEvent late = early;
  late.id = 3;
  late.channel = 2;
  Add(layout, late, INT64_MAX);
  // Only the stop outside: held at spool end + 1 s, the start where the stamp puts it.
  AssembledEvent long_running = Event(Kind::kKernelCh, 4, 0, 40, 50);
  long_running.channel = 3;
  long_running.gpu_start = 800;
  long_running.gpu_stop = 5000000000ull;
  long_running.flags = kEvGpuStopSeen;
  Add(layout, long_running, static_cast<int64_t>(kBase));
  TraceTotals t;
  layout.Finish(kBase + 100, &t);
  const RecordedSlice* b = enc.ById(1);
  EXPECT_EQ(b->args.at("gpu_stop_before_start"), 1);
  EXPECT_EQ(b->ts, 500);  // at the GPU start, never re-timed on host times
  EXPECT_EQ(b->dur, 0);
  EXPECT_EQ(b->args.count("host_timed"), 0u);
  for (uint64_t id : {2, 3}) {
    const RecordedSlice* e = enc.ById(id);
    EXPECT_EQ(e->args.at("clamped"), 1) << id;
    EXPECT_EQ(e->args.at("host_timed"), 1) << id;
    EXPECT_EQ(e->ts, 20) << id;  // its host callbacks' times
    EXPECT_EQ(e->dur, 10) << id;
  }
  const RecordedSlice* l = enc.ById(4);
  EXPECT_EQ(l->args.at("clamped"), 1);
  EXPECT_EQ(l->args.count("host_timed"), 0u);
  EXPECT_EQ(l->ts, 800);
  EXPECT_EQ(l->ts + l->dur, 1000000 + 1000000000);  // spool end + 1 s
  EXPECT_EQ(layout.outside_run(), 2u);
}

// A KernelStep whose stop precedes its transfer start (GPU stamp jitter) is drawn as the docs
// say: zero length at its GPU start, without halves, not from its start up to the transfer start
// (which could leave its collective's GPU extent).
TEST(TraceLayoutTest, AKernelStepStoppedBeforeItsTransferStartIsZeroLengthAtItsStart) {
  RecordingEncoder enc;
  TraceLayout layout(TwoRanks(), &enc);
  AssembledEvent step = Event(Kind::kKernelStep, 1, 0, 0, 10);
  step.gpu_start = 500;
  step.gpu_ready = 700;
  step.gpu_stop = 600;
  step.flags = kEvGpuStopSeen;
  Add(layout, step, static_cast<int64_t>(kBase));
  TraceTotals t;
  layout.Finish(kBase + 100, &t);
  const RecordedSlice* s = enc.ById(1);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->args.at("gpu_stop_before_start"), 1);
  EXPECT_EQ(s->ts, 500);
  EXPECT_EQ(s->dur, 0);
  EXPECT_EQ(s->args.count("host_timed"), 0u);
  EXPECT_TRUE(enc.OfCat("KernelStepWait").empty());
  EXPECT_TRUE(enc.OfCat("KernelStepTransfer").empty());
}

// A KernelStep whose stop never came (the run ended first; not abandoned) keeps its wait half,
// which its stamps bound, and has no transfer half: it was drawn with zero length at the transfer
// start, a transfer of no time that the summaries counted.
TEST(TraceLayoutTest, AKernelStepWithoutItsStopHasNoTransferHalf) {
  RecordingEncoder enc;
  TraceLayout layout(TwoRanks(), &enc);
  AssembledEvent step = Event(Kind::kKernelStep, 1, 0, 0, 10);
  step.gpu_start = 500;
  step.gpu_ready = 700;
  Add(layout, step, static_cast<int64_t>(kBase));
  TraceTotals t;
  layout.Finish(kBase + 100, &t);
  ASSERT_NE(enc.ById(1), nullptr);
  ASSERT_EQ(enc.OfCat("KernelStepWait").size(), 1u);
  EXPECT_EQ(enc.OfCat("KernelStepWait")[0]->ts, 500);
  EXPECT_EQ(enc.OfCat("KernelStepWait")[0]->dur, 200);
  EXPECT_TRUE(enc.OfCat("KernelStepTransfer").empty());
}

// The halves of a zero-length KernelStep are handed on as its parts (SliceEvent::part), right
// after it: protobuf then keeps them inside it, side by side.
TEST(TraceLayoutTest, KernelStepHalvesAreMarkedAsItsParts) {
  RecordingEncoder enc;
  TraceLayout layout(TwoRanks(), &enc);
  AssembledEvent step = Event(Kind::kKernelStep, 1, 0, 0, 10);
  step.gpu_start = step.gpu_ready = step.gpu_stop = 500;
  step.flags = kEvGpuStopSeen;
  Add(layout, step, static_cast<int64_t>(kBase));
  TraceTotals t;
  layout.Finish(kBase + 100, &t);
  ASSERT_EQ(enc.slices.size(), 3u);
  EXPECT_EQ(enc.slices[0].cat, "KernelStep");
  EXPECT_FALSE(enc.slices[0].part);
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_TRUE(enc.slices[i].part) << enc.slices[i].cat;
    EXPECT_EQ(enc.slices[i].ts, 500);
    EXPECT_EQ(enc.slices[i].dur, 0);
    EXPECT_EQ(enc.slices[i].track, enc.slices[0].track);
  }
}

TEST(TraceLayoutTest, EachRanksEventsAreOnItsOwnPid) {
  RecordingEncoder enc;
  TraceLayout layout(TwoRanks(), &enc);
  AssembledEvent r0 = Event(Kind::kKernelCh, 1, 0, 0, 10);
  AssembledEvent r1 = Event(Kind::kKernelCh, 2, 0, 0, 10);
  r1.comm_index = 1;
  AssembledEvent unknown = Event(Kind::kKernelCh, 3, 0, 0, 10);
  unknown.comm_index = -1;
  Add(layout, r0);
  Add(layout, r1);
  Add(layout, unknown);
  TraceTotals t;
  layout.Finish(kBase + 100, &t);
  EXPECT_EQ(enc.track_pid.at(enc.ById(1)->track), 4);
  EXPECT_EQ(enc.track_pid.at(enc.ById(2)->track), 5);
  EXPECT_EQ(enc.track_pid.at(enc.ById(3)->track), 4);  // unknown communicator: the first rank
  std::set<int> tracks = {enc.ById(1)->track, enc.ById(2)->track, enc.ById(3)->track};
  EXPECT_EQ(tracks.size(), 3u);
}

TEST(TraceLayoutTest, CollGpuExtentGetsItsFlowOnceBothEndsArePlaced) {
  RecordingEncoder enc;
  TraceLayout layout(TwoRanks(), &enc);
  AssembledEvent c = Event(Kind::kColl, 5, 0, 0, 50);
  c.flags = kEvHasGpuExtent;
  c.gpu_start = 100;
  c.gpu_stop = 200;
  AssembledEvent c2 = c;
  c2.id = 6;
  c2.start_ns = kBase + 10;
  c2.gpu_start = 150;  // overlaps c's extent: a lane of its own, never inside it
  c2.gpu_stop = 250;
  Add(layout, c, static_cast<int64_t>(kBase));
  Add(layout, c2, static_cast<int64_t>(kBase));
  TraceTotals t;
  layout.Finish(kBase + 300, &t);
  auto gpu = enc.OfCat("CollGpu");
  ASSERT_EQ(gpu.size(), 2u);
  EXPECT_NE(gpu[0]->track, gpu[1]->track);
  ASSERT_EQ(enc.flows.size(), 2u);
  EXPECT_EQ(enc.flows[0].to, gpu[0]->track);
  enc.ExpectNoPartialOverlap();
}

// A GPU extent the clock put before its host launch keeps its slice, loses its arrow (it would
// point into the past, which katrace-check rejects) and is counted.
TEST(TraceLayoutTest, AGpuExtentBeforeItsLaunchIsCountedNotGivenABackwardFlow) {
  RecordingEncoder enc;
  TraceLayout layout(TwoRanks(), &enc);
  AssembledEvent before = Event(Kind::kColl, 5, 0, 500, 550);
  before.flags = kEvHasGpuExtent;
  before.gpu_start = 400;  // 100 ns before the Coll's host start
  before.gpu_stop = 600;
  AssembledEvent after = before;
  after.id = 6;
  after.start_ns = kBase + 700;
  after.stop_ns = kBase + 750;
  after.gpu_start = 800;
  after.gpu_stop = 900;
  Add(layout, before, static_cast<int64_t>(kBase));
  Add(layout, after, static_cast<int64_t>(kBase));
  TraceTotals t;
  layout.Finish(kBase + 1000, &t);
  EXPECT_EQ(enc.OfCat("CollGpu").size(), 2u);
  ASSERT_EQ(enc.flows.size(), 1u);
  EXPECT_EQ(enc.flows[0].id, 6u);
  EXPECT_EQ(t.gpu_before_launch, 1u);
}

// The assembler's watermark (the oldest live start) holds slices exactly as long as an earlier
// one may still come: a call that completes after 40 K others still nests over them.
TEST(TraceLayoutTest, TheWatermarkKeepsStartOrderExactPastAnyFixedDepth) {
  RecordingEncoder enc;
  TraceLayout layout(TwoRanks(), &enc);
  const uint64_t n = 40000;
  const uint64_t group_start = kBase + 5;
  for (uint64_t i = 0; i < n; ++i) {
    Add(layout, Event(Kind::kKernelLaunch, 100 + i, 0, 10 + 100 * i, 11 + 100 * i));
    if (i % 512 == 511) layout.Advance(group_start);  // the group call is still live
  }
  EXPECT_TRUE(enc.slices.empty());  // nothing placed while an earlier start may still come
  Add(layout, Event(Kind::kGroupApi, 3, 0, 5, 100 * n + 100));
  // The watermark passed the first half of the launches (and the margin GPU slices get).
  layout.Advance(kBase + 50 * n + TraceLayout::kWatermarkMarginNs);
  EXPECT_GT(enc.slices.size(), n / 2 - 10);
  EXPECT_LT(enc.slices.size(), n / 2 + 10);
  TraceTotals t;
  layout.Finish(kBase + 200 * n, &t);
  EXPECT_EQ(layout.out_of_order(), 0u);
  EXPECT_EQ(layout.unnested(), 0u);
  EXPECT_EQ(enc.track_name.at(enc.ById(3)->track), enc.track_name.at(enc.ById(100)->track));
}

TEST(TraceLayoutTest, ASliceArrivingPastTheReorderBufferStillNeverOverlaps) {
  RecordingEncoder enc;
  TraceLayout layout(TwoRanks(), &enc);
  // A long ProxyOp and a long GroupApi call complete only after more than the buffer holds.
  const uint64_t n = TraceLayout::kMaxReorder + 100;
  for (uint64_t i = 0; i < n; ++i) {
    AssembledEvent k = Event(Kind::kKernelLaunch, 100 + i, 0, 10 + 2 * i, 11 + 2 * i);
    Add(layout, k);
  }
  Add(layout, Event(Kind::kProxyOp, 1, 0, 5, 20));
  Add(layout, Event(Kind::kProxyOp, 2, 0, 1, 4 * n));  // overlaps op 1, placed after it
  Add(layout, Event(Kind::kGroupApi, 3, 0, 0, 4 * n));  // encloses every launch, arrives last
  TraceTotals t;
  layout.Finish(kBase + 8 * n, &t);
  EXPECT_GT(layout.out_of_order(), 0u);
  EXPECT_EQ(layout.unnested(), 1u);  // the group call, not drawn over the launches
  EXPECT_EQ(enc.track_name.at(enc.ById(3)->track), "host 77 unnested");
  EXPECT_NE(enc.ById(1)->track, enc.ById(2)->track);
}

}  // namespace
}  // namespace exporting
}  // namespace katrace
