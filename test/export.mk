# Export suite: spools built record by record (test/support/spool_builder) exported by the real
# export stage (linked directly), traces checked with nlohmann::json and katrace-check, and
# katrace-export run as a program. EXPORT_LIB_OBJS comes from tools/export/module.mk.
EXPORT_TEST := $(BUILD)/test/test_export
EXPORT_TEST_OBJS := $(call katrace_suite_unit,test_export,$(wildcard test/test_export*.cc)) \
    $(BUILD)/obj/test/support/spool_builder.o $(BUILD)/obj/test/support/trace_validation.o \
    $(BUILD)/obj/test/support/plugin_harness.o $(BUILD)/obj/test/support/subprocess.o

$(EXPORT_TEST): $(EXPORT_TEST_OBJS) $(EXPORT_LIB_OBJS) | $(BUILD)/bin/katrace-export $(SUITE_TOOLS_DIR)/katrace-check
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(GTEST_LIBS) $(EXPORT_LIB_LIBS) -ldl

TEST_BINS += $(EXPORT_TEST)

# The Perfetto schema test decodes .pftrace files with PyPI's perfetto package in a virtual
# environment made once for all trees (it skips, saying why, where that cannot be made).
PERFETTO_VENV := build/perfetto-venv
$(PERFETTO_VENV)/STATUS: scripts/perfetto_venv.sh
	@scripts/perfetto_venv.sh $(PERFETTO_VENV)
$(EXPORT_TEST): | $(PERFETTO_VENV)/STATUS
