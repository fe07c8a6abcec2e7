"""Decodes a katrace .pftrace with Perfetto's own generated schema (PyPI's `perfetto` package,
perfetto_trace_pb2) and checks, field by field, that it says what the JSON export of the same
spool says: every slice (process, track name, name, category, ts, dur, args), flow, instant,
counter sample, the header of each rank and the footer. An independent reader of the file: it
shares no code with katrace's encoder or its tools.

    python perfetto_schema_check.py TRACE.pftrace TRACE.json

Exit status 0 when both agree; 1 with the first differences on stdout otherwise.
"""

import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

CLOCK_TRACE, CLOCK_TRACE_ABSOLUTE, CLOCK_MONOTONIC = 64, 65, 3
PROCESS_UUID_BASE = 1 << 32
REVERSED_FLOW_BIT = 1 << 63


def ns(micros):
    return round(micros * 1000)


def read_json(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    slices, flows, instants, counters, headers, tracks = [], [], [], [], {}, {}
    pending_flow = {}
    for e in doc["traceEvents"]:
        ph = e["ph"]
        if ph == "M":
            if e["name"] == "process_name":
                headers[e["pid"]] = e["args"]["katrace"]
            elif e["name"] == "thread_name":
                tracks[(e["pid"], e["tid"])] = e["args"]["name"]
        elif ph == "X":
            slices.append((e["pid"], tracks[(e["pid"], e["tid"])], e["name"], e["cat"], ns(e["ts"]),
                           ns(e["dur"]), canonical(e["args"])))
        elif ph == "s":
            pending_flow[e["id"]] = (e["pid"], tracks[(e["pid"], e["tid"])], ns(e["ts"]))
        elif ph == "f":
            flows.append((e["id"], pending_flow.pop(e["id"]), (e["pid"], tracks[(e["pid"], e["tid"])], ns(e["ts"]))))
        elif ph == "i":
            instants.append((e["name"], e.get("cat"), e["s"], ns(e["ts"]), canonical(e.get("args", {}))))
        elif ph == "C":
            for key, value in e["args"].items():
                counters.append((e["name"], key, ns(e["ts"]), value))
    return dict(slices=slices, flows=flows, instants=instants, counters=counters, headers=headers,
                footer=doc["otherData"]["katrace"])


def canonical(args):
    # Times are µs in both; compare them in ns, as integers, like the rest.
    return tuple(sorted((k, round(v * 1000) if isinstance(v, float) else v) for k, v in args.items()))


def read_pftrace(path):
    trace = pb.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    tables = {}
    clock = 0
    tracks, pid_of_uuid, family_lanes, headers, footer = {}, {}, {}, {}, None
    open_slices = {}  # track uuid -> stack of [record, begin ns]
    slices, flows, instants, counters = [], [], [], []
    flow_begin = {}
    problems = []

    def resolve(table, iid):
        if iid not in tables.get(table, {}):
            problems.append("unknown %s iid %d" % (table, iid))
            return "?"
        return tables[table][iid]

    for index, packet in enumerate(trace.packet):
        if packet.trusted_packet_sequence_id != 1:
            problems.append("packet %d: sequence id %d" % (index, packet.trusted_packet_sequence_id))
        if packet.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            tables = {}
        if packet.HasField("clock_snapshot"):
            for c in packet.clock_snapshot.clocks:
                if c.clock_id == CLOCK_TRACE:
                    clock = c.timestamp
        if packet.HasField("interned_data"):
            d = packet.interned_data
            for name, entries in (("name", d.event_names), ("category", d.event_categories),
                                  ("arg", d.debug_annotation_names)):
                for entry in entries:
                    tables.setdefault(name, {})[entry.iid] = entry.name
            for entry in d.debug_annotation_string_values:
                tables.setdefault("string", {})[entry.iid] = entry.str.decode("utf-8")
        if packet.HasField("track_descriptor"):
            t = packet.track_descriptor
            if t.HasField("process"):
                pid_of_uuid[t.uuid] = t.process.pid
                headers[t.process.pid] = json.loads(t.description)
            elif t.uuid == 3 << 32:
                footer = json.loads(t.description)
            elif t.HasField("counter"):
                tracks[t.uuid] = (t.counter.y_axis_share_key, t.name[len(t.counter.y_axis_share_key) + 1:])
            else:
                if t.parent_uuid not in pid_of_uuid:
                    problems.append("track %d: parent %d undeclared" % (t.uuid, t.parent_uuid))
                if t.sibling_merge_behavior != pb.TrackDescriptor.SIBLING_MERGE_BEHAVIOR_BY_SIBLING_MERGE_KEY:
                    problems.append("track %d: no sibling merge by key" % t.uuid)
                lane = family_lanes.get((t.parent_uuid, t.sibling_merge_key), 0)
                family_lanes[(t.parent_uuid, t.sibling_merge_key)] = lane + 1
                name = t.name if lane == 0 else "%s lane %d" % (t.name, lane)
                tracks[t.uuid] = (pid_of_uuid.get(t.parent_uuid), name)
        if not packet.HasField("track_event"):
            continue
        if packet.HasField("timestamp_clock_id") and packet.timestamp_clock_id == CLOCK_TRACE_ABSOLUTE:
            ts = packet.timestamp
        elif packet.HasField("timestamp_clock_id") and packet.timestamp_clock_id == CLOCK_MONOTONIC:
            ts = packet.timestamp - headers[min(headers)]["base_monotonic_ns"]
        else:
            clock += packet.timestamp
            ts = clock
        e = packet.track_event
        args = []
        for a in e.debug_annotations:
            key = resolve("arg", a.name_iid) if a.HasField("name_iid") else a.name
            kind = a.WhichOneof("value")
            if kind == "string_value_iid":
                value = resolve("string", a.string_value_iid)
            elif kind == "double_value":
                value = round(a.double_value * 1000)
            else:
                value = getattr(a, kind)
            args.append((key, value))
        args = tuple(sorted(args))
        name = resolve("name", e.name_iid) if e.HasField("name_iid") else e.name
        category = resolve("category", e.category_iids[0]) if e.category_iids else (
            e.categories[0] if e.categories else None)
        if e.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            pid, track = tracks[e.track_uuid]
            record = [pid, track, name, category, ts, None, args]
            open_slices.setdefault(e.track_uuid, []).append(record)
            slices.append(record)
            for fid in e.flow_ids:
                flow_begin[fid] = (pid, track, ts)
            for fid in e.terminating_flow_ids:
                if fid not in flow_begin:
                    problems.append("flow %d terminated before it began" % fid)
                    continue
                begin = flow_begin.pop(fid)
                if fid & REVERSED_FLOW_BIT:  # begun at its GPU end: this host end is the source
                    flows.append((fid & ~REVERSED_FLOW_BIT, (pid, track, ts), begin))
                else:
                    flows.append((fid, begin, (pid, track, ts)))
        elif e.type == pb.TrackEvent.TYPE_SLICE_END:
            stack = open_slices.get(e.track_uuid)
            if not stack:
                problems.append("packet %d: END on track %d with nothing open" % (index, e.track_uuid))
                continue
            record = stack.pop()
            record[5] = ts - record[4]
        elif e.type == pb.TrackEvent.TYPE_INSTANT:
            scope = "p" if e.HasField("track_uuid") else "g"
            instants.append((name, category, scope, ts, args))
        elif e.type == pb.TrackEvent.TYPE_COUNTER:
            counter, key = tracks[e.track_uuid]
            counters.append((counter, key, ts, e.counter_value))
    for uuid, stack in open_slices.items():
        if stack:
            problems.append("track %d: %d slices never ended" % (uuid, len(stack)))
    if flow_begin:
        problems.append("%d flows never terminated" % len(flow_begin))
    slices = [tuple(s) for s in slices]
    return dict(slices=slices, flows=flows, instants=instants, counters=counters, headers=headers,
                footer=footer), problems


def main():
    got, problems = read_pftrace(sys.argv[1])
    want = read_json(sys.argv[2])
    for key in ("slices", "flows", "instants", "counters", "headers", "footer"):
        if got[key] != want[key]:
            if isinstance(want[key], list):
                missing = [x for x in want[key] if x not in got[key]][:3]
                extra = [x for x in got[key] if x not in want[key]][:3]
                problems.append("%s differ: %d in the pftrace, %d in the JSON; only in the JSON: %s; only in the "
                                "pftrace: %s" % (key, len(got[key]), len(want[key]), missing, extra))
            else:
                problems.append("%s differ: %s != %s" % (key, got[key], want[key]))
    counts = {k: len(want[k]) for k in ("slices", "flows", "instants", "counters")}
    if problems:
        print("\n".join(problems[:20]))
        return 1
    print("perfetto schema agrees with the JSON: %s" % counts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
