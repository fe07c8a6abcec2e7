# The numbers katrace-stats prints, recomputed by hand on small hand-written traces: bandwidth the
# nccl-tests way, the halves of incomplete KernelSteps, text equal to JSON, durations past 2^63 ns.
# It links the stats objects for the unit checks and runs the katrace-stats binary for the rest.
include tools/common/objs.mk
STATS_NUMBERS_TEST := $(BUILD)/test/test_stats_numbers
STATS_NUMBERS_TEST_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard test/test_stats_numbers*.cc)) \
    $(filter-out %/main.o,$(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard tools/stats/*.cc))) \
    $(BUILD)/obj/test/support/tool_runner.o

$(STATS_NUMBERS_TEST): $(STATS_NUMBERS_TEST_OBJS) $(KATRACE_TOOLS_COMMON_OBJS) $(SUITE_TOOLS_DIR)/katrace-stats
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(GTEST_LIBS) -lz

TEST_BINS += $(STATS_NUMBERS_TEST)
TSAN_SKIPPED_TEST_BINS += $(STATS_NUMBERS_TEST)
