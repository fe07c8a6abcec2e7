# Fuzz replay suite: the committed fuzz inputs through the fuzz targets' entry points, built with
# g++ (no clang needed). The ABI part loads the real $(PLUGIN_SO); the others link the export
# stage (EXPORT_LIB_OBJS, tools/export/module.mk) and the trace tools without their main().
include tools/common/objs.mk
FUZZ_REPLAY_TEST := $(BUILD)/test/test_fuzz_replay
FUZZ_REPLAY_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(filter-out fuzz/fuzz_%.cc,$(wildcard fuzz/*.cc)))
$(FUZZ_REPLAY_TEST): $(BUILD)/obj/test/test_fuzz_replay.o $(FUZZ_REPLAY_OBJS) $(KATRACE_TOOLS_COMMON_OBJS) \
    $(filter-out %/main.o,$(KATRACE_CHECK_OBJS) $(KATRACE_STATS_OBJS) $(KATRACE_MERGE_OBJS)) \
    $(EXPORT_LIB_OBJS) | $(PLUGIN_SO)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(GTEST_LIBS) $(EXPORT_LIB_LIBS) -lz -ldl

TEST_BINS += $(FUZZ_REPLAY_TEST)
# Its inputs test what one thread does with hostile bytes (ASan's and UBSan's to watch); the
# plugin's threads behind its ABI inputs run under TSan in test_plugin.
TSAN_SKIPPED_TEST_BINS += $(FUZZ_REPLAY_TEST)
