// katrace-merge: merges per-process katrace traces into one Perfetto trace (see kMergeUsage).
#include "tools/merge/merge_options.h"
#include "tools/merge/merger.h"

int main(int argc, char** argv) {
  katrace::tools::MergeOptions options;
  const int parsed = katrace::tools::ParseMergeOptions(argc, argv, &options);
  if (parsed < 0) return 0;
  if (parsed > 0) return parsed;
  return katrace::tools::RunMerge(options);
}
