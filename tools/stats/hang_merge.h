// katrace-stats --hang: the hang reports of many ranks (<trace>.hang.json, docs/hang-report.md)
// merged into one picture: per rank, what it waits on ("rank R waits on peer P on channel C since
// T"), oldest first, the collective it is stuck in, and a one-line verdict naming the rank that
// stopped first. A file that is unreadable, not a hang report, or of a newer version gets one line
// on stderr and is left out; the others are still merged.
#ifndef KATRACE_TOOLS_STATS_HANG_MERGE_H_
#define KATRACE_TOOLS_STATS_HANG_MERGE_H_

#include <string>
#include <vector>

namespace katrace::tools {

// The merged text for |paths|; |*unreadable| counts the files left out (each named on stderr).
std::string RenderHangReports(const std::vector<std::string>& paths, int* unreadable);

// Writes the merge to |output| ("-": stdout). Exit status: 0 all read, 1 some left out (or none
// readable), 2 the output could not be written.
int MergeHangReports(const std::vector<std::string>& paths, const std::string& output);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_STATS_HANG_MERGE_H_
