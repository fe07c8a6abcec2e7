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

# The suites' files (test/*.cc) include test/support/precompiled_headers.h first (-include), from
# a GCC precompiled header built once per tree with their own flags. GCC takes X.h.gch in place of
# the X.h it is asked to include when both lie side by side and the flags match, so the header is
# copied beside its .gch; a compiler that cannot use the .gch (clang, other flags) reads the copy
# as a plain header, and the build is the same but for its time.
TEST_PCH := $(BUILD)/obj/pch/precompiled_headers.h
TEST_SUITE_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard test/*.cc))

$(TEST_PCH): test/support/precompiled_headers.h
	@mkdir -p $(dir $@)
	cp $< $@

$(TEST_PCH).gch: CODE_OPT = $(TEST_OPT)
$(TEST_PCH).gch: $(TEST_PCH) | deps
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -x c++-header $< -o $@

$(TEST_SUITE_OBJS): $(TEST_PCH).gch
$(TEST_SUITE_OBJS): private CPPFLAGS += -include $(TEST_PCH)
$(BUILD)/obj/test/units/%.o: private CPPFLAGS += -include $(TEST_PCH)
$(BUILD)/obj/test/units/%.o: $(BUILD)/obj/test/units/%.cc $(TEST_PCH).gch | deps
	@mkdir -p $(dir $@)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@
