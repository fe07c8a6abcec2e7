# katrace-check: validates traces as Perfetto's JSON importer reads them.
include tools/common/objs.mk
KATRACE_CHECK_BIN := $(BUILD)/bin/katrace-check
# One translation unit but for main.o, which the fuzz replay suite leaves out (test/fuzz.mk).
KATRACE_CHECK_OBJS := $(call katrace_unit,tools,check,$(filter-out %/main.cc,$(wildcard tools/check/*.cc))) \
    $(BUILD)/obj/tools/check/main.o

$(KATRACE_CHECK_BIN): $(KATRACE_CHECK_OBJS) $(KATRACE_TOOLS_COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ -lz

ALL_TARGETS += $(KATRACE_CHECK_BIN)
