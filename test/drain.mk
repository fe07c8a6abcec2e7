# StepDrain suite: the KernelStep drain against a fake v6 plugin (TSan-clean).
$(BUILD)/obj/test/test_drain.o: CPPFLAGS += $(STEP_RING_CPPFLAGS)
$(BUILD)/test/test_drain: $(BUILD)/obj/test/test_drain.o $(DRAIN_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(GTEST_LIBS)
TEST_BINS += $(BUILD)/test/test_drain
