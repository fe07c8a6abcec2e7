# DeviceGpu suite: the demo ring kernel on a real GPU (skips without one). Needs nvcc to build.
ifeq ($(DEVICE_BUILD),1)
$(BUILD)/obj/test/test_device_gpu.o: CPPFLAGS += $(STEP_RING_CPPFLAGS)
$(BUILD)/test/test_device_gpu: $(BUILD)/obj/test/test_device_gpu.o $(DEVICE_OBJS) $(DRAIN_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(GTEST_LIBS) $(CUDA_LIBS)
TEST_BINS += $(BUILD)/test/test_device_gpu
endif
