// The merged trace's footer (otherData.katrace, format "katrace-merged"): counters summed over
// the inputs (`waits` also takes the `writer_stalls` of older inputs), `spool` as a list with
// one {rank, blocks, bytes, clean_end, cut_offset} per input that had one (offsets and clean
// ends do not sum), the selection that was applied, and one entry per input with its own footer,
// so nothing a per-rank footer said is lost. Holds one small object per input file.
#ifndef KATRACE_TOOLS_MERGE_MERGED_FOOTER_H_
#define KATRACE_TOOLS_MERGE_MERGED_FOOTER_H_

#include <cstdint>
#include <string>

#include "tools/common/json_fields.h"
#include "tools/merge/merge_options.h"

namespace katrace::tools {

class MergedFooter {
 public:
  MergedFooter();
  // |footer| is the input's otherData.katrace, or null when it had none (cut file).
  void AddInput(const std::string& path, int64_t rank, int64_t offset_ns, uint64_t events_in,
                uint64_t events_out, const Json* footer, const std::string& problem);
  // The whole `"otherData":{...}` member.
  std::string Render(int64_t merged_base_realtime_ns, const MergeOptions& options) const;

 private:
  Json sums_;
  Json ranks_;
  Json spools_;
  Json inputs_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_MERGE_MERGED_FOOTER_H_
