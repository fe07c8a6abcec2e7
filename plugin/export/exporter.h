// The export stage: a spool (what the plugin captured, katrace/spool_format.h) becomes the trace
// (docs/trace-format.md) and the finalize summary, built with the whole run in view. Called by
// the plugin at its last finalize or at process exit, and by katrace-export for spools left
// behind (a killed job). The stages, one per file: spool_reader (blocks, CRC, LZ4, cut),
// spool_index (first pass), gpu_placement, stream_merge (k-way by ticks, blocks decoded ahead in
// block_pipeline), event_assembler (join and completion), trace_layout (format-neutral tracks
// and slices), export_summary, and one TraceEncoder: chrome_json_encoder, perfetto_encoder or
// nvtxt_encoder.
#ifndef KATRACE_PLUGIN_EXPORT_EXPORTER_H_
#define KATRACE_PLUGIN_EXPORT_EXPORTER_H_

#include <stddef.h>
#include <stdint.h>

#include <optional>
#include <string>

#include "common/trace_format.h"

namespace katrace {

struct ExportOptions {
  std::string output;           // trace path; "" = the trace path recorded in the spool's Process record
  bool gzip = false;            // also when output ends in ".gz"
  // The trace's format; unset: the output name's extension says (common/trace_format.h).
  std::optional<TraceFormat> format;
  // Perfetto: bytes between two clears of the sequence's incremental state (0: the encoder's
  // default; tests make it small to have many).
  uint64_t perfetto_reset_bytes = 0;
  bool summary = true;          // print the summary tables on stderr
  std::string summary_path;     // "" = "<trace>.summary.txt" when the trace is a regular file
  bool progress = true;         // progress lines on stderr, only once the export has run > 1 s
  int threads = 0;              // worker threads; 0 = min(hardware, 4)
  size_t memory_budget = 256u << 20;
  // An output that cannot be created goes to the same name in $TMPDIR (the plugin's choice: the
  // capture cannot be run again); false: the export fails instead (katrace-export, whose user
  // named the output and can run it again).
  bool fallback_to_temp_dir = true;
};

struct ExportReport {
  bool ok = false;              // trace committed whole
  std::string trace_path;       // what was written
  std::string message;          // one line: what happened (or the error), suitable for stderr
  uint64_t events = 0;          // events written
  uint64_t incomplete = 0, dropped = 0, waits = 0;
  uint64_t blocks = 0, bytes_recovered = 0;
  bool clean_end = false;       // the spool ended with an End record
  bool cut = false; uint64_t cut_offset = 0; std::string cut_reason;  // where a torn/killed spool stops
  uint64_t damaged_blocks = 0;  // blocks skipped in the middle of the spool (bad CRC, undecodable)
  uint64_t refused_blocks = 0;  // a flight dump's blocks the ring never held (larger than it, or after a crash)
  std::string summary_text;     // the same text as printed (without summary or summary_path: the count lines only)
  std::string summary_error;    // why the summary file asked for was not written ("" when it was, or none was asked)
};

// Never throws; a hostile spool (bad magic or CRC, truncated, lengths out of range, unknown
// records, garbage string ids) is skipped over or stopped at cleanly and |message| says so.
ExportReport ExportSpool(const std::string& spool_path, const ExportOptions& options);

}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_EXPORTER_H_
