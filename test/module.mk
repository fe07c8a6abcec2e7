# Each test suite adds itself in its own fragment test/<suite>.mk (a GoogleTest binary under
# $(BUILD)/test appended to TEST_BINS).
# Where the suites find the trace tools that run on one thread (katrace-check, -merge, -stats):
# this tree's own, except that the top Makefile hands the TSan tree the plain tree's. TSan has
# nothing to watch in a program of one thread (the plain and ASan trees run their own), and not
# building them under TSan saves about a minute and a half of the check's CPU.
SUITE_TOOLS_DIR ?= $(BUILD)/bin

# A suite of several files is compiled as one translation unit (katrace_unit, in the Makefile).
katrace_suite_unit = $(call katrace_unit,test,$(1),$(2))

include $(filter-out test/module.mk,$(wildcard test/*.mk))

# The suites' files (test/*.cc) and units include test/support/precompiled_headers.h first, from
# a precompiled header built with their flags (katrace_precompiled, in the Makefile).
TEST_PCH := $(BUILD)/obj/pch/precompiled_headers.h
TEST_SUITE_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard test/*.cc))
$(TEST_PCH).gch: CODE_OPT = $(TEST_OPT)
$(eval $(call katrace_precompiled,test/support/precompiled_headers.h,$(TEST_PCH),$(TEST_SUITE_OBJS),test))
