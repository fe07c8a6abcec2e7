// The two JSON objects that say what a trace is, written the same way into every format: the
// rank's identity (format, version, host, os pid, clock base, the pid of each rank; the header)
// and the footer (every count the export knows). Chrome JSON has them as process_name's
// args.katrace and otherData.katrace; the Perfetto encoder carries the same text in track
// descriptions, so the tools read both formats' metadata with one parser.
#ifndef KATRACE_PLUGIN_EXPORT_TRACE_META_JSON_H_
#define KATRACE_PLUGIN_EXPORT_TRACE_META_JSON_H_

#include "plugin/export/json_out.h"
#include "plugin/export/trace_encoder.h"

namespace katrace {
namespace exporting {

// {"format":"katrace-trace","version":1,"rank":RANK,...,"ranks":[...]}
void PutIdentityJson(JsonOut* out, const TraceProcess& process, int rank);
// {"format":...,"mask":...,"events":{...},...,"communicators":[...]}: the identity of the
// header's rank and every count of |totals|.
void PutFooterJson(JsonOut* out, const TraceProcess& process, const TraceTotals& totals);

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_TRACE_META_JSON_H_
