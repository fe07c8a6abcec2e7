// Stage 3: the records of all streams in one global host-tick order (a k-way merge). Within a
// stream records are already in tick order; across streams blocks interleave in flush order, so
// a Stop can lie in the file before its Start. Merged by ticks, every Start precedes its State
// and Stop records and every parent Start its children's (causality), which is what lets the
// assembler be a simple map of live events.
//
// The merge key of a record is the running maximum of ticks in its stream (records without ticks
// take the last one), so each stream is a sorted sequence even if a clock misbehaves; at equal
// keys Comm/Clock come first, then Start, State, Stop, CommEnd, then the others. One decoded
// block per stream is held (plus the pipeline's window).
#ifndef KATRACE_PLUGIN_EXPORT_STREAM_MERGE_H_
#define KATRACE_PLUGIN_EXPORT_STREAM_MERGE_H_

#include <stdint.h>

#include <memory>
#include <vector>

#include "plugin/export/block_pipeline.h"
#include "plugin/export/export_progress.h"
#include "plugin/export/spool_index.h"

namespace katrace {
namespace exporting {

struct MergedRecord {
  spool::RecordHeader header;
  const uint8_t* body;  // valid until the next call to Next
  size_t body_size;
  uint64_t key;  // merge key (ticks)
  uint32_t stream;
  uint32_t os_tid;
};

class StreamMerge {
 public:
  StreamMerge(const SpoolReader& file, const SpoolIndex& index, int workers, ExportProgress* progress);
  ~StreamMerge();

  bool Next(MergedRecord* out);

  uint64_t failed_blocks() const { return failed_blocks_; }  // blocks that no longer decoded

 private:
  struct Stream {
    uint32_t id = 0;
    std::vector<size_t> blocks;  // schedule positions, file order
    size_t next_block = 0;
    std::unique_ptr<DecodedBlock> block;
    uint32_t os_tid = 0;
    RecordCursor cursor;
    uint64_t carry = 0;
    // The record at the head of this stream; when |needs_load| the head is the next block.
    bool needs_load = false;
    bool done = false;
    MergedRecord head{};
    uint8_t rank = 0;
  };
  bool Advance(Stream* s);  // parses the next head; false when the stream is exhausted
  bool Less(const Stream* a, const Stream* b) const {
    if (a->head.key != b->head.key) return a->head.key < b->head.key;
    if (a->rank != b->rank) return a->rank < b->rank;
    return a->id < b->id;
  }
  void Push(Stream* s);
  Stream* Pop();
  void ReplaceTop(Stream* s);  // the top leaves, |s| goes in (a heap of std::push_heap's order)

  std::vector<BlockRef> schedule_refs_;
  std::vector<uint64_t> schedule_keys_;
  std::unique_ptr<BlockPipeline> pipeline_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<Stream*> heap_;
  Stream* current_ = nullptr;
  std::unique_ptr<DecodedBlock> retired_;  // the block the last record pointed into
  ExportProgress* progress_;
  uint64_t failed_blocks_ = 0;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_STREAM_MERGE_H_
