# katrace-check: validates traces as Perfetto's JSON importer reads them.
include tools/common/objs.mk
KATRACE_CHECK_BIN := $(BUILD)/bin/katrace-check
KATRACE_CHECK_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard tools/check/*.cc))

$(KATRACE_CHECK_BIN): $(KATRACE_CHECK_OBJS) $(KATRACE_TOOLS_COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ -lz

ALL_TARGETS += $(KATRACE_CHECK_BIN)
