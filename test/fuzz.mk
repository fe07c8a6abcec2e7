# Fuzz replay suite: the committed fuzz inputs through the fuzz targets' entry points, built with
# g++ (no clang needed). The ABI half loads the real $(PLUGIN_SO); the spool half links the export
# stage (EXPORT_LIB_OBJS, tools/export/module.mk).
include tools/common/objs.mk
FUZZ_REPLAY_TEST := $(BUILD)/test/test_fuzz_replay
$(FUZZ_REPLAY_TEST): $(BUILD)/obj/test/test_fuzz_replay.o $(BUILD)/obj/fuzz/abi_stream.o \
    $(BUILD)/obj/fuzz/trace_reader_input.o $(BUILD)/obj/fuzz/spool_export_input.o $(KATRACE_TOOLS_COMMON_OBJS) \
    $(EXPORT_LIB_OBJS) | $(PLUGIN_SO)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(GTEST_LIBS) $(EXPORT_LIB_LIBS) -lz -ldl

TEST_BINS += $(FUZZ_REPLAY_TEST)
