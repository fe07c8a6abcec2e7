// Host driver of the demo ring kernel; see demo_ring.h.
#include <cuda_runtime.h>
#include <string.h>

#include "device/demo_ring.h"
#include "device/demo_ring_kernel.cuh"

namespace katrace {
namespace {

bool Check(cudaError_t status, const char* what, std::string* error) {
  if (status == cudaSuccess) return true;
  *error = std::string(what) + ": " + cudaGetErrorString(status);
  return false;
}

// Element e of slice s that rank r sends on channel c.
__device__ uint4 Pattern(int rank, int channel, uint32_t slice, uint32_t elem) {
  return make_uint4(uint32_t(rank), uint32_t(channel), slice, elem);
}

__global__ void FillSource(uint4* src, int num_channels, uint32_t num_slices, uint32_t slice_elems,
                           size_t total) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total;
       i += size_t(gridDim.x) * blockDim.x) {
    const uint32_t elem = uint32_t(i % slice_elems);
    const uint32_t slice = uint32_t(i / slice_elems % num_slices);
    const size_t self = i / slice_elems / num_slices;
    src[i] = Pattern(int(self / num_channels), int(self % num_channels), slice, elem);
  }
}

__global__ void CountMismatches(const uint4* dst, int num_ranks, int num_channels,
                                uint32_t num_slices, uint32_t slice_elems, size_t total,
                                unsigned long long* mismatches) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total;
       i += size_t(gridDim.x) * blockDim.x) {
    const uint32_t elem = uint32_t(i % slice_elems);
    const uint32_t slice = uint32_t(i / slice_elems % num_slices);
    const size_t self = i / slice_elems / num_slices;
    const int rank = int(self / num_channels);
    const int prev = (rank + num_ranks - 1) % num_ranks;
    const uint4 want = Pattern(prev, int(self % num_channels), slice, elem);
    const uint4 got = dst[i];
    if (got.x != want.x || got.y != want.y || got.z != want.z || got.w != want.w) {
      atomicAdd(mismatches, 1ull);
    }
  }
}

constexpr int kHelperBlocks = 1024;
constexpr int kHelperThreads = 256;

}  // namespace

struct DemoRing::Buffers {
  uint4* src = nullptr;
  uint4* dst = nullptr;
  uint4* fifo = nullptr;
  uint64_t* counters = nullptr;  // fifo tails, fifo heads, ring reservation counters
  int* timed_out = nullptr;
  unsigned long long* mismatches = nullptr;
  void* rings_host = nullptr;
  void* rings_device = nullptr;
  size_t data_elems = 0;  // per buffer (src, dst)
  size_t num_rings = 0;

  ~Buffers() {
    cudaFree(src);
    cudaFree(dst);
    cudaFree(fifo);
    cudaFree(counters);
    cudaFree(timed_out);
    cudaFree(mismatches);
    if (rings_host != nullptr) cudaFreeHost(rings_host);
  }
};

bool DemoRing::GpuAvailable(std::string* why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    *why = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(status);
    return false;
  }
  if (count == 0) {
    *why = "cudaGetDeviceCount found no CUDA device";
    return false;
  }
  return true;
}

std::string DemoRing::GpuName() {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return "unknown GPU";
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major * 10 + prop.minor) + ")";
}

DemoRing::DemoRing(const DemoRingOptions& options) : options_(options) {}

DemoRing::~DemoRing() = default;

bool DemoRing::Init(std::string* error) {
  const DemoRingOptions& o = options_;
  if (o.num_ranks < 2 || o.num_channels < 1 || o.slice_bytes % sizeof(uint4) != 0 ||
      o.slice_bytes == 0 || o.slices_per_launch == 0 || o.threads_per_block < kDemoMinThreads) {
    *error = "invalid demo options";
    return false;
  }
  // Checked before any CUDA call: outside these limits the ring's index and lap arithmetic shifts
  // by 64 or more (undefined), or the stop word's sequence window no longer covers the ring.
  if (o.ring_depth_log2 < kStepRingMinDepthLog2 || o.ring_depth_log2 > kStepRingMaxDepthLog2) {
    *error = "ring_depth_log2 " + std::to_string(o.ring_depth_log2) + " is outside " +
             std::to_string(kStepRingMinDepthLog2) + ".." + std::to_string(kStepRingMaxDepthLog2);
    return false;
  }
  if (!Check(cudaSetDevice(0), "cudaSetDevice", error)) return false;
  int num_sms = 0;
  if (!Check(cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, 0),
             "cudaDeviceGetAttribute", error)) {
    return false;
  }
  // Every CTA spins on its neighbours, so all must be resident at once: one per SM is.
  const int grid = o.num_ranks * o.num_channels;
  if (grid > num_sms) {
    *error = "demo grid of " + std::to_string(grid) + " CTAs exceeds " + std::to_string(num_sms) +
             " SMs";
    return false;
  }

  buffers_ = std::make_unique<Buffers>();
  Buffers& b = *buffers_;
  const size_t slice_elems = o.slice_bytes / sizeof(uint4);
  b.num_rings = size_t(grid);
  b.data_elems = b.num_rings * o.slices_per_launch * slice_elems;
  const size_t fifo_elems = b.num_rings * kDemoFifoSlots * slice_elems;
  const size_t ring_bytes = StepRingBytes(o.ring_depth_log2) * b.num_rings;
  if (!Check(cudaMalloc(&b.src, b.data_elems * sizeof(uint4)), "cudaMalloc src", error) ||
      !Check(cudaMalloc(&b.dst, b.data_elems * sizeof(uint4)), "cudaMalloc dst", error) ||
      !Check(cudaMalloc(&b.fifo, fifo_elems * sizeof(uint4)), "cudaMalloc fifo", error) ||
      !Check(cudaMalloc(&b.counters, 3 * b.num_rings * sizeof(uint64_t)), "cudaMalloc counters",
             error) ||
      !Check(cudaMemset(b.counters, 0, 3 * b.num_rings * sizeof(uint64_t)), "cudaMemset", error) ||
      !Check(cudaMalloc(&b.timed_out, sizeof(int)), "cudaMalloc", error) ||
      !Check(cudaMemset(b.timed_out, 0, sizeof(int)), "cudaMemset", error) ||
      !Check(cudaMalloc(&b.mismatches, sizeof(unsigned long long)), "cudaMalloc", error) ||
      !Check(cudaHostAlloc(&b.rings_host, ring_bytes, cudaHostAllocMapped), "cudaHostAlloc rings",
             error) ||
      !Check(cudaHostGetDevicePointer(&b.rings_device, b.rings_host, 0), "cudaHostGetDevicePointer",
             error)) {
    return false;
  }
  memset(b.rings_host, 0, ring_bytes);
  FillSource<<<kHelperBlocks, kHelperThreads>>>(b.src, o.num_channels, o.slices_per_launch,
                                                uint32_t(slice_elems), b.data_elems);
  return Check(cudaGetLastError(), "fill launch", error) &&
         Check(cudaDeviceSynchronize(), "fill", error);
}

namespace {

DemoRingParams MakeParams(const DemoRingOptions& o, uint64_t* counters, size_t num_rings,
                          uint4* src, uint4* dst, uint4* fifo, void* rings_device, int* timed_out,
                          uint32_t launch) {
  DemoRingParams p;
  p.num_ranks = o.num_ranks;
  p.num_channels = o.num_channels;
  p.num_slices = o.slices_per_launch;
  p.slice_elems = o.slice_bytes / uint32_t(sizeof(uint4));
  p.slice_base = uint64_t(launch) * o.slices_per_launch;
  p.work_tag = launch;
  p.sample_every = o.sample_every;
  p.src = src;
  p.dst = dst;
  p.fifo = fifo;
  p.fifo_tail = counters;
  p.fifo_head = counters + num_rings;
  p.rings = MakeStepRingView(rings_device, counters + 2 * num_rings, o.ring_depth_log2);
  p.timeout_ns = o.timeout_ns;
  p.timed_out = timed_out;
  return p;
}

}  // namespace

bool DemoRing::Run(bool stamping, std::string* error) {
  if (buffers_ == nullptr) {
    *error = "DemoRing::Init was not called";
    return false;
  }
  Buffers& b = *buffers_;
  if (!Check(cudaMemset(b.dst, 0, b.data_elems * sizeof(uint4)), "cudaMemset dst", error)) {
    return false;
  }
  const DemoRingParams params = MakeParams(options_, b.counters, b.num_rings, b.src, b.dst, b.fifo,
                                           b.rings_device, b.timed_out, num_launches_);
  ++num_launches_;
  int timed_out = 0;
  if (!Check(LaunchDemoRing(params, stamping, options_.threads_per_block, 0), "demo launch",
             error) ||
      !Check(cudaDeviceSynchronize(), "demo kernel", error) ||
      !Check(cudaMemcpy(&timed_out, b.timed_out, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy",
             error)) {
    return false;
  }
  if (timed_out != 0) {
    *error = "demo kernel: a wait timed out (ring did not progress)";
    return false;
  }
  return true;
}

bool DemoRing::TimeLaunches(bool stamping, int launches, double* us_per_launch,
                            std::string* error) {
  if (buffers_ == nullptr || launches <= 0) {
    *error = "DemoRing::Init was not called, or no launches";
    return false;
  }
  Buffers& b = *buffers_;
  cudaEvent_t begin = nullptr;
  cudaEvent_t end = nullptr;
  bool ok = Check(cudaEventCreate(&begin), "cudaEventCreate", error) &&
            Check(cudaEventCreate(&end), "cudaEventCreate", error) &&
            Check(cudaEventRecord(begin, 0), "cudaEventRecord", error);
  for (int i = 0; ok && i < launches; ++i) {
    const DemoRingParams params = MakeParams(options_, b.counters, b.num_rings, b.src, b.dst,
                                             b.fifo, b.rings_device, b.timed_out, num_launches_);
    ++num_launches_;
    ok = Check(LaunchDemoRing(params, stamping, options_.threads_per_block, 0), "demo launch",
               error);
  }
  float ms = 0;
  int timed_out = 0;
  ok = ok && Check(cudaEventRecord(end, 0), "cudaEventRecord", error) &&
       Check(cudaEventSynchronize(end), "demo kernels", error) &&
       Check(cudaEventElapsedTime(&ms, begin, end), "cudaEventElapsedTime", error) &&
       Check(cudaMemcpy(&timed_out, b.timed_out, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy",
             error);
  if (begin != nullptr) cudaEventDestroy(begin);
  if (end != nullptr) cudaEventDestroy(end);
  if (!ok) return false;
  if (timed_out != 0) {
    *error = "demo kernel: a wait timed out (ring did not progress)";
    return false;
  }
  *us_per_launch = double(ms) * 1000.0 / launches;
  return true;
}

bool DemoRing::VerifyLastRun(std::string* error) {
  if (buffers_ == nullptr) {
    *error = "DemoRing::Init was not called";
    return false;
  }
  Buffers& b = *buffers_;
  unsigned long long mismatches = 0;
  if (!Check(cudaMemset(b.mismatches, 0, sizeof(mismatches)), "cudaMemset", error)) return false;
  CountMismatches<<<kHelperBlocks, kHelperThreads>>>(
      b.dst, options_.num_ranks, options_.num_channels, options_.slices_per_launch,
      options_.slice_bytes / uint32_t(sizeof(uint4)), b.data_elems, b.mismatches);
  if (!Check(cudaGetLastError(), "check launch", error) ||
      !Check(cudaMemcpy(&mismatches, b.mismatches, sizeof(mismatches), cudaMemcpyDeviceToHost),
             "cudaMemcpy", error)) {
    return false;
  }
  if (mismatches != 0) {
    *error = std::to_string(mismatches) + " of " + std::to_string(b.data_elems) +
             " 16-byte elements differ from what the previous rank sent";
    return false;
  }
  return true;
}

StepRingView DemoRing::HostRing(int rank, int channel) const {
  const size_t index = size_t(rank) * options_.num_channels + channel;
  return MakeStepRingView(static_cast<unsigned char*>(buffers_->rings_host) +
                              index * StepRingBytes(options_.ring_depth_log2),
                          nullptr, options_.ring_depth_log2);
}

uint32_t DemoRing::last_work_tag() const { return num_launches_ - 1; }

}  // namespace katrace
