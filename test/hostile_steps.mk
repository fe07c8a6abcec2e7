# HostileSteps suites: the KernelStep drain fed broken stamps, channels and configuration, against
# a recording v6 plugin (TSan-clean) and, through the real plugin, into a trace that katrace-check
# must accept.
HOSTILE_STEPS_TEST := $(BUILD)/test/test_hostile_steps
HOSTILE_STEPS_OBJS := $(call katrace_suite_unit,test_hostile_steps,test/test_hostile_steps_drain.cc \
    test/test_hostile_steps_plugin.cc)
HOSTILE_STEPS_SUPPORT_OBJS := $(BUILD)/obj/test/support/plugin_harness.o \
    $(BUILD)/obj/test/support/trace_validation.o $(BUILD)/obj/test/support/subprocess.o

$(HOSTILE_STEPS_OBJS): CPPFLAGS += $(STEP_RING_CPPFLAGS)

# The plugin half dlopens the plugin and validates its trace with katrace-check.
$(HOSTILE_STEPS_TEST): $(HOSTILE_STEPS_OBJS) $(HOSTILE_STEPS_SUPPORT_OBJS) $(DRAIN_LIB) | \
    $(PLUGIN_SO) $(SUITE_TOOLS_DIR)/katrace-check
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(GTEST_LIBS) -lz -ldl

TEST_BINS += $(HOSTILE_STEPS_TEST)
