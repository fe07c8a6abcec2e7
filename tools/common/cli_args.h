// Small command-line helpers shared by the tools: option values, rank lists ("0-7,12") and byte
// sizes ("256M"). Durations have their own grammar, shared with the plugin: common/duration.h.
#ifndef KATRACE_TOOLS_COMMON_CLI_ARGS_H_
#define KATRACE_TOOLS_COMMON_CLI_ARGS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace katrace::tools {

// Matches argv[*i] against |name| as "--name VALUE" or "--name=VALUE" and advances *i past the
// value. When the value is missing, returns true with *ok = false.
bool TakeOption(int argc, char** argv, int* i, const char* name, std::string* value, bool* ok);

std::vector<std::string> SplitList(const std::string& text, char separator = ',');

// A set of ranks given as comma-separated numbers and inclusive ranges.
class RankSelection {
 public:
  bool Parse(const std::string& text, std::string* error);
  // An unparsed (empty) selection contains every rank.
  bool Contains(int64_t rank) const;
  bool all() const { return ranges_.empty(); }

 private:
  std::vector<std::pair<int64_t, int64_t>> ranges_;
};

// "<integer>[k|K|m|M|g|G]", binary multiples.
bool ParseByteSize(const std::string& text, uint64_t* bytes, std::string* error);
bool ParseUint64(const std::string& text, uint64_t* value);

// A tool writes its output only at the end, replacing the file: an input that is that file would
// be gone. True, with |error| naming both, when |output| (not "-") is one of |inputs|, compared by
// device and inode so that "./x" and "x", a symbolic link and a hard link are caught too.
bool OutputIsAnInput(const std::string& output, const std::vector<std::string>& inputs,
                     std::string* error);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_CLI_ARGS_H_
