// Streams a Chrome-JSON trace (object form {"traceEvents":[...],"otherData":{...}} or a bare
// array) through a bounded SAX parser (json_stream_parser.h) and hands each event to a visitor as a small DOM, one at a
// time, so memory is bounded by the largest single event whatever the file size. Also reports
// why a file could not be read: missing, truncated, invalid JSON, or not a trace at all.
// Thread safety: none; one reader per file.
#ifndef KATRACE_TOOLS_COMMON_TRACE_READER_H_
#define KATRACE_TOOLS_COMMON_TRACE_READER_H_

#include <cstdint>
#include <string>

#include "tools/common/json_fields.h"

namespace katrace::tools {

struct TraceEvent {
  Json json;           // the event object
  uint64_t index = 0;  // position in traceEvents, from 0
  uint64_t line = 0;   // 1-based line of its opening brace
  // Strings of this event whose bytes were not UTF-8 and now hold U+FFFD instead.
  uint64_t repaired_strings = 0;
};

class TraceVisitor {
 public:
  virtual ~TraceVisitor() = default;
  // Return false to stop reading (ReadStatus::kStopped), e.g. after the header.
  virtual bool OnEvent(const TraceEvent& event) = 0;
  // A traceEvents element that is not an object (skipped).
  virtual void OnNonObjectEvent(uint64_t /*index*/, uint64_t /*line*/) {}
  // The top-level "otherData" object (the katrace footer lives there).
  virtual void OnOtherData(const Json& /*other_data*/) {}
};

enum class ReadStatus {
  kOk,         // the whole file parsed
  kStopped,    // the visitor asked to stop
  kOpenError,  // missing or unreadable file
  kTruncated,  // input ended early (crashed writer, cut copy, truncated gzip)
  kBadJson,    // a syntax error before the end
  kNotATrace,  // valid JSON without a traceEvents array
  kTooLarge,   // a string, number, nesting or event past the reader's limits (see ReadOptions)
};

struct ReadResult {
  ReadStatus status = ReadStatus::kOk;
  std::string message;     // why, when status is an error; includes line and byte
  uint64_t events = 0;     // events delivered
  uint64_t bytes = 0;      // uncompressed bytes read
  uint64_t error_line = 0;
  bool is_gzip = false;
  bool has_other_data = false;
  uint64_t repaired_strings = 0;  // strings with bytes that were not UTF-8, whole file
  bool ok() const { return status == ReadStatus::kOk || status == ReadStatus::kStopped; }
};

struct ReadOptions {
  // Progress lines on stderr for files at least this big (0 = never), prefixed by |tool|.
  uint64_t progress_min_bytes = 0;
  std::string tool;
  // Caps that keep memory bounded on hostile files: one event (or the otherData footer) may
  // span at most this many input bytes; tokens and nesting are capped by JsonLimits.
  uint64_t max_event_bytes = uint64_t{16} << 20;
  uint64_t max_other_data_bytes = uint64_t{64} << 20;
};

ReadResult ReadTrace(const std::string& path, TraceVisitor* visitor,
                     const ReadOptions& options = ReadOptions());

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_TRACE_READER_H_
