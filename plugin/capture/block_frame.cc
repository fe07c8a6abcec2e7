#include "plugin/capture/block_frame.h"

#include <string.h>

#include <lz4.h>
#include <zlib.h>

#include "katrace/record_delta.h"

namespace katrace {

void Renumber(spool::BlockHeader* header, uint64_t sequence, uint32_t payload_crc) {
  header->sequence = sequence;
  header->crc32 = 0;
  uint32_t head_crc = Crc32(0, reinterpret_cast<const uint8_t*>(header), sizeof(*header));
  header->crc32 = static_cast<uint32_t>(crc32_combine(head_crc, payload_crc, static_cast<z_off_t>(header->stored_bytes)));
}

spool::BlockHeader RawBlockHeader(uint32_t stream, uint32_t os_tid, uint64_t sequence, const uint8_t* raw,
                                  uint32_t raw_bytes, uint32_t* payload_crc) {
  spool::BlockHeader h{};
  h.magic = spool::kBlockMagic;
  h.raw_bytes = raw_bytes;
  h.stored_bytes = raw_bytes;
  h.stream = stream;
  h.os_tid = os_tid;
  *payload_crc = Crc32(0, raw, raw_bytes);
  Renumber(&h, sequence, *payload_crc);
  return h;
}

uint32_t FrameBlock(uint32_t stream, uint32_t os_tid, uint64_t sequence, const uint8_t* raw, uint32_t raw_bytes,
                    bool compress, std::vector<uint8_t>* frame, std::vector<uint8_t>* coded) {
  size_t bound = compress ? static_cast<size_t>(LZ4_compressBound(static_cast<int>(raw_bytes))) : raw_bytes;
  frame->resize(sizeof(spool::BlockHeader) + (bound > raw_bytes ? bound : raw_bytes));
  uint8_t* payload = frame->data() + sizeof(spool::BlockHeader);
  spool::BlockHeader h{};
  h.magic = spool::kBlockMagic;
  h.raw_bytes = raw_bytes;
  h.stream = stream;
  h.os_tid = os_tid;
  int packed = 0;
  if (compress) {
    // Delta-coded first: LZ4 packs the differences about a third smaller than the values, and
    // faster. |raw| itself stays as it is (the flight ring keeps records out of it).
    coded->resize(raw_bytes);
    spool::EncodeRecordDeltas(raw, coded->data(), raw_bytes);
    packed = LZ4_compress_default(reinterpret_cast<const char*>(coded->data()), reinterpret_cast<char*>(payload),
                                  static_cast<int>(raw_bytes), static_cast<int>(bound));
  }
  // Compression that does not pay is skipped for this block.
  if (packed > 0 && static_cast<uint32_t>(packed) < raw_bytes) {
    h.flags = spool::kBlockLz4 | spool::kBlockDelta;
    h.stored_bytes = static_cast<uint32_t>(packed);
  } else {
    memcpy(payload, raw, raw_bytes);
    h.stored_bytes = raw_bytes;
  }
  uint32_t payload_crc = Crc32(0, payload, h.stored_bytes);
  Renumber(&h, sequence, payload_crc);
  memcpy(frame->data(), &h, sizeof(h));
  frame->resize(sizeof(h) + h.stored_bytes);
  return payload_crc;
}

}  // namespace katrace
