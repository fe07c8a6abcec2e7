"""Writes variants of one katrace .pftrace, to measure what Perfetto's trace processor spends its
import time on (BENCHMARKS.md, "What the trace processor's import of a .pftrace costs").

    build/perfetto-venv/bin/python bench/pftrace_import_variants.py IN.pftrace OUTDIR

Each variant changes one thing and keeps every slice, flow and timestamp:
  absolute_clock  every timestamp absolute on the trace clock (BOOTTIME): no sequence clocks to
                  convert from
  inline_names    argument names and string values written in each annotation, not interned
  json_args       each event's arguments as one annotation holding them as JSON text
  no_args         no arguments at all: the import's cost without them

Needs the Perfetto schema's environment (scripts/perfetto_venv.sh DIR). A measuring aid, not a
converter: the variants are for timing, and the tools do not read json_args' arguments.
"""
import json
import os
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

CLOCK_BOOTTIME = 6
CLOCK_TRACE = 64            # katrace's incremental sequence clock (docs/trace-format.md)
CLOCK_TRACE_ABSOLUTE = 65
SEQ_INCREMENTAL_STATE_CLEARED = 1


def load(path):
    trace = pb.Trace()
    with open(path, 'rb') as f:
        trace.ParseFromString(f.read())
    return trace


def absolute_clock(trace):
    now = offset = 0
    for p in trace.packet:
        if p.HasField('clock_snapshot'):
            clocks = {c.clock_id: c.timestamp for c in p.clock_snapshot.clocks}
            now, offset = clocks[CLOCK_TRACE], clocks[CLOCK_BOOTTIME] - clocks[CLOCK_TRACE]
        p.ClearField('trace_packet_defaults')
        if not p.HasField('timestamp'):
            continue
        clock = p.timestamp_clock_id if p.HasField('timestamp_clock_id') else CLOCK_TRACE
        if clock == CLOCK_TRACE:
            now += p.timestamp
            ts = now
        elif clock == CLOCK_TRACE_ABSOLUTE:
            ts = p.timestamp
        else:
            sys.exit('a timestamp on clock %d: not handled here' % clock)
        p.timestamp = ts + offset
        p.ClearField('timestamp_clock_id')


def annotated_events(trace):
    """Yields (track_event, {name iid: name}, {value iid: value}) with the sequence's tables."""
    names, values = {}, {}
    for p in trace.packet:
        if p.sequence_flags & SEQ_INCREMENTAL_STATE_CLEARED:
            names.clear()
            values.clear()
        for e in p.interned_data.debug_annotation_names:
            names[e.iid] = e.name
        for e in p.interned_data.debug_annotation_string_values:
            values[e.iid] = e.str.decode()
        if p.HasField('track_event') and p.track_event.debug_annotations:
            yield p.track_event, names, values


def inline_names(trace):
    for event, names, values in annotated_events(trace):
        for a in event.debug_annotations:
            if a.HasField('name_iid'):
                a.name = names[a.name_iid]
            if a.HasField('string_value_iid'):
                a.string_value = values[a.string_value_iid]


def json_args(trace):
    for event, names, values in annotated_events(trace):
        args = {}
        for a in event.debug_annotations:
            name = names[a.name_iid] if a.HasField('name_iid') else a.name
            kind = a.WhichOneof('value')
            args[name] = values[a.string_value_iid] if kind == 'string_value_iid' else getattr(a, kind)
        event.ClearField('debug_annotations')
        one = event.debug_annotations.add()
        one.name = 'args'
        one.legacy_json_value = json.dumps(args, separators=(',', ':'))


def no_args(trace):
    for p in trace.packet:
        if p.HasField('track_event'):
            p.track_event.ClearField('debug_annotations')


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: pftrace_import_variants.py IN.pftrace OUTDIR')
    source, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    for variant in (absolute_clock, inline_names, json_args, no_args):
        trace = load(source)
        variant(trace)
        path = os.path.join(out_dir, variant.__name__ + '.pftrace')
        with open(path, 'wb') as f:
            f.write(trace.SerializeToString())
        print('%s: %d bytes' % (path, os.path.getsize(path)))


if __name__ == '__main__':
    main()
