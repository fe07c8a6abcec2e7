# proxy_drain: the KernelStep drain library, $(BUILD)/lib/libkatrace_drain.a, and its benchmark.

DRAIN_LIB := $(BUILD)/lib/libkatrace_drain.a
DRAIN_SRCS := $(wildcard proxy_drain/*.cc)
DRAIN_OBJS := $(DRAIN_SRCS:%.cc=$(BUILD)/obj/%.o)

$(DRAIN_OBJS): CPPFLAGS += $(STEP_RING_CPPFLAGS)

$(DRAIN_LIB): $(DRAIN_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

DRAIN_BENCH := $(BUILD)/bench/drain_bench
$(BUILD)/obj/bench/drain_bench.o: CPPFLAGS += $(STEP_RING_CPPFLAGS)
$(DRAIN_BENCH): $(BUILD)/obj/bench/drain_bench.o $(DRAIN_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(BENCH_LIBS)

ALL_TARGETS += $(DRAIN_LIB)
BENCH_BINS += $(DRAIN_BENCH)
