# katrace build. Each component folder has a module.mk that adds its own targets; this file holds
# the shared flags and the entry points (all, test, demo, bench, tsan, asan).
#
#   make            plugin, tools, device code and test binaries into $(BUILD)
#   make test       build and run every test binary; ends with "N passed, N failed"
#   make demo       run katrace-sim end to end with the plugin; prints the trace path and summary
#   make bench      run the benchmarks recorded in BENCHMARKS.md
#   make tsan       the test suite under ThreadSanitizer (build/tsan)
#   make asan       the test suite under AddressSanitizer + UndefinedBehaviorSanitizer (build/asan)
#   make check      all three (plain, tsan, asan) in one run with one closing "N passed, N failed"
#   make fuzz       build the libFuzzer targets (clang) and fuzz each for FUZZ_SECONDS
#   make fuzz-check the same for FUZZ_CHECK_SECONDS each

BUILD ?= build
SAN ?=
CXX ?= g++
NVCC ?= nvcc
# Decided on what is there, not on what is claimed: CUDA_HOME is often set by an HPC module that
# has no compiler, and the nvcc on PATH is often a wrapper script or symlink outside its toolkit.
# NVCC_FOUND is $(NVCC) when it runs (a path, or a name on PATH), else $(CUDA_HOME)/bin/nvcc when
# that runs, else empty. CUDA_HOME then becomes the toolkit that nvcc itself names (its TOP, as
# nvcc.profile sets it), so the runtime linked always matches the compiler: a stale or bogus
# CUDA_HOME next to a working nvcc used to fail the link of gpu_bench (-L$(CUDA_HOME)/lib64).
katrace_runs = $(if $(1),$(shell '$(1)' --version >/dev/null 2>&1 && echo '$(1)'))
NVCC_FOUND := $(or $(call katrace_runs,$(shell command -v $(NVCC) 2>/dev/null)),$(if $(CUDA_HOME),$(call katrace_runs,$(wildcard $(CUDA_HOME)/bin/nvcc))))
NVCC_TOOLKIT := $(if $(NVCC_FOUND),$(realpath $(or $(shell '$(NVCC_FOUND)' -dryrun -x cu -c /dev/null -o /dev/null 2>&1 | sed -n 's/^..[ ]*TOP=//p' | head -n 1),$(patsubst %/bin/nvcc,%,$(realpath $(NVCC_FOUND))))))
ifneq ($(NVCC_TOOLKIT),)
ifneq ($(realpath $(CUDA_HOME)),$(NVCC_TOOLKIT))
ifneq ($(filter 1,$(NVCC_SKIP)),1)
$(if $(CUDA_HOME),$(info katrace: CUDA_HOME=$(CUDA_HOME) is not the toolkit of $(NVCC_FOUND); using its own, $(NVCC_TOOLKIT)))
endif
override CUDA_HOME := $(NVCC_TOOLKIT)
endif
endif
# Whether the device code can be built, and why not: the static CUDA runtime must be there (a
# pip-installed nvcc has none), and nvcc must accept the host compiler (each CUDA release refuses
# g++ releases newer than it knows) and target sm_80 and sm_90. Checked only when it is to be built
# (the -E probe takes a tenth of a second); the device code is then skipped with the first reason,
# the build never fails on it.
ifneq ($(filter 1,$(NVCC_SKIP)),1)
CUDA_LIBDIR := $(if $(NVCC_FOUND),$(patsubst %/,%,$(dir $(firstword $(wildcard $(CUDA_HOME)/lib64/libcudart_static.a $(CUDA_HOME)/targets/*/lib/libcudart_static.a) $(filter /%,$(shell $(CXX) -print-file-name=libcudart_static.a 2>/dev/null))))))
DEVICE_SKIP_REASON := $(or \
  $(if $(NVCC_FOUND),,no nvcc ($(NVCC) is not on PATH or does not run$(if $(CUDA_HOME), and neither does $(CUDA_HOME)/bin/nvcc))),\
  $(if $(NVCC_FOUND),$(if $(CUDA_LIBDIR),,$(NVCC_FOUND) has no CUDA runtime (libcudart_static.a is in neither $(CUDA_HOME)/lib64 nor the library path of $(CXX)))),\
  $(if $(CUDA_LIBDIR),$(if $(shell '$(NVCC_FOUND)' -E -x cu /dev/null -o /dev/null >/dev/null 2>&1 && echo ok),,$(NVCC_FOUND) cannot compile CUDA here: $(shell '$(NVCC_FOUND)' -E -x cu /dev/null -o /dev/null 2>&1 | grep -m 1 -i error))),\
  $(if $(CUDA_LIBDIR),$(if $(and $(filter sm_80,$(shell '$(NVCC_FOUND)' --list-gpu-code 2>/dev/null)),$(filter sm_90,$(shell '$(NVCC_FOUND)' --list-gpu-code 2>/dev/null))),,$(NVCC_FOUND) cannot target both sm_80 and sm_90)))
ifneq ($(DEVICE_SKIP_REASON),)
$(info katrace: $(DEVICE_SKIP_REASON): skipping the device code (device/*.cu, $(BUILD)/device/gpu_bench) and the GPU suite test_device_gpu; everything else builds and runs on the CPU)
# device/module.mk builds the device code only with an nvcc that can.
NVCC_FOUND :=
endif
endif

OPT ?= -O2 -g
# The test suites' own files (test/*.cc) are built for a quick build rather than a quick run:
# they are the heaviest code to compile (GoogleTest, nlohmann::json) and spend their time
# waiting on the code under test. -O1 -g1 builds them in half the time -O2 -g takes; under
# ASan+UBSan, -O0 builds them in half the time -O1 takes (under TSan, -O0 slowed the run more
# than it sped up the build).
# The support code the suites share (test/support: parsing and validating traces, building
# spools) and the fixture plugins and drivers (measured against katrace) are built like the
# code under test.
TEST_OPT ?= -O1 -g1
CODE_OPT = $(OPT)
$(BUILD)/obj/test/%.o: CODE_OPT = $(TEST_OPT)
$(BUILD)/obj/test/support/%.o: CODE_OPT = $(OPT)
$(BUILD)/obj/test/fixtures/%.o: CODE_OPT = $(OPT)
CXXSTD := -std=c++17
WARN := -Wall -Wextra -Werror
CPPFLAGS := -Iinclude -I. -MMD -MP
CXXFLAGS = $(CXXSTD) $(CODE_OPT) $(WARN) -fPIC -pthread
LDFLAGS := -pthread
LDLIBS :=
ifneq ($(SAN),)
# Every sanitizer report fails the run (UBSan would otherwise print and continue).
CXXFLAGS += -fsanitize=$(SAN) -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SAN)
else
# nlohmann::json asserts its own invariants in every value it builds, moves or destroys: 8 % of
# katrace-stats' instructions on a .pftrace, 2 % on JSON. The release build leaves them out; the
# sanitizer builds keep them. katrace's own code checks with tests and messages, never assert().
CPPFLAGS += -DNDEBUG
endif

# The ring headers (include/katrace/step_*.h) use libcu++'s cuda::atomic_ref, which is header-only
# and ships with CUDA in include/cccl; g++ objects that include them add $(STEP_RING_CPPFLAGS).
# Without CUDA the headers fall back to the same __atomic builtins.
STEP_RING_CPPFLAGS := $(if $(wildcard $(CUDA_HOME)/include/cccl),-isystem $(CUDA_HOME)/include/cccl)

GTEST_LIBS := -lgtest -lgtest_main -pthread
BENCH_LIBS := -lbenchmark -pthread

# Filled in by the module.mk files.
ALL_TARGETS :=
TEST_BINS :=
# Suites whose code under test runs on one thread (the trace tools, the config parser, the clock
# fit), or whose threads another suite already runs under TSan (the sim-driven summary, layout and
# format-doc checks): the TSan tree skips them, which saves a third of its build. ASan and UBSan
# run every suite.
TSAN_SKIPPED_TEST_BINS :=
BENCH_BINS :=

# Files compiled as one translation unit: a generated file that includes each of them. What a
# file of the suites or of the trace tools costs to build is mostly the inline code of
# GoogleTest, nlohmann::json and the standard library that it instantiates, and that is then
# compiled once per unit instead of once per file (test_plugin's 12 files: 44 s of CPU apart,
# 11 s as one; the trace tools' 42 files: 122 s apart, 54 s as four). Each file still includes
# all it uses, so it also builds alone; the names in the anonymous namespaces of one unit's files
# must differ. $(call katrace_unit,DIR,NAME,FILES) is the object of the unit
# $(BUILD)/obj/DIR/units/NAME.cc, whose text is rewritten only when the list of files changes;
# DIR's module gives the rule that compiles it.
katrace_unit = $(eval $(call katrace_unit_source,$(1),$(2),$(3)))$(BUILD)/obj/$(1)/units/$(2).o
define katrace_unit_source
$(BUILD)/obj/$(1)/units/$(2).cc: katrace-unit-list
	@mkdir -p $$(dir $$@)
	@printf '#include "%s"\n' $(3) >$$@.new
	@if cmp -s $$@.new $$@; then rm -f $$@.new; else mv -f $$@.new $$@; fi
endef
.PHONY: katrace-unit-list

# $(eval $(call katrace_precompiled,HEADER,COPY,OBJS,DIR)): OBJS and DIR's units include HEADER
# first (-include), from a GCC precompiled header built once per tree with their flags. GCC takes
# X.h.gch in place of the X.h it is asked to include when both lie side by side and the flags
# match, so HEADER is copied to COPY beside its .gch; a compiler that cannot use the .gch (clang,
# other flags) reads the copy as a plain header, and the build is the same but for its time.
define katrace_precompiled
$(2): $(1)
	@mkdir -p $$(dir $$@)
	cp $$< $$@

$(2).gch: $(2) | deps
	$$(CXX) $$(CPPFLAGS) $$(CXXFLAGS) -x c++-header $$< -o $$@

$(3): $(2).gch
$(3): private CPPFLAGS += -include $(2)
$$(BUILD)/obj/$(4)/units/%.o: private CPPFLAGS += -include $(2)
$$(BUILD)/obj/$(4)/units/%.o: $$(BUILD)/obj/$(4)/units/%.cc $(2).gch | deps
	@mkdir -p $$(dir $$@)
	$$(CXX) $$(CPPFLAGS) $$(CXXFLAGS) -c $$< -o $$@
endef

.PHONY: all test test-bins demo bench tsan asan check clean deps
# Keep intermediate objects: no trailing "rm" after the test summary, no rebuilds next time.
.SECONDARY:
all: all-targets

# Installs missing Debian packages (as root) or says which are missing; cheap when all are there.
deps:
	@scripts/ensure_deps.sh

include plugin/module.mk
include proxy_drain/module.mk
include device/module.mk
include tools/module.mk
include test/module.mk
include bench/module.mk
include fuzz/module.mk

all-targets: $(ALL_TARGETS)

# Everything waits for the dependency check, so a fresh machine gets its packages first.
$(ALL_TARGETS) $(TEST_BINS) $(BENCH_BINS): | deps

$(BUILD)/obj/%.o: %.cc | deps
	@mkdir -p $(dir $@)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@

test-bins: $(ALL_TARGETS) $(TEST_BINS)

test: test-bins
	@test/run_tests.sh $(TEST_BINS)

TSAN_TEST_BINS = $(filter-out $(TSAN_SKIPPED_TEST_BINS),$(TEST_BINS))
# The TSan tree's suites run the plain tree's single-threaded tools (test/module.mk): it does not
# build its own.
SINGLE_THREADED_TOOL_BINS := $(KATRACE_CHECK_BIN) $(KATRACE_MERGE_BIN) $(KATRACE_STATS_BIN)
.PHONY: tsan-test-bins tsan-test
tsan-test-bins: $(filter-out $(SINGLE_THREADED_TOOL_BINS),$(ALL_TARGETS)) $(TSAN_TEST_BINS)

tsan-test: tsan-test-bins
	@test/run_tests.sh $(TSAN_TEST_BINS)

# Recursive makes for the sanitizer builds. Each recipe line that runs one starts with "+" so
# make treats it as recursive and hands it the jobserver (without it the sub-makes fell back to
# -j1). The sanitizer runs of the long tests are scaled down by test/run_tests.sh. -g1 (line
# tables only) still gives every sanitizer report its file:line and builds about a quarter faster
# than -g.
# Their suites validate traces with the plain tree's katrace-check (test/plugin.mk says why), and
# the TSan tree's run the plain tree's single-threaded tools (test/module.mk), so those are built
# first.
SAN_VALIDATION = VALIDATION_CHECKER=$(abspath $(KATRACE_CHECK_BIN))
TSAN_MAKE = $(MAKE) BUILD=build/tsan SAN=thread OPT="-O1 -g1" NVCC_SKIP=1 $(SAN_VALIDATION) \
    SUITE_TOOLS_DIR=$(BUILD)/bin
ASAN_MAKE = $(MAKE) BUILD=build/asan SAN=address,undefined OPT="-O1 -g1" TEST_OPT="-O0 -g1" NVCC_SKIP=1 $(SAN_VALIDATION)

bench: $(ALL_TARGETS) $(BENCH_BINS) $(TEST_BINS)
	bench/run_benchmarks.sh $(BUILD)

tsan: $(SINGLE_THREADED_TOOL_BINS)
	+$(TSAN_MAKE) tsan-test

asan: $(KATRACE_CHECK_BIN)
	+$(ASAN_MAKE) test

.PHONY: tsan-bins asan-bins
tsan-bins: $(SINGLE_THREADED_TOOL_BINS)
	+$(TSAN_MAKE) tsan-test-bins

asan-bins: $(KATRACE_CHECK_BIN)
	+$(ASAN_MAKE) test-bins

# The demo's README points at the trace tools: they are built with it.
demo: $(KATRACE_CHECK_BIN) $(KATRACE_MERGE_BIN) $(KATRACE_STATS_BIN) $(KATRACE_EXPORT_BIN)

# The sanitizer builds skip nvcc, so their test lists lack the GPU-only suite. The three builds
# are prerequisites, so that under -j they share the job slots. The sanitized suites are the
# longest, so they start first and the short plain ones fill the cores at the end. The fuzzers
# are not built here (a fourth, clang-instrumented tree, about two minutes of the run on a
# 2-core machine): every committed fuzz input is replayed by test_fuzz_replay in all three trees.
check: test-bins tsan-bins asan-bins
	@test/run_tests.sh \
	  $(filter-out %/test_device_gpu,$(subst $(BUILD)/,build/tsan/,$(TSAN_TEST_BINS))) \
	  $(filter-out %/test_device_gpu,$(subst $(BUILD)/,build/asan/,$(TEST_BINS))) \
	  $(TEST_BINS)

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
