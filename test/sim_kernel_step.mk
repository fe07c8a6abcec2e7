# katrace-sim with KernelStep end to end: the real sim binary (emulated writers, drain on the proxy
# threads) against the real plugin, the trace parsed and checked; plus the new options in process.
SIM_KERNEL_STEP_TEST := $(BUILD)/test/test_sim_kernel_step
SIM_KERNEL_STEP_SUPPORT_OBJS := $(BUILD)/obj/test/support/plugin_harness.o \
    $(BUILD)/obj/test/support/trace_validation.o $(BUILD)/obj/test/support/subprocess.o

$(BUILD)/obj/test/test_sim_kernel_step.o: CPPFLAGS += $(STEP_RING_CPPFLAGS)

# The test runs the sim binary with the plugin, so both must exist first.
$(SIM_KERNEL_STEP_TEST): $(BUILD)/obj/test/test_sim_kernel_step.o $(SIM_LIB_OBJS) \
    $(SIM_KERNEL_STEP_SUPPORT_OBJS) $(DRAIN_LIB) | $(SIM_BIN) $(PLUGIN_SO)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(GTEST_LIBS) -lz -ldl

TEST_BINS += $(SIM_KERNEL_STEP_TEST)
