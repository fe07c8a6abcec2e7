# Fuzz replay suite: the committed fuzz inputs through the fuzz targets' entry points, built with
# g++ (no clang needed). The ABI half loads the real $(PLUGIN_SO).
include tools/common/objs.mk
FUZZ_REPLAY_TEST := $(BUILD)/test/test_fuzz_replay
$(FUZZ_REPLAY_TEST): $(BUILD)/obj/test/test_fuzz_replay.o $(BUILD)/obj/fuzz/abi_stream.o \
    $(BUILD)/obj/fuzz/trace_reader_input.o $(KATRACE_TOOLS_COMMON_OBJS) | $(PLUGIN_SO)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(GTEST_LIBS) -lz -ldl

TEST_BINS += $(FUZZ_REPLAY_TEST)
