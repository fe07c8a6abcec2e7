# (Named to sort after plugin.mk, which defines TEST_SUPPORT_OBJS.)
# The capture window on multi-rank katrace-sim runs: a collective-count window is exact and whole
# although the ranks' threads race at its edges.
$(BUILD)/test/test_window_on_sim: $(BUILD)/obj/test/test_window_on_sim.o $(TEST_SUPPORT_OBJS) \
    | $(PLUGIN_SO) $(BUILD)/bin/katrace-sim $(SUITE_TOOLS_DIR)/katrace-check
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(GTEST_LIBS) -lz -ldl

TEST_BINS += $(BUILD)/test/test_window_on_sim
