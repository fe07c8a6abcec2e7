# katrace-sim (tools/sim/): loads any profiler plugin and drives it as NCCL core does.
SIM_SRCS := $(wildcard tools/sim/*.cc)
SIM_OWN_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(filter-out tools/sim/main.cc,$(SIM_SRCS)))
# The proxy threads run the KernelStep drain: its objects travel with the sim's own, so every link
# of SIM_LIB_OBJS (the binary, test_sim, test_sim_kernel_step) resolves without naming the drain.
# The --mask and duration grammars are the plugin's (common/event_mask.cc, common/duration.cc).
SIM_LIB_OBJS := $(SIM_OWN_OBJS) $(DRAIN_OBJS) $(BUILD)/obj/common/event_mask.o $(BUILD)/obj/common/duration.o
SIM_BIN := $(BUILD)/bin/katrace-sim

# The KernelStep writers and the drain include the ring headers (katrace/step_*.h).
$(SIM_OWN_OBJS) $(BUILD)/obj/tools/sim/main.o: CPPFLAGS += $(STEP_RING_CPPFLAGS)

$(SIM_BIN): $(SIM_LIB_OBJS) $(BUILD)/obj/tools/sim/main.o
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(LDLIBS) -ldl

ALL_TARGETS += $(SIM_BIN)

# End to end: our plugin under the sim, KernelSteps included (CPU writers, drained by the proxy
# threads). The plugin prints its own summary at finalize.
demo: $(PLUGIN_SO) $(SIM_BIN) $(KATRACE_EXPORT_BIN)
	@mkdir -p $(BUILD)/demo
	KATRACE_OUTPUT=$(BUILD)/demo/katrace-demo.json KATRACE_KEEP_SPOOL=1 $(SIM_BIN) --plugin $(PLUGIN_SO) \
	  --ranks 4 --channels 4 --iters 20
	@# The same capture in the other two formats, from the spool the run kept.
	$(KATRACE_EXPORT_BIN) --quiet --keep-spool --format perfetto $(BUILD)/demo/katrace-demo.json.kspool
	$(KATRACE_EXPORT_BIN) --quiet --format nvtxt $(BUILD)/demo/katrace-demo.json.kspool
	@echo "demo: traces in $(BUILD)/demo/: katrace-demo.json (Chrome JSON), katrace-demo.pftrace (Perfetto protobuf; both open in https://ui.perfetto.dev), katrace-demo.nvtxt (NVTXT for Nsight Systems' ImportNvtxt)"
