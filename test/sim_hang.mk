# (Named to sort after plugin.mk, which defines TEST_SUPPORT_OBJS.)
# The hang watchdog end to end: katrace-sim injects a hang (--hang), the real plugin reports it
# (KATRACE_HANG_TIMEOUT), and katrace-stats --hang merges the reports.
$(BUILD)/test/test_sim_hang: $(BUILD)/obj/test/test_sim_hang.o $(TEST_SUPPORT_OBJS) \
    | $(PLUGIN_SO) $(BUILD)/bin/katrace-sim $(SUITE_TOOLS_DIR)/katrace-stats
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(GTEST_LIBS) -lz -ldl

TEST_BINS += $(BUILD)/test/test_sim_hang
