# The flight recorder: its ring and sticky area driven directly (FlightRing suite), and a stand-in
# NCCL process for the plugin suites (test_plugin_flight.cc) that must crash or exit on their own.
FLIGHT_RING_OBJS := $(BUILD)/obj/test/test_flight_ring.o $(BUILD)/obj/plugin/capture/flight_ring.o \
    $(BUILD)/obj/plugin/capture/block_frame.o $(BUILD)/obj/plugin/export/spool_reader.o
$(BUILD)/test/test_flight_ring: $(FLIGHT_RING_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(GTEST_LIBS) -lz -llz4
TEST_BINS += $(BUILD)/test/test_flight_ring

$(BUILD)/test/flight_driver: $(BUILD)/obj/test/fixtures/flight_driver.o
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ -ldl
$(BUILD)/test/test_plugin: | $(BUILD)/test/flight_driver
