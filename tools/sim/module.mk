# katrace-sim (tools/sim/): loads any profiler plugin and drives it as NCCL core does.
SIM_SRCS := $(wildcard tools/sim/*.cc)
SIM_LIB_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(filter-out tools/sim/main.cc,$(SIM_SRCS)))
SIM_BIN := $(BUILD)/bin/katrace-sim

$(SIM_BIN): $(SIM_LIB_OBJS) $(BUILD)/obj/tools/sim/main.o
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(LDLIBS) -ldl

ALL_TARGETS += $(SIM_BIN)

# End to end: our plugin under the sim. The plugin prints its own summary at finalize.
demo: $(PLUGIN_SO) $(SIM_BIN)
	@mkdir -p $(BUILD)/demo
	KATRACE_OUTPUT=$(BUILD)/demo/katrace-demo.json $(SIM_BIN) --plugin $(PLUGIN_SO) \
	  --ranks 4 --channels 4 --iters 20
	@echo "demo: trace in $(BUILD)/demo/ (KATRACE_OUTPUT=$(BUILD)/demo/katrace-demo.json)"
