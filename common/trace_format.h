// The trace file formats katrace writes, how a format is named (KATRACE_FORMAT, katrace-export
// --format) and how it follows from a file name: `.json[.gz]` is Chrome JSON, `.pftrace[.gz]`
// Perfetto protobuf, `.nvtxt[.gz]` NVTXT for Nsight Systems. One place, so the plugin, the
// export and the tools agree on names and extensions.
#ifndef KATRACE_COMMON_TRACE_FORMAT_H_
#define KATRACE_COMMON_TRACE_FORMAT_H_

#include <string>
#include <string_view>

#include "common/ends_with.h"

namespace katrace {

enum class TraceFormat { kJson, kPerfetto, kNvtxt };

inline const char* TraceFormatName(TraceFormat f) {
  switch (f) {
    case TraceFormat::kPerfetto: return "perfetto";
    case TraceFormat::kNvtxt: return "nvtxt";
    case TraceFormat::kJson: break;
  }
  return "json";
}

inline const char* TraceFormatExtension(TraceFormat f) {
  switch (f) {
    case TraceFormat::kPerfetto: return ".pftrace";
    case TraceFormat::kNvtxt: return ".nvtxt";
    case TraceFormat::kJson: break;
  }
  return ".json";
}

// "json", "perfetto" (or "pftrace", "protobuf"), "nvtxt", in any case; false for anything else.
inline bool ParseTraceFormat(std::string_view text, TraceFormat* format) {
  std::string t;
  for (char c : text) t.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  if (t == "json" || t == "chrome") {
    *format = TraceFormat::kJson;
  } else if (t == "perfetto" || t == "pftrace" || t == "protobuf" || t == "proto") {
    *format = TraceFormat::kPerfetto;
  } else if (t == "nvtxt") {
    *format = TraceFormat::kNvtxt;
  } else {
    return false;
  }
  return true;
}

// The length of |path|'s trace extension (".pftrace.gz" is 11), 0 when it has none of ours.
inline size_t TraceExtensionLength(std::string_view path) {
  std::string_view p = EndsWith(path, ".gz") ? path.substr(0, path.size() - 3) : path;
  const size_t gz = p.size() == path.size() ? 0 : 3;
  for (TraceFormat f : {TraceFormat::kJson, TraceFormat::kPerfetto, TraceFormat::kNvtxt}) {
    if (EndsWith(p, TraceFormatExtension(f))) return std::string_view(TraceFormatExtension(f)).size() + gz;
  }
  return 0;
}

// The format a file name asks for; JSON when its extension is none of ours.
inline TraceFormat TraceFormatOfPath(std::string_view path) {
  std::string_view p = EndsWith(path, ".gz") ? path.substr(0, path.size() - 3) : path;
  if (EndsWith(p, ".pftrace")) return TraceFormat::kPerfetto;
  if (EndsWith(p, ".nvtxt")) return TraceFormat::kNvtxt;
  return TraceFormat::kJson;
}

// |path| with its trace extension made |format|'s, keeping ".gz": "t.json.gz" -> "t.pftrace.gz";
// a name without one of ours gets the extension added.
inline std::string WithTraceFormat(std::string_view path, TraceFormat format) {
  const size_t ext = TraceExtensionLength(path);
  const bool gz = ext != 0 && EndsWith(path, ".gz");
  std::string out(path.substr(0, path.size() - ext));
  out += TraceFormatExtension(format);
  if (gz) out += ".gz";
  return out;
}

}  // namespace katrace

#endif  // KATRACE_COMMON_TRACE_FORMAT_H_
