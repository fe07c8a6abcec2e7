# RingProtocol suite: the KernelStep ring protocol with concurrent writers (TSan-clean).
$(BUILD)/obj/test/test_step_ring.o: CPPFLAGS += $(STEP_RING_CPPFLAGS)
$(BUILD)/test/test_step_ring: $(BUILD)/obj/test/test_step_ring.o $(DRAIN_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(GTEST_LIBS)
TEST_BINS += $(BUILD)/test/test_step_ring
