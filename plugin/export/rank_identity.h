// Who each communicator's events belong to in the trace: every rank is its own Perfetto process
// (pid), stable from run to run, never shared by two ranks of one OS process.
//
// The widest communicators of the spool (largest nranks) are its world. Each world rank of the
// process is one identity. pid = the launcher's rank when the process holds exactly one world rank
// and a launcher named one; otherwise the world rank. Any other communicator (a sub-communicator)
// belongs to the world rank on the same CUDA device, else to the one initialized on the same
// thread, else to the process's first world rank (in world-rank order, so never run-dependent).
#ifndef KATRACE_PLUGIN_EXPORT_RANK_IDENTITY_H_
#define KATRACE_PLUGIN_EXPORT_RANK_IDENTITY_H_

#include "plugin/export/spool_index.h"

namespace katrace {
namespace exporting {

// Fills index->ranks and every index->comms[i].identity. A spool without communicators gets one
// identity (the launcher's rank, else 0).
void AssignRankIdentities(SpoolIndex* index);

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_RANK_IDENTITY_H_
