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
