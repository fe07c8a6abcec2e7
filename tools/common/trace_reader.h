// Streams a trace to a visitor, one event at a time as a small JSON DOM, whatever its format:
// Chrome JSON (object form {"traceEvents":[...],"otherData":{...}} or a bare array) through a
// bounded SAX parser (json_stream_parser.h), or katrace's Perfetto protobuf (.pftrace) through
// pftrace_reader.h, which hands over exactly the events the JSON trace of the same spool holds.
// Either may be gzip. Memory is bounded by the largest single event (and, for protobuf, by the
// events waiting for a slice still open; see ReadOptions::max_held_bytes) whatever the file
// size. Also reports why a file could not be read: missing, truncated, malformed, or not a
// trace at all.
// Thread safety: none; one reader per file.
#ifndef KATRACE_TOOLS_COMMON_TRACE_READER_H_
#define KATRACE_TOOLS_COMMON_TRACE_READER_H_

#include <cstdint>
#include <string>

#include "tools/common/json_fields.h"

namespace katrace::tools {

enum class TraceFileFormat { kChromeJson, kPerfettoProtobuf };

struct TraceEvent {
  Json json;           // the event object
  uint64_t index = 0;  // position in traceEvents (of the JSON trace of the same spool), from 0
  // 1-based line of its opening brace; in a protobuf trace, which has no lines, the byte offset
  // of the packet it comes from.
  uint64_t line = 0;
  // Strings of this event whose bytes were not UTF-8 and now hold U+FFFD instead.
  uint64_t repaired_strings = 0;
};

class TraceVisitor {
 public:
  virtual ~TraceVisitor() = default;
  // Called once, before anything else: the positions (TraceEvent::line) of a protobuf trace are
  // byte offsets.
  virtual void OnFormat(TraceFileFormat /*format*/) {}
  // Return false to stop reading (ReadStatus::kStopped), e.g. after the header.
  virtual bool OnEvent(const TraceEvent& event) = 0;
  // A traceEvents element that is not an object (skipped).
  virtual void OnNonObjectEvent(uint64_t /*index*/, uint64_t /*line*/) {}
  // The top-level "otherData" object (the katrace footer lives there).
  virtual void OnOtherData(const Json& /*other_data*/) {}
  // A protobuf trace's problem that does not stop the read (an unknown interned id, an event on
  // a track never declared, a slice or flow that never ends, ...): |byte_offset| is where.
  virtual void OnProblem(uint64_t /*byte_offset*/, const std::string& /*message*/) {}
};

enum class ReadStatus {
  kOk,           // the whole file parsed
  kStopped,      // the visitor asked to stop
  kOpenError,    // missing or unreadable file
  kTruncated,    // input ended early (crashed writer, cut copy, truncated gzip, no footer packet)
  kBadJson,      // a syntax error before the end
  kBadProtobuf,  // a protobuf trace that does not decode (bad varint, length past its message,
                 // wrong wire type), or whose clock runs past 2^63 ns
  kNotATrace,    // valid JSON without a traceEvents array, or a spool or NVTXT file (not read here)
  kTooLarge,     // a string, number, nesting or event past the reader's limits (see ReadOptions)
  kTrailingBytes,  // the whole trace was read, but bytes that are not gzip follow its gzip stream
};

struct ReadResult {
  ReadStatus status = ReadStatus::kOk;
  std::string message;      // why, when status is an error; includes line and byte
  TraceFileFormat format = TraceFileFormat::kChromeJson;
  uint64_t events = 0;      // events delivered
  uint64_t bytes = 0;       // uncompressed bytes read
  uint64_t error_line = 0;  // in a protobuf trace, the byte offset
  bool is_gzip = false;
  bool has_other_data = false;
  uint64_t repaired_strings = 0;  // strings with bytes that were not UTF-8, whole file
  uint64_t problems = 0;          // OnProblem calls
  std::string first_problem;      // the first of them, with its byte offset
  bool ok() const { return status == ReadStatus::kOk || status == ReadStatus::kStopped; }
};

struct ReadOptions {
  // Progress lines on stderr for files at least this big (0 = never), prefixed by |tool|.
  uint64_t progress_min_bytes = 0;
  std::string tool;
  // Caps that keep memory bounded on hostile files: one event (or the otherData footer) may
  // span at most this many input bytes; tokens and nesting are capped by JsonLimits.
  // A protobuf packet may be at most the larger of the two (the footer's is the largest).
  uint64_t max_event_bytes = uint64_t{16} << 20;
  uint64_t max_other_data_bytes = uint64_t{64} << 20;
  // A protobuf trace hands its slices over in begin order, each when its end has come: what the
  // reader holds meanwhile (the events behind a slice still open, interned strings, tracks,
  // flows not yet ended) may take at most this much.
  uint64_t max_held_bytes = uint64_t{256} << 20;
};

ReadResult ReadTrace(const std::string& path, TraceVisitor* visitor,
                     const ReadOptions& options = ReadOptions());

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_TRACE_READER_H_
