# docs/trace-format.md compared with a trace the real plugin writes through katrace-sim.
$(BUILD)/test/test_trace_format_doc: $(BUILD)/obj/test/test_trace_format_doc.o $(TEST_SUPPORT_OBJS) \
    | $(PLUGIN_SO) $(BUILD)/bin/katrace-sim
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(GTEST_LIBS) -lz -ldl

TEST_BINS += $(BUILD)/test/test_trace_format_doc
TSAN_SKIPPED_TEST_BINS += $(BUILD)/test/test_trace_format_doc

# GCC 12 warns inside <regex> (std::function's members "may be used uninitialized") at the
# sanitizer builds' -O1; the warning is about the library's own code, not this test's.
$(BUILD)/obj/test/test_trace_format_doc.o: CXXFLAGS += -Wno-maybe-uninitialized
