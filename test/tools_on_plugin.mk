# The trace tools on traces the real plugin writes through katrace-sim.
$(BUILD)/test/test_tools_on_plugin_traces: $(BUILD)/obj/test/test_tools_on_plugin_traces.o $(TEST_SUPPORT_OBJS) \
    | $(PLUGIN_SO) $(BUILD)/bin/katrace-sim $(SUITE_TOOLS_DIR)/katrace-check $(SUITE_TOOLS_DIR)/katrace-stats $(SUITE_TOOLS_DIR)/katrace-merge
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(GTEST_LIBS) -lz -ldl

TEST_BINS += $(BUILD)/test/test_tools_on_plugin_traces
