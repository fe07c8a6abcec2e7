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

BUILD ?= build
SAN ?=
CXX ?= g++
NVCC ?= nvcc
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(shell command -v $(NVCC) 2>/dev/null))

OPT ?= -O2 -g
CXXSTD := -std=c++17
WARN := -Wall -Wextra -Werror
CPPFLAGS := -Iinclude -I. -MMD -MP
CXXFLAGS := $(CXXSTD) $(OPT) $(WARN) -fPIC -pthread
LDFLAGS := -pthread
LDLIBS :=
ifneq ($(SAN),)
# Every sanitizer report fails the run (UBSan would otherwise print and continue).
CXXFLAGS += -fsanitize=$(SAN) -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SAN)
endif

# The ring headers (include/katrace/step_*.h) use libcu++'s cuda::atomic_ref, which is header-only
# and ships with CUDA in include/cccl; g++ objects that include them add $(STEP_RING_CPPFLAGS).
# Without CUDA the headers fall back to the same __atomic builtins.
STEP_RING_CPPFLAGS := $(if $(CUDA_HOME),-isystem $(CUDA_HOME)/include/cccl)

GTEST_LIBS := -lgtest -lgtest_main -pthread
BENCH_LIBS := -lbenchmark -pthread

# Filled in by the module.mk files.
ALL_TARGETS :=
TEST_BINS :=
BENCH_BINS :=

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

all-targets: $(ALL_TARGETS)

# Everything waits for the dependency check, so a fresh machine gets its packages first.
$(ALL_TARGETS) $(TEST_BINS) $(BENCH_BINS): | deps

$(BUILD)/obj/%.o: %.cc | deps
	@mkdir -p $(dir $@)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@

test-bins: $(ALL_TARGETS) $(TEST_BINS)

test: test-bins
	@test/run_tests.sh $(TEST_BINS)

TSAN_MAKE := $(MAKE) BUILD=build/tsan SAN=thread OPT="-O1 -g" NVCC_SKIP=1
ASAN_MAKE := $(MAKE) BUILD=build/asan SAN=address,undefined OPT="-O1 -g" NVCC_SKIP=1

bench: $(ALL_TARGETS) $(BENCH_BINS) $(TEST_BINS)
	bench/run_benchmarks.sh $(BUILD)

tsan:
	$(TSAN_MAKE) test

asan:
	$(ASAN_MAKE) test

# The sanitizer builds skip nvcc, so their test lists lack the GPU-only suite.
check: test-bins
	$(TSAN_MAKE) test-bins
	$(ASAN_MAKE) test-bins
	@test/run_tests.sh $(TEST_BINS) \
	  $(filter-out %/test_device_gpu,$(subst $(BUILD)/,build/tsan/,$(TEST_BINS))) \
	  $(filter-out %/test_device_gpu,$(subst $(BUILD)/,build/asan/,$(TEST_BINS)))

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
