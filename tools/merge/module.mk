# katrace-merge: merges per-rank traces into one Perfetto trace.
include tools/common/objs.mk
KATRACE_MERGE_BIN := $(BUILD)/bin/katrace-merge
KATRACE_MERGE_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard tools/merge/*.cc))

$(KATRACE_MERGE_BIN): $(KATRACE_MERGE_OBJS) $(KATRACE_TOOLS_COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ -lz

ALL_TARGETS += $(KATRACE_MERGE_BIN)
