# katrace-check's rules broken one at a time on copies of a valid hand-made trace, each reported
# with its code and line; valid unusual traces pass. It runs the katrace-check binary.
CHECK_RULES_TEST := $(BUILD)/test/test_check_rules
CHECK_RULES_TEST_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard test/test_check_rules*.cc)) \
    $(BUILD)/obj/test/support/tool_runner.o

$(CHECK_RULES_TEST): $(CHECK_RULES_TEST_OBJS) $(SUITE_TOOLS_DIR)/katrace-check
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(GTEST_LIBS)

TEST_BINS += $(CHECK_RULES_TEST)
TSAN_SKIPPED_TEST_BINS += $(CHECK_RULES_TEST)
