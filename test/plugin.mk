# Plugin suites: they dlopen the real $(PLUGIN_SO) and drive its exported ncclProfiler_v* tables.
TEST_SUPPORT_OBJS := $(BUILD)/obj/test/support/plugin_harness.o $(BUILD)/obj/test/support/trace_validation.o
PLUGIN_TEST_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard test/test_plugin_*.cc))

$(BUILD)/test/test_plugin: $(PLUGIN_TEST_OBJS) $(TEST_SUPPORT_OBJS) | $(PLUGIN_SO)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(GTEST_LIBS) -lz -ldl

# Parser units of the configuration, linked directly (their effect through the .so is tested in
# test_plugin_config.cc).
$(BUILD)/test/test_config: $(BUILD)/obj/test/test_config_parsing.o $(BUILD)/obj/plugin/config.o
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(GTEST_LIBS)

TEST_BINS += $(BUILD)/test/test_plugin $(BUILD)/test/test_config
