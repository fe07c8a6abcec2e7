// ReadTrace: tells the format from the first bytes and hands a protobuf trace to
// pftrace_reader.h; for JSON, the SAX handler here tracks where in the trace structure the parser
// is, builds a DOM only for one event (or for otherData) at a time and skips everything else.
#include "tools/common/trace_reader.h"

#include <utility>

#include "katrace/spool_format.h"
#include "tools/common/dom_builder.h"
#include "tools/common/gz_input.h"
#include "tools/common/json_dismantle.h"
#include "tools/common/json_stream_parser.h"
#include "tools/common/pftrace_reader.h"
#include "tools/common/plural.h"
#include "tools/common/progress.h"

namespace katrace::tools {
namespace {

class TraceSax : public nlohmann::json_sax<Json> {
 public:
  TraceSax(GzInput* input, TraceVisitor* visitor, const ReadOptions& options)
      : input_(input), visitor_(visitor), options_(options) {}
  // The parser's count of repaired strings, read when an event completes.
  void set_repaired_counter(const JsonStreamParser* parser) { parser_ = parser; }

  bool null() override { return Scalar(nullptr); }
  bool boolean(bool value) override { return Scalar(value); }
  bool number_integer(number_integer_t value) override { return Scalar(value); }
  bool number_unsigned(number_unsigned_t value) override { return Scalar(value); }
  bool number_float(number_float_t value, const string_t& /*text*/) override {
    return Scalar(value);
  }
  bool string(string_t& value) override { return Scalar(std::move(value)); }
  bool binary(binary_t& /*value*/) override { return Scalar(nullptr); }

  bool key(string_t& key) override {
    if (!WithinLimit()) return false;
    if (capture_ == Capture::kEvent || capture_ == Capture::kOtherData) {
      builder_.Key(key);
    } else if (capture_ == Capture::kNone && depth_ == 1) {
      top_key_ = std::move(key);
    }
    return true;
  }

  bool start_object(std::size_t /*elements*/) override { return StartContainer(true); }
  bool start_array(std::size_t /*elements*/) override { return StartContainer(false); }
  bool end_object() override { return EndContainer(); }
  bool end_array() override { return EndContainer(); }

  // The parser reports its own errors; this is only here to complete the interface.
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& /*ex*/) override {
    return false;
  }

  bool stopped() const { return stopped_; }
  // Set when a capture outgrew its cap; the parse then stopped.
  const std::string& limit_error() const { return limit_error_; }
  bool saw_trace_events() const { return saw_trace_events_; }
  bool in_events() const { return in_events_; }
  bool events_closed() const { return events_closed_; }
  bool in_other_data() const { return capture_ == Capture::kOtherData; }
  bool saw_other_data() const { return saw_other_data_; }
  bool top_level_scalar() const { return top_level_scalar_; }
  uint64_t events() const { return next_index_; }
  uint64_t delivered() const { return delivered_; }

 private:
  enum class Capture { kNone, kEvent, kOtherData, kSkip };

  bool AtEventLevel() const { return in_events_ && depth_ == events_depth_; }

  uint64_t RepairedSoFar() const { return parser_ == nullptr ? 0 : parser_->repaired_strings(); }

  // An event or footer is held as a DOM while it is read, so its size is what bounds memory;
  // the caps are far above anything katrace writes (an event is a few hundred bytes).
  // It runs at every token: the message is built in a function of its own, so that this one
  // needs no frame for it.
  bool WithinLimit() {
    if (capture_ != Capture::kEvent && capture_ != Capture::kOtherData) return true;
    const uint64_t cap = capture_ == Capture::kEvent ? options_.max_event_bytes
                                                     : options_.max_other_data_bytes;
    return input_->bytes_read() - capture_start_byte_ <= cap || OverLimit(cap);
  }

  [[gnu::cold]] bool OverLimit(uint64_t cap) {
    limit_error_ = std::string(capture_ == Capture::kEvent ? "event #" + std::to_string(event_.index)
                                                           : std::string("otherData")) +
                   " is larger than " + std::to_string(cap >> 20) + " MiB (the limit)";
    return false;
  }

  // |value| is what the Json is made from, in place in its container.
  template <typename T>
  bool Scalar(T&& value) {
    if (!WithinLimit()) return false;
    if (capture_ == Capture::kEvent || capture_ == Capture::kOtherData) {
      builder_.Value(std::forward<T>(value));
    } else if (capture_ == Capture::kNone) {
      if (AtEventLevel()) {
        visitor_->OnNonObjectEvent(next_index_++, input_->CurrentLine());
      } else if (depth_ == 0) {
        top_level_scalar_ = true;
      }
    }
    return true;
  }

  bool StartContainer(bool is_object) {
    if (!WithinLimit()) return false;
    if (capture_ == Capture::kNone) {
      if (depth_ == 0) {
        if (!is_object) {
          in_events_ = true;
          saw_trace_events_ = true;
          events_depth_ = 1;
        }
        ++depth_;
        return true;
      }
      if (AtEventLevel()) {
        if (is_object) {
          capture_ = Capture::kEvent;
          event_.index = next_index_++;
          event_.line = input_->CurrentLine();
          event_.repaired_strings = RepairedSoFar();
          capture_start_byte_ = input_->bytes_read();
          builder_.Reset();
        } else {
          visitor_->OnNonObjectEvent(next_index_++, input_->CurrentLine());
          capture_ = Capture::kSkip;
        }
      } else if (depth_ == 1 && !in_events_ && top_key_ == "traceEvents" && !is_object &&
                 !saw_trace_events_) {
        in_events_ = true;
        saw_trace_events_ = true;
        events_depth_ = 2;
        ++depth_;
        return true;
      } else if (depth_ == 1 && top_key_ == "otherData" && is_object) {
        capture_ = Capture::kOtherData;
        capture_start_byte_ = input_->bytes_read();
        builder_.Reset();
      } else {
        capture_ = Capture::kSkip;
      }
      capture_depth_ = depth_;
    }
    ++depth_;
    if (capture_ != Capture::kSkip) {
      if (is_object) {
        builder_.StartObject();
      } else {
        builder_.StartArray();
      }
    }
    return true;
  }

  bool EndContainer() {
    --depth_;
    if (capture_ == Capture::kNone) {
      if (in_events_ && depth_ + 1 == events_depth_) {
        in_events_ = false;
        events_closed_ = true;
      }
      return true;
    }
    if (capture_ != Capture::kSkip) builder_.End();
    if (depth_ != capture_depth_) return true;
    const Capture finished = capture_;
    capture_ = Capture::kNone;
    if (finished == Capture::kEvent) {
      event_.json = std::move(builder_.root());
      event_.repaired_strings = RepairedSoFar() - event_.repaired_strings;
      ++delivered_;
      const bool go_on = visitor_->OnEvent(event_);
      Dismantle(&event_.json, kEventDismantleDepth);  // it is not used again
      if (!go_on) {
        stopped_ = true;
        return false;
      }
    } else if (finished == Capture::kOtherData) {
      saw_other_data_ = true;
      visitor_->OnOtherData(builder_.root());
    }
    return true;
  }

  GzInput* input_;
  TraceVisitor* visitor_;
  const ReadOptions& options_;
  const JsonStreamParser* parser_ = nullptr;
  uint64_t capture_start_byte_ = 0;
  std::string limit_error_;
  DomBuilder builder_;
  TraceEvent event_;
  Capture capture_ = Capture::kNone;
  int depth_ = 0;
  int capture_depth_ = 0;
  int events_depth_ = 0;
  std::string top_key_;
  bool in_events_ = false;
  bool events_closed_ = false;
  bool saw_trace_events_ = false;
  bool saw_other_data_ = false;
  bool top_level_scalar_ = false;
  bool stopped_ = false;
  uint64_t next_index_ = 0;
  uint64_t delivered_ = 0;
};

std::string TruncationMessage(const TraceSax& sax) {
  if (sax.in_events()) {
    return "truncated: input ends inside traceEvents after " +
           Plural(sax.delivered(), "complete event") + " (no closing ']')";
  }
  if (sax.in_other_data()) return "truncated: input ends inside otherData (no footer)";
  if (sax.events_closed()) return "truncated: input ends after traceEvents (no closing '}')";
  return "truncated: input ends before the trace begins";
}

bool StartsWith(GzInput* input, const char* bytes, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    if (input->PeekBuffered(i) != static_cast<unsigned char>(bytes[i])) return false;
  }
  return true;
}

// What a file katrace makes but its tools do not read is, and what to do with it; null for any
// other file. Told by the first bytes, which no JSON or protobuf trace begins with, so that the
// reader hears this rather than that byte 1 is bad JSON.
const char* KatraceFileNotReadHere(GzInput* input) {
  if (StartsWith(input, spool::kFileMagic, sizeof(spool::kFileMagic) - 1)) {  // any version
    return "a katrace spool (a capture not yet exported): katrace-export FILE writes its trace";
  }
  static constexpr char kDisplayName[] = "SetFileDisplayName";
  const int first = input->PeekBuffered(0);
  if (first == '#' || first == '@' || StartsWith(input, kDisplayName, sizeof(kDisplayName) - 1)) {
    return "an NVTXT file (Nsight Systems' text annotations, for its ImportNvtxt): katrace's tools "
           "read .json and .pftrace traces (katrace-export --format json or perfetto writes them "
           "from the spool)";
  }
  return nullptr;
}

}  // namespace

ReadResult ReadTrace(const std::string& path, TraceVisitor* visitor, const ReadOptions& options) {
  ReadResult result;
  GzInput input;
  std::string open_error;
  if (!input.Open(path, &open_error)) {
    result.status = ReadStatus::kOpenError;
    result.message = open_error;
    return result;
  }
  Progress progress(options.tool, path, input.file_size(), options.progress_min_bytes);
  input.set_on_refill([&progress](uint64_t done, uint64_t) { progress.Update(done); });
  // The format by content, not by name: a renamed or piped-through file still reads.
  if (const char* what = KatraceFileNotReadHere(&input)) {
    result.status = ReadStatus::kNotATrace;
    result.message = what;
    return result;
  }
  if (LooksLikePftrace(&input)) {
    visitor->OnFormat(TraceFileFormat::kPerfettoProtobuf);
    ReadPftrace(&input, visitor, options, &result);
    progress.Done();
    result.bytes = input.bytes_read();
    result.is_gzip = input.is_gzip();
    return result;
  }
  visitor->OnFormat(TraceFileFormat::kChromeJson);
  TraceSax sax(&input, visitor, options);
  JsonStreamParser parser(&input, &sax);
  sax.set_repaired_counter(&parser);
  JsonParseStatus parsed = JsonParseStatus::kSyntax;
  try {
    parsed = parser.Parse();
  } catch (const std::exception& ex) {  // a visitor's or the DOM's (std::bad_alloc)
    result.status = ReadStatus::kBadJson;
    result.message = std::string("cannot parse: ") + ex.what();
  }
  progress.Done();
  result.events = sax.delivered();
  result.bytes = input.bytes_read();
  result.is_gzip = input.is_gzip();
  result.has_other_data = sax.saw_other_data();
  result.repaired_strings = parser.repaired_strings();
  if (!result.message.empty()) return result;
  if (sax.stopped()) {
    result.status = ReadStatus::kStopped;
    return result;
  }
  const std::string at_byte = " (line " + std::to_string(input.CurrentLine()) + ", byte " +
                              std::to_string(result.bytes) + ")";
  if (!sax.limit_error().empty() || parsed == JsonParseStatus::kLimit) {
    result.status = ReadStatus::kTooLarge;
    result.error_line = input.CurrentLine();
    result.message = "cannot read: " +
                     (sax.limit_error().empty() ? parser.message() : sax.limit_error()) + at_byte;
    return result;
  }
  if (input.trailing_bytes() && parsed == JsonParseStatus::kOk) {
    result.status = ReadStatus::kTrailingBytes;
    result.message = input.error();
    return result;
  }
  if (!input.error().empty()) {
    result.status = ReadStatus::kTruncated;
    result.error_line = input.CurrentLine();
    result.message = input.error() + "; " + TruncationMessage(sax);
    return result;
  }
  if (parsed == JsonParseStatus::kEndOfInput) {
    result.error_line = input.CurrentLine();
    result.status = ReadStatus::kTruncated;
    result.message = result.bytes == 0 ? "empty file" : TruncationMessage(sax);
    return result;
  }
  if (parsed == JsonParseStatus::kSyntax) {
    result.error_line = input.CurrentLine();
    result.status = ReadStatus::kBadJson;
    result.message = "invalid JSON: " + parser.message() + at_byte;
    return result;
  }
  if (!sax.saw_trace_events()) {
    result.status = ReadStatus::kNotATrace;
    result.message = "not a Chrome trace: no traceEvents array";
  }
  return result;
}

}  // namespace katrace::tools
