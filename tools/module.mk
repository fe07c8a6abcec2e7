# Each tool has its own folder and fragment.
include $(wildcard tools/*/module.mk)

# The trace tools' files (check, merge, stats and their common code) are compiled as four
# translation units (katrace_unit, in the Makefile), each tool's main.cc alone, and all of them
# include tools/common/precompiled_headers.h first (-include), from a GCC precompiled header built
# once per tree with their flags, as the suites' files do theirs (test/module.mk says how GCC
# finds it and what another compiler does). katrace-export and the simulator, which do not read
# JSON, keep their plain builds.
TOOLS_PCH := $(BUILD)/obj/pch/tools_headers.h
TOOLS_PCH_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard tools/common/*.cc tools/check/*.cc tools/merge/*.cc tools/stats/*.cc))

$(TOOLS_PCH): tools/common/precompiled_headers.h
	@mkdir -p $(dir $@)
	cp $< $@

$(TOOLS_PCH).gch: $(TOOLS_PCH) | deps
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -x c++-header $< -o $@

$(TOOLS_PCH_OBJS): $(TOOLS_PCH).gch
$(TOOLS_PCH_OBJS): private CPPFLAGS += -include $(TOOLS_PCH)
$(BUILD)/obj/tools/units/%.o: private CPPFLAGS += -include $(TOOLS_PCH)
$(BUILD)/obj/tools/units/%.o: $(BUILD)/obj/tools/units/%.cc $(TOOLS_PCH).gch | deps
	@mkdir -p $(dir $@)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@
