// Feeds arbitrary bytes to the export stage (plugin/export/exporter.h) as a spool file, the way
// katrace-export and the plugin's last finalize read one. Shared by the libFuzzer target and the
// replay test.
//
// The first byte chooses how the rest is used, the rest is the spool file:
//   bit 0  recompute every block's CRC before the export, so a change inside a block reaches the
//          LZ4 decoder, the delta decoder and the record decoders instead of stopping at the CRC
//          check (the blocks are walked as the reader walks them; one it cannot walk ends that)
//   bit 1  one worker thread instead of two
//   bits 2-3  the trace's format: JSON (0 and 3), Perfetto protobuf (1), NVTXT (2)
//   bit 4  a summary file asked for, so that the summary's activity tables are built too
#ifndef KATRACE_FUZZ_SPOOL_EXPORT_INPUT_H_
#define KATRACE_FUZZ_SPOOL_EXPORT_INPUT_H_

#include <cstddef>
#include <cstdint>

namespace katrace_fuzz {

void ExportSpoolBytes(const uint8_t* data, size_t size);

}  // namespace katrace_fuzz

#endif  // KATRACE_FUZZ_SPOOL_EXPORT_INPUT_H_
