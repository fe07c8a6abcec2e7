# The trace tools' test suite: SummaryTable/DurationStats, the shared reader pieces, and
# katrace-check, katrace-merge and katrace-stats run as programs on hand-made and synthetic traces,
# and on katrace-export's JSON and protobuf traces of one spool. It runs the tool binaries, so it
# depends on them (make test builds them first).
include tools/common/objs.mk
TRACE_TOOLS_TEST := $(BUILD)/test/test_trace_tools
TRACE_TOOLS_TEST_OBJS := $(call katrace_suite_unit,test_trace_tools,$(wildcard test/test_trace_tools*.cc)) \
    $(BUILD)/obj/test/support/synthetic_trace.o $(BUILD)/obj/test/support/subprocess.o \
    $(BUILD)/obj/test/support/tool_runner.o
TRACE_TOOLS_BINS := $(SUITE_TOOLS_DIR)/katrace-check $(SUITE_TOOLS_DIR)/katrace-merge $(SUITE_TOOLS_DIR)/katrace-stats \
    $(BUILD)/bin/katrace-export

$(TRACE_TOOLS_TEST): $(TRACE_TOOLS_TEST_OBJS) $(KATRACE_TOOLS_COMMON_OBJS) $(TRACE_TOOLS_BINS)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(GTEST_LIBS) -lz

TEST_BINS += $(TRACE_TOOLS_TEST)
TSAN_SKIPPED_TEST_BINS += $(TRACE_TOOLS_TEST)
