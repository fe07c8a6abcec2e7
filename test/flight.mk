# The flight recorder: its ring and sticky area (FlightRing suite) and the spool writer in flight
# mode (FlightWriter suite) and in file mode (SpoolWriter suite) driven directly; and a stand-in
# NCCL process for the plugin's flight suite (test_plugin_flight, plugin.mk) that must crash or
# exit on its own.
FLIGHT_TEST_OBJS := $(call katrace_suite_unit,test_flight,test/test_flight_ring.cc test/test_flight_writer.cc \
      test/test_spool_writer.cc test/test_writer_doorbell.cc) \
    $(BUILD)/obj/plugin/capture/flight_ring.o $(BUILD)/obj/plugin/capture/block_frame.o \
    $(BUILD)/obj/plugin/capture/spool_writer.o $(BUILD)/obj/plugin/capture/spool_file.o \
    $(BUILD)/obj/plugin/capture/crash_dump.o $(BUILD)/obj/plugin/capture/host_clock.o \
    $(BUILD)/obj/plugin/flight_exports.o $(BUILD)/obj/plugin/session_export.o $(BUILD)/obj/plugin/config.o $(BUILD)/obj/common/event_mask.o \
    $(BUILD)/obj/plugin/logger.o \
    $(BUILD)/obj/common/duration.o
$(BUILD)/test/test_flight: $(FLIGHT_TEST_OBJS) $(EXPORT_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(GTEST_LIBS) $(EXPORT_LIB_LIBS)
TEST_BINS += $(BUILD)/test/test_flight

$(BUILD)/test/flight_driver: $(BUILD)/obj/test/fixtures/flight_driver.o
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ -ldl
