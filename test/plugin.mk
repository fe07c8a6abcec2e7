# Plugin suites: they dlopen the real $(PLUGIN_SO) and drive its exported ncclProfiler_v* tables.
TEST_SUPPORT_OBJS := $(BUILD)/obj/test/support/plugin_harness.o $(BUILD)/obj/test/support/trace_validation.o \
    $(BUILD)/obj/test/support/subprocess.o
# The katrace-check that ExpectValidTrace runs on every trace a suite writes. The sanitized trees
# are handed the plain tree's (the top Makefile sets VALIDATION_CHECKER): the checker runs on one
# thread and has its own ASan suite and fuzz target, and under TSan it took 12 of the 19 s a
# flight test spent validating its trace.
VALIDATION_CHECKER ?= $(abspath $(KATRACE_CHECK_BIN))
$(BUILD)/obj/test/support/trace_validation.o: CPPFLAGS += -DKATRACE_VALIDATION_CHECKER='"$(VALIDATION_CHECKER)"'
$(BUILD)/obj/test/support/plugin_harness.o: CPPFLAGS += -DKATRACE_SUITE_TOOLS_DIR='"$(abspath $(SUITE_TOOLS_DIR))"'
PLUGIN_TEST_OBJS := $(call katrace_suite_unit,test_plugin,$(filter-out test/test_plugin_flight.cc,$(wildcard test/test_plugin_*.cc)))

# A recording NVTX tool, loaded by NVTX itself through NVTX_INJECTION64_PATH. It needs the NVTX3
# headers of the CUDA toolkit; without them the NVTX test skips.
# Decided on the headers being there, not on CUDA_HOME being set.
NVTX_RECORDER := $(if $(wildcard $(CUDA_HOME)/include/nvtx3),$(BUILD)/test/libnvtx-recorder.so)
$(BUILD)/obj/test/fixtures/nvtx_recorder.o: CPPFLAGS += $(if $(CUDA_HOME),-I$(CUDA_HOME)/include)
$(BUILD)/test/libnvtx-recorder.so: $(BUILD)/obj/test/fixtures/nvtx_recorder.o
	@mkdir -p $(dir $@)
	$(CXX) -shared $(LDFLAGS) -o $@ $^

$(BUILD)/test/test_plugin: $(PLUGIN_TEST_OBJS) $(TEST_SUPPORT_OBJS) | $(PLUGIN_SO) $(NVTX_RECORDER)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(GTEST_LIBS) -lz -ldl

# Parser units of the configuration, linked directly (their effect through the .so is tested in
# test_plugin_config.cc).
$(BUILD)/test/test_config: $(BUILD)/obj/test/test_config_parsing.o $(BUILD)/obj/plugin/config.o \
    $(BUILD)/obj/common/event_mask.o $(BUILD)/obj/common/duration.o
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(GTEST_LIBS)

# The pool's free list, driven directly: the hand-over from its first thread, and contention.
$(BUILD)/test/test_event_pool: $(BUILD)/obj/test/test_event_pool.o $(BUILD)/obj/plugin/asymmetric_fence.o
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(GTEST_LIBS)

# The plugin in flight mode, in stand-in NCCL processes that crash, are killed or exit on their
# own (flight.mk builds the driver): the longest of the plugin tests, in a binary of their own so
# that the test run can give them a core of their own.
$(BUILD)/test/test_plugin_flight: $(BUILD)/obj/test/test_plugin_flight.o $(TEST_SUPPORT_OBJS) \
    | $(PLUGIN_SO) $(BUILD)/test/flight_driver $(SIM_BIN)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(GTEST_LIBS) -lz -ldl

TEST_BINS += $(BUILD)/test/test_plugin $(BUILD)/test/test_plugin_flight $(BUILD)/test/test_config \
    $(BUILD)/test/test_event_pool
TSAN_SKIPPED_TEST_BINS += $(BUILD)/test/test_config

# A stand-in NCCL process for the life-cycle tests (kill, fork, reload, communicator churn).
$(BUILD)/test/capture_driver: $(BUILD)/obj/test/fixtures/capture_driver.o
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ -ldl
$(BUILD)/test/test_plugin: | $(BUILD)/test/capture_driver

# The hot path's instructions and locked operations per callback, counted by single-stepping a
# child with ptrace (skipped under the sanitizers, whose instrumentation it would count).
$(BUILD)/test/test_hot_path_cost: $(BUILD)/obj/test/test_hot_path_cost.o $(TEST_SUPPORT_OBJS) \
    $(BUILD)/obj/plugin/asymmetric_fence.o | $(PLUGIN_SO)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(GTEST_LIBS) -lz -ldl
TEST_BINS += $(BUILD)/test/test_hot_path_cost
TSAN_SKIPPED_TEST_BINS += $(BUILD)/test/test_hot_path_cost
