# The plugin's finalize summary on traces the real plugin writes through katrace-sim, and
# katrace-stats and katrace-merge on the same traces (rank identity of real multi-rank files).
$(BUILD)/test/test_summaries: $(BUILD)/obj/test/test_summaries.o $(TEST_SUPPORT_OBJS) \
    | $(PLUGIN_SO) $(BUILD)/bin/katrace-sim $(SUITE_TOOLS_DIR)/katrace-stats $(SUITE_TOOLS_DIR)/katrace-merge \
    $(SUITE_TOOLS_DIR)/katrace-check
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(GTEST_LIBS) -lz -ldl

TEST_BINS += $(BUILD)/test/test_summaries
TSAN_SKIPPED_TEST_BINS += $(BUILD)/test/test_summaries
