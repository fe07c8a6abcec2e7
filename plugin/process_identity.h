// Who this process is in a trace (host, launcher rank) and where a new session's trace goes.
#ifndef KATRACE_PLUGIN_PROCESS_IDENTITY_H_
#define KATRACE_PLUGIN_PROCESS_IDENTITY_H_

#include <string>

namespace katrace {

std::string HostName();

// The process's global rank from the launcher, if any launcher told us.
bool LauncherRank(int* rank);

// The CUDA device current on the calling thread, from the driver NCCL already loaded (libcuda is
// never loaded by katrace itself), or -1 when there is none: no GPU, or no CUDA in the process.
// NCCL initializes a communicator's profiler context on a thread whose device is the
// communicator's, so this names the GPU whose clock the communicator's stamps come from.
int CurrentCudaDevice();

// The trace path of a new session, from the expanded output template. A process that profiles
// again (its last communicator was destroyed, or the plugin was unloaded and reloaded) gets a new
// file rather than overwriting its earlier one: |*last_path| is the path the previous session in
// this library instance used, and a file whose header names this pid was ours too.
std::string SessionTracePath(const std::string& expanded, int os_pid, std::string* last_path);

}  // namespace katrace

#endif  // KATRACE_PLUGIN_PROCESS_IDENTITY_H_
