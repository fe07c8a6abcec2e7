# Hostile inputs to the capture's own pieces, driven directly: the hang watchdog fed synthetic
# clock readings (a tick rate the watchdog has not measured yet). Linked from the objects under
# test alone, so it names no fragment's variables (this one sorts before plugin.mk).
HOSTILE_CAPTURE_TEST := $(BUILD)/test/test_hostile_capture
HOSTILE_CAPTURE_OBJS := $(BUILD)/obj/test/test_hostile_capture_watchdog.o $(BUILD)/obj/plugin/capture/hang_watchdog.o
$(HOSTILE_CAPTURE_TEST): $(HOSTILE_CAPTURE_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(GTEST_LIBS)
TEST_BINS += $(HOSTILE_CAPTURE_TEST)
# Single-threaded: nothing for ThreadSanitizer to look at.
TSAN_SKIPPED_TEST_BINS += $(HOSTILE_CAPTURE_TEST)
