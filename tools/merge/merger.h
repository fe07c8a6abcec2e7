// katrace-merge's driver: probes every input's header (cheap), orders inputs by rank, then
// streams each file once (twice with a time window, to pair flows) into one output. Memory holds
// the headers, the footers and one event at a time.
#ifndef KATRACE_TOOLS_MERGE_MERGER_H_
#define KATRACE_TOOLS_MERGE_MERGER_H_

#include "tools/merge/merge_options.h"

namespace katrace::tools {

// Returns the exit status: 0 merged, 1 merged with some inputs left out or cut, 2 no output.
int RunMerge(const MergeOptions& options);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_MERGE_MERGER_H_
