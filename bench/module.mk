# Benchmarks (make bench); results and the commands that reproduce them are in BENCHMARKS.md.
$(BUILD)/bench/plugin_callback_bench: $(BUILD)/obj/bench/plugin_callback_bench.o | $(PLUGIN_SO)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(BENCH_LIBS) -ldl

$(BUILD)/bench/writer_bench: $(BUILD)/obj/bench/writer_bench.o | $(PLUGIN_SO)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ -ldl

BENCH_BINS += $(BUILD)/bench/plugin_callback_bench $(BUILD)/bench/writer_bench

$(BUILD)/bench/sustained_bench: $(BUILD)/obj/bench/sustained_bench.o | $(PLUGIN_SO)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ -ldl
BENCH_BINS += $(BUILD)/bench/sustained_bench

# Export throughput: spool -> JSON through the export stage, linked directly.
$(BUILD)/bench/export_bench: $(BUILD)/obj/bench/export_bench.o $(BUILD)/obj/test/support/spool_builder.o $(EXPORT_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(EXPORT_LIB_LIBS)
BENCH_BINS += $(BUILD)/bench/export_bench

# A callback outside the capture window against a masked-out one, alternating sessions.
$(BUILD)/bench/window_bench: $(BUILD)/obj/bench/window_bench.o | $(PLUGIN_SO)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ -ldl
BENCH_BINS += $(BUILD)/bench/window_bench

# The flight recorder's resident memory in a sustained run (KATRACE_MODE=flight).
$(BUILD)/bench/flight_rss_bench: $(BUILD)/obj/bench/flight_rss_bench.o | $(PLUGIN_SO)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ -ldl
BENCH_BINS += $(BUILD)/bench/flight_rss_bench

# The spool writer's own capacity in records/s, fed by the cheapest possible producer.
SPOOL_WRITER_BENCH_OBJS := $(BUILD)/obj/bench/spool_writer_bench.o $(BUILD)/obj/plugin/capture/spool_writer.o \
    $(BUILD)/obj/plugin/capture/spool_file.o $(BUILD)/obj/plugin/capture/block_frame.o \
    $(BUILD)/obj/plugin/capture/flight_ring.o $(BUILD)/obj/plugin/capture/crash_dump.o \
    $(BUILD)/obj/plugin/capture/host_clock.o $(BUILD)/obj/plugin/logger.o $(BUILD)/obj/common/crc32.o
$(BUILD)/bench/spool_writer_bench: $(SPOOL_WRITER_BENCH_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ -lz -llz4 -pthread
BENCH_BINS += $(BUILD)/bench/spool_writer_bench
