# The shared grammars of durations (common/duration.cc) and kind lists (common/event_mask.cc),
# linked directly with the option parsers that use them: the plugin's configuration,
# katrace-merge's options and katrace-sim's.
GRAMMAR_TEST := $(BUILD)/test/test_grammar
$(BUILD)/obj/test/test_grammar.o: CPPFLAGS += $(STEP_RING_CPPFLAGS)
$(GRAMMAR_TEST): $(BUILD)/obj/test/test_grammar.o $(BUILD)/obj/plugin/config.o \
    $(BUILD)/obj/tools/merge/merge_options.o $(BUILD)/obj/tools/common/cli_args.o $(SIM_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(GTEST_LIBS) -ldl

TEST_BINS += $(GRAMMAR_TEST)
# Parsers on one thread.
TSAN_SKIPPED_TEST_BINS += $(GRAMMAR_TEST)
