# katrace-merge's numbers checked on small hand-written traces: every time argument moved with ts,
# the pids and headers of a --ranks selection, a capture split with --ranks and merged back, and
# the footer of a merge merged again. It runs the katrace-merge binary (and reads its JSON back).
include tools/common/objs.mk
MERGE_NUMBERS_TEST := $(BUILD)/test/test_merge_numbers
MERGE_NUMBERS_TEST_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard test/test_merge_numbers*.cc)) \
    $(BUILD)/obj/test/support/tool_runner.o

$(MERGE_NUMBERS_TEST): $(MERGE_NUMBERS_TEST_OBJS) $(KATRACE_TOOLS_COMMON_OBJS) $(SUITE_TOOLS_DIR)/katrace-merge
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(GTEST_LIBS) -lz

TEST_BINS += $(MERGE_NUMBERS_TEST)
TSAN_SKIPPED_TEST_BINS += $(MERGE_NUMBERS_TEST)
