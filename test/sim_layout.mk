# (Named to sort after plugin.mk, which defines TEST_SUPPORT_OBJS.)
# The export's layout on traces the real plugin writes through katrace-sim: no overflow, no false
# nesting (checked from the ids), one Perfetto process per rank.
$(BUILD)/test/test_layout_on_sim: $(BUILD)/obj/test/test_layout_on_sim.o $(TEST_SUPPORT_OBJS) \
    | $(PLUGIN_SO) $(BUILD)/bin/katrace-sim $(SUITE_TOOLS_DIR)/katrace-check
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(GTEST_LIBS) -lz -ldl

TEST_BINS += $(BUILD)/test/test_layout_on_sim
# Layout checks; the threads of the sim and the plugin run under TSan in test_sim.
TSAN_SKIPPED_TEST_BINS += $(BUILD)/test/test_layout_on_sim
