# katrace-merge: merges per-rank traces into one Perfetto trace.
include tools/common/objs.mk
KATRACE_MERGE_BIN := $(BUILD)/bin/katrace-merge
# One translation unit but for main.o, which the fuzz replay suite leaves out (test/fuzz.mk).
KATRACE_MERGE_OBJS := $(call katrace_unit,tools,merge,$(filter-out %/main.cc,$(wildcard tools/merge/*.cc))) \
    $(BUILD)/obj/tools/merge/main.o

$(KATRACE_MERGE_BIN): $(KATRACE_MERGE_OBJS) $(KATRACE_TOOLS_COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ -lz

ALL_TARGETS += $(KATRACE_MERGE_BIN)
