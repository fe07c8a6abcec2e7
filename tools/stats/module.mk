# katrace-stats: Nsight-shaped summary tables and a straggler report over traces.
include tools/common/objs.mk
KATRACE_STATS_BIN := $(BUILD)/bin/katrace-stats
# One translation unit but for main.o, which the fuzz replay suite leaves out (test/fuzz.mk).
KATRACE_STATS_OBJS := $(call katrace_unit,tools,stats,$(filter-out %/main.cc,$(wildcard tools/stats/*.cc))) \
    $(BUILD)/obj/tools/stats/main.o

$(KATRACE_STATS_BIN): $(KATRACE_STATS_OBJS) $(KATRACE_TOOLS_COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ -lz

ALL_TARGETS += $(KATRACE_STATS_BIN)
