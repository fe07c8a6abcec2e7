# katrace-stats: Nsight-shaped summary tables and a straggler report over traces.
include tools/common/objs.mk
KATRACE_STATS_BIN := $(BUILD)/bin/katrace-stats
KATRACE_STATS_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard tools/stats/*.cc))

$(KATRACE_STATS_BIN): $(KATRACE_STATS_OBJS) $(KATRACE_TOOLS_COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ -lz

ALL_TARGETS += $(KATRACE_STATS_BIN)
