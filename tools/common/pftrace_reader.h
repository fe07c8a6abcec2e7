// Reads katrace's Perfetto protobuf traces (.pftrace; docs/trace-format.md "Perfetto protobuf")
// and hands a TraceVisitor exactly the events the Chrome JSON trace of the same spool holds, in
// its order and with its field order and number types: the process and track metadata from the
// track descriptors, "X" slices from BEGIN/END pairs, flow "s"/"f" pairs from flow ids, "C"
// counters from the samples of one time, the instants, and the footer (otherData.katrace) from
// the footer track's description. So every tool reads both formats through ReadTrace with no
// code of its own for either.
//
// The decoder is written here from the wire format (proto_fields.h) and katrace's field numbers
// (common/perfetto_wire.h); unknown fields are skipped, as protobuf's rules say, so later
// additions to the format do not break these tools. What does not decode (a bad varint, a
// length past its message, a wrong wire type, the file cut) stops the read with a message that
// names the byte; what decodes but makes no sense (an unknown interned id, an event on a track
// never declared, a slice or a flow that never ends) goes to TraceVisitor::OnProblem and the
// read goes on.
#ifndef KATRACE_TOOLS_COMMON_PFTRACE_READER_H_
#define KATRACE_TOOLS_COMMON_PFTRACE_READER_H_

#include "tools/common/gz_input.h"
#include "tools/common/trace_reader.h"

namespace katrace::tools {

// True when |input|'s first bytes (looked at, not consumed) are a protobuf Trace's: the tag of
// its field 1 (0x0a), then a byte that cannot follow a JSON text's leading newline.
bool LooksLikePftrace(GzInput* input);

// Reads the whole protobuf trace from |input| into |result| (all but the fields ReadTrace
// fills from the input itself: bytes, is_gzip).
void ReadPftrace(GzInput* input, TraceVisitor* visitor, const ReadOptions& options,
                 ReadResult* result);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_PFTRACE_READER_H_
