# katrace-sim tests: the sim binary against two tiny fixture plugins built here.
SIM_NULL_PLUGIN := $(BUILD)/test/libnccl-profiler-null.so
SIM_RECORDING_PLUGIN := $(BUILD)/test/libnccl-profiler-recording.so
SIM_TEST := $(BUILD)/test/test_sim

$(BUILD)/test/libnccl-profiler-%.so: $(BUILD)/obj/test/fixtures/%_plugin.o
	@mkdir -p $(dir $@)
	$(CXX) -shared $(LDFLAGS) -o $@ $^

# The test runs the real binary and loads the fixtures, so they must exist first.
$(SIM_TEST): $(BUILD)/obj/test/test_sim.o $(BUILD)/obj/test/support/subprocess.o $(SIM_LIB_OBJS) \
    | $(SIM_BIN) $(SIM_NULL_PLUGIN) \
    $(SIM_RECORDING_PLUGIN)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(GTEST_LIBS) -ldl

TEST_BINS += $(SIM_TEST)
