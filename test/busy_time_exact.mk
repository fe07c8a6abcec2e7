# BusyTime exact whatever order slices come in (two rank files read one after the other, shuffled
# slices, an unwritable spill), checked against a union counted directly, and katrace-stats on two
# per-rank files against their merge. It links the common objects and runs the katrace-stats
# binary for the end-to-end check.
include tools/common/objs.mk
BUSY_TIME_EXACT_TEST := $(BUILD)/test/test_busy_time_exact
BUSY_TIME_EXACT_TEST_OBJS := $(BUILD)/obj/test/test_busy_time_exact.o $(BUILD)/obj/test/support/tool_runner.o

$(BUSY_TIME_EXACT_TEST): $(BUSY_TIME_EXACT_TEST_OBJS) $(KATRACE_TOOLS_COMMON_OBJS) $(SUITE_TOOLS_DIR)/katrace-stats
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(GTEST_LIBS) -lz

TEST_BINS += $(BUSY_TIME_EXACT_TEST)
TSAN_SKIPPED_TEST_BINS += $(BUSY_TIME_EXACT_TEST)
