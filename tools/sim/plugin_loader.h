// Opens a profiler plugin the way NCCL does (dlopen RTLD_NOW|RTLD_LOCAL, newest exported table
// first: v6, v5, v4) and hands back the v6 ProfilerApi in front of it. Called once, on the main
// thread, before any rank starts.
#ifndef KATRACE_TOOLS_SIM_PLUGIN_LOADER_H_
#define KATRACE_TOOLS_SIM_PLUGIN_LOADER_H_

#include <memory>
#include <optional>
#include <string>

#include "tools/sim/profiler_api.h"

namespace katrace::sim {

// Owns the library; closing it (destructor) must come after the last Finalize, as in NCCL.
class LoadedPlugin {
 public:
  LoadedPlugin(void* library, std::unique_ptr<ProfilerApi> api, std::string path);
  ~LoadedPlugin();
  LoadedPlugin(const LoadedPlugin&) = delete;
  LoadedPlugin& operator=(const LoadedPlugin&) = delete;

  ProfilerApi& api() { return *api_; }
  const std::string& path() const { return path_; }

 private:
  void* library_;
  std::unique_ptr<ProfilerApi> api_;
  std::string path_;
};

// On failure returns nullptr and sets |error| to one line that names the path and the cause
// (file missing, not loadable, no ncclProfiler_v4/5/6 symbol, forced version not exported).
std::unique_ptr<LoadedPlugin> LoadPlugin(const std::string& path,
                                         std::optional<AbiVersion> forced_version,
                                         std::string* error);

// "v4" / "v5" / "v6" (also "4", "5", "6"); nullopt for anything else.
std::optional<AbiVersion> ParseAbiVersion(const std::string& text);

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_PLUGIN_LOADER_H_
