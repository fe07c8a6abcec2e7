# GPU clock fit suite: the fit on synthetic bounds and through the export stage (linked directly),
# and each katrace-sim GPU clock model end to end through the real plugin (the sim binary).
GPU_CLOCK_FIT_TEST := $(BUILD)/test/test_gpu_clock_fit
GPU_CLOCK_FIT_TEST_OBJS := $(BUILD)/obj/test/test_gpu_clock_fit.o $(BUILD)/obj/test/support/spool_builder.o \
    $(BUILD)/obj/test/support/trace_validation.o $(BUILD)/obj/test/support/plugin_harness.o \
    $(BUILD)/obj/test/support/subprocess.o

$(GPU_CLOCK_FIT_TEST): $(GPU_CLOCK_FIT_TEST_OBJS) $(EXPORT_LIB_OBJS) | $(SIM_BIN) $(PLUGIN_SO) $(SUITE_TOOLS_DIR)/katrace-check
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(GTEST_LIBS) $(EXPORT_LIB_LIBS) -ldl

TEST_BINS += $(GPU_CLOCK_FIT_TEST)
# Clock arithmetic; the export's threads run under TSan in test_export and test_plugin.
TSAN_SKIPPED_TEST_BINS += $(GPU_CLOCK_FIT_TEST)
