// Decodes blocks ahead of the merge, in worker threads, in the order the merge will want them
// (the schedule: blocks sorted by the merge key they begin at). At most |window| blocks are
// decoded and not yet taken, so memory stays at window + streams blocks whatever the spool's
// length. The merge may ask for a block out of schedule order (ties); one that no worker has
// started is then decoded by the caller, so Take never waits on work nobody will do.
#ifndef KATRACE_PLUGIN_EXPORT_BLOCK_PIPELINE_H_
#define KATRACE_PLUGIN_EXPORT_BLOCK_PIPELINE_H_

#include <stddef.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "plugin/export/spool_reader.h"

namespace katrace {
namespace exporting {

struct DecodedBlock {
  ByteBuffer raw;
  ByteBuffer scratch;
  bool ok = false;
  std::string reason;
};

class BlockPipeline {
 public:
  BlockPipeline(const SpoolReader& file, std::vector<BlockRef> schedule, int workers, size_t window);
  ~BlockPipeline();
  BlockPipeline(const BlockPipeline&) = delete;
  BlockPipeline& operator=(const BlockPipeline&) = delete;

  // The decoded block at schedule position |i|; each position is taken once.
  std::unique_ptr<DecodedBlock> Take(size_t i);
  // A block the merge is done with: its buffers are reused.
  void Recycle(std::unique_ptr<DecodedBlock> block);

 private:
  enum class SlotState : uint8_t { kPending, kRunning, kReady, kTaken };
  void Work();
  void Decode(size_t i, DecodedBlock* out);
  std::unique_ptr<DecodedBlock> NewBlock();  // under mu_

  const SpoolReader& file_;
  std::vector<BlockRef> schedule_;
  size_t window_;
  std::mutex mu_;
  std::condition_variable ready_cv_, work_cv_;
  std::vector<SlotState> state_;
  std::vector<std::unique_ptr<DecodedBlock>> done_;
  std::vector<std::unique_ptr<DecodedBlock>> free_;
  size_t next_ = 0;        // first position no worker has looked at
  size_t low_taken_ = 0;   // every position below is taken
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_BLOCK_PIPELINE_H_
