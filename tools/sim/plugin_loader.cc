#include "tools/sim/plugin_loader.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "tools/sim/abi_adapters.h"

namespace katrace::sim {
namespace {

const char* SymbolName(AbiVersion version) {
  switch (version) {
    case AbiVersion::kV4:
      return "ncclProfiler_v4";
    case AbiVersion::kV5:
      return "ncclProfiler_v5";
    case AbiVersion::kV6:
      return "ncclProfiler_v6";
  }
  return "";
}

std::unique_ptr<ProfilerApi> Wrap(AbiVersion version, void* table) {
  switch (version) {
    case AbiVersion::kV4:
      return MakeV4Adapter(static_cast<const ncclProfiler_v4_t*>(table));
    case AbiVersion::kV5:
      return MakeV5Adapter(static_cast<const ncclProfiler_v5_t*>(table));
    case AbiVersion::kV6:
      return MakeV6Api(static_cast<const ncclProfiler_v6_t*>(table));
  }
  return nullptr;
}

// A table NCCL would crash on (NULL callbacks) is reported instead of being driven.
bool TableIsComplete(void* table) {
  // All versions share the shape: name, then five function pointers (research §1.5).
  struct Shape {
    const char* name;
    void* functions[5];
  };
  const Shape* shape = static_cast<const Shape*>(table);
  for (void* fn : shape->functions) {
    if (fn == nullptr) return false;
  }
  return true;
}

}  // namespace

LoadedPlugin::LoadedPlugin(void* library, std::unique_ptr<ProfilerApi> api, std::string path)
    : library_(library), api_(std::move(api)), path_(std::move(path)) {}

LoadedPlugin::~LoadedPlugin() {
  api_.reset();
  if (library_ != nullptr) dlclose(library_);
}

std::optional<AbiVersion> ParseAbiVersion(const std::string& text) {
  if (text == "v4" || text == "4") return AbiVersion::kV4;
  if (text == "v5" || text == "5") return AbiVersion::kV5;
  if (text == "v6" || text == "6") return AbiVersion::kV6;
  return std::nullopt;
}

std::unique_ptr<LoadedPlugin> LoadPlugin(const std::string& path,
                                         std::optional<AbiVersion> forced_version,
                                         std::string* error) {
  // A path with a slash is a file: say "missing" plainly instead of dlerror's longer text.
  struct stat info;
  if (path.find('/') != std::string::npos && stat(path.c_str(), &info) != 0) {
    *error = "cannot open plugin '" + path + "': " + std::strerror(errno);
    return nullptr;
  }
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* reason = dlerror();
    *error = "cannot load plugin '" + path + "': " + (reason != nullptr ? reason : "unknown error");
    return nullptr;
  }

  const AbiVersion probe_order[] = {AbiVersion::kV6, AbiVersion::kV5, AbiVersion::kV4};
  for (AbiVersion version : probe_order) {
    if (forced_version && *forced_version != version) continue;
    void* table = dlsym(library, SymbolName(version));
    if (table == nullptr) continue;
    if (!TableIsComplete(table)) {
      *error = "plugin '" + path + "' exports " + SymbolName(version) +
               " with a NULL callback; refusing to drive it";
      dlclose(library);
      return nullptr;
    }
    return std::make_unique<LoadedPlugin>(library, Wrap(version, table), path);
  }

  if (forced_version) {
    *error = "plugin '" + path + "' does not export " + SymbolName(*forced_version) +
             " (asked for by --abi)";
  } else {
    *error = "'" + path +
             "' is not an NCCL profiler plugin: it exports none of ncclProfiler_v6, "
             "ncclProfiler_v5, ncclProfiler_v4";
  }
  dlclose(library);
  return nullptr;
}

}  // namespace katrace::sim
