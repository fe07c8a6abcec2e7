# device: the KernelStep stamping headers, a demo slice-pipelined ring kernel and its host driver
# (objects under $(BUILD)/obj/device), and $(BUILD)/device/gpu_bench. nvcc compiles for sm_80 and
# sm_90 with warnings as errors, so a host-only edit to the shared ring headers cannot silently
# break device code. Skipped when NVCC_SKIP=1 (sanitizer builds) or when there is no CUDA.
# (NVCC_FOUND, from the top-level Makefile, is the nvcc that is really there and can build it;
# the top-level Makefile says why when there is none.)
DEVICE_BUILD := $(if $(filter 1,$(NVCC_SKIP)),,$(if $(NVCC_FOUND),1))

ifeq ($(DEVICE_BUILD),1)
NVCC_GENCODE := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90
NVCCFLAGS := -std=c++17 $(OPT) $(NVCC_GENCODE) -Werror all-warnings \
             -Xcompiler -Wall,-Wextra,-Werror,-fPIC
# Static runtime: the binaries need only the driver where they run. CUDA_LIBDIR (top-level
# Makefile) is where it really is: the toolkit's lib64, its targets/<arch>/lib, or the compiler's
# own library path (Debian's nvidia-cuda-toolkit).
CUDA_LIBS := -L$(CUDA_LIBDIR) -lcudart_static -ldl -lrt -pthread

DEVICE_CU_SRCS := $(wildcard device/*.cu)
DEVICE_OBJS := $(DEVICE_CU_SRCS:%.cu=$(BUILD)/obj/%.cu.o)

$(BUILD)/obj/%.cu.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC_FOUND) -Iinclude -I. -MMD -MP $(NVCCFLAGS) -c $< -o $@

GPU_BENCH := $(BUILD)/device/gpu_bench
$(BUILD)/obj/device/gpu_bench.o: CPPFLAGS += $(STEP_RING_CPPFLAGS)
$(GPU_BENCH): $(BUILD)/obj/device/gpu_bench.o $(DEVICE_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS)

ALL_TARGETS += $(DEVICE_OBJS) $(GPU_BENCH)
endif
