# Each tool has its own folder and fragment.
include $(wildcard tools/*/module.mk)

# The trace tools' files (check, merge, stats and their common code) are compiled as four
# translation units (katrace_unit, in the Makefile), each tool's main.cc alone, and all of them
# include tools/common/precompiled_headers.h first, from a precompiled header built with their
# flags (katrace_precompiled, in the Makefile). katrace-export and the simulator, which do not
# read JSON, keep their plain builds.
TOOLS_PCH := $(BUILD)/obj/pch/tools_headers.h
TOOLS_PCH_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard tools/common/*.cc tools/check/*.cc tools/merge/*.cc tools/stats/*.cc))
$(eval $(call katrace_precompiled,tools/common/precompiled_headers.h,$(TOOLS_PCH),$(TOOLS_PCH_OBJS),tools))
