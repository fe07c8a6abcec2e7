// Framing of one spool block (spool_format.h): the header, the payload (optionally delta-coded,
// katrace/record_delta.h, then LZ4-compressed) and the CRC. Shared by the spool file, which
// writes blocks as they come, and the flight recorder, which keeps framed blocks in memory and
// numbers them only when it dumps them.
#ifndef KATRACE_PLUGIN_CAPTURE_BLOCK_FRAME_H_
#define KATRACE_PLUGIN_CAPTURE_BLOCK_FRAME_H_

#include <stdint.h>

#include <vector>

#include "common/crc32.h"
#include "katrace/spool_format.h"

namespace katrace {

// Frames |raw| (|raw_bytes| of whole records) into |*frame| (header, then payload), numbered
// |sequence|; |*coded| holds the delta-coded records on the way to LZ4. Returns the CRC of the
// payload alone, which Renumber needs.
uint32_t FrameBlock(uint32_t stream, uint32_t os_tid, uint64_t sequence, const uint8_t* raw, uint32_t raw_bytes,
                    bool compress, std::vector<uint8_t>* frame, std::vector<uint8_t>* coded);

// The header of an uncompressed block whose payload is |raw| itself, so that the caller can write
// the payload from where it lies, without a copy. |*payload_crc| is set as FrameBlock returns it.
// Async-signal-safe (pure computation).
spool::BlockHeader RawBlockHeader(uint32_t stream, uint32_t os_tid, uint64_t sequence, const uint8_t* raw,
                                  uint32_t raw_bytes, uint32_t* payload_crc);

// Gives |*header| a new sequence number and the CRC that goes with it, from the CRC of its
// payload: no pass over the payload. Async-signal-safe (pure computation).
void Renumber(spool::BlockHeader* header, uint64_t sequence, uint32_t payload_crc);

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CAPTURE_BLOCK_FRAME_H_
