// The demo ring kernel; see demo_ring_kernel.cuh. One loop iteration is one slice, in simple
// prims' order: role threads wait (credit, data), barrier, everyone copies, barrier, role threads
// post. The receive of slice i-1 shares an iteration with the send of slice i, so every wait is on
// a slice the neighbour could already finish: the ring cannot deadlock.
#include <cuda/atomic>

#include "device/demo_ring_kernel.cuh"
#include "device/kernel_step_stamp.cuh"

namespace katrace {
namespace {

using DeviceCounter = cuda::atomic_ref<uint64_t, cuda::thread_scope_device>;

// Spins until *counter >= target; false after timeout_ns.
__device__ bool WaitAtLeast(uint64_t* counter, uint64_t target, uint64_t timeout_ns) {
  DeviceCounter ref(*counter);
  if (ref.load(cuda::std::memory_order_acquire) >= target) return true;
  const uint64_t begin_ns = GlobaltimerClock::NowNs();
  for (uint32_t spins = 1;; ++spins) {
    if (ref.load(cuda::std::memory_order_acquire) >= target) return true;
    if (spins % 1024 == 0 && GlobaltimerClock::NowNs() - begin_ns > timeout_ns) return false;
    __nanosleep(32);
  }
}

__device__ void Post(uint64_t* counter, uint64_t value) {
  // Release at device scope: the slice's copies (ordered before this thread by the barrier) are
  // visible to the peer CTA before the counter is.
  DeviceCounter(*counter).store(value, cuda::std::memory_order_release);
}

__device__ void CopySlice(const uint4* __restrict__ from, uint4* __restrict__ to, uint32_t elems) {
  for (uint32_t e = threadIdx.x; e < elems; e += blockDim.x) to[e] = from[e];
}

template <bool kStamp>
__global__ void DemoRingKernel(DemoRingParams p) {
  const int rank = int(blockIdx.x) / p.num_channels;
  const int channel = int(blockIdx.x) % p.num_channels;
  const int next = (rank + 1) % p.num_ranks;
  const int prev = (rank + p.num_ranks - 1) % p.num_ranks;
  const size_t self = size_t(rank) * p.num_channels + channel;
  const size_t to = size_t(next) * p.num_channels + channel;
  const size_t slice_stride = p.slice_elems;
  const uint4* my_src = p.src + self * p.num_slices * slice_stride;
  uint4* my_dst = p.dst + self * p.num_slices * slice_stride;
  const uint4* my_fifo = p.fifo + self * kDemoFifoSlots * slice_stride;
  uint4* next_fifo = p.fifo + to * kDemoFifoSlots * slice_stride;

  const StepRingView ring = MakeStepRingView(
      reinterpret_cast<unsigned char*>(p.rings.starts) + self * StepRingBytes(p.rings.depth_log2),
      p.rings.next_seq + self, p.rings.depth_log2);
  KernelStepStamper<kStamp> send_stamper(ring, p.work_tag, next, true, p.sample_every);
  KernelStepStamper<kStamp> recv_stamper(ring, p.work_tag, prev, false, p.sample_every);
  const uint32_t slice_bytes = p.slice_elems * uint32_t(sizeof(uint4));

  __shared__ int timed_out;
  if (threadIdx.x == 0) timed_out = 0;
  __syncthreads();

  for (uint32_t i = 0; i <= p.num_slices; ++i) {
    const bool sends = i < p.num_slices;
    const bool receives = i > 0;
    const uint64_t send_slice = p.slice_base + i;
    const uint64_t recv_slice = send_slice - 1;

    if (threadIdx.x == kDemoRecvThread && receives) {
      recv_stamper.WaitStart(i - 1);
      if (!WaitAtLeast(&p.fifo_tail[self], recv_slice + 1, p.timeout_ns)) timed_out = 1;
    }
    if (threadIdx.x == kDemoSendThread && sends) {
      send_stamper.WaitStart(i);
      // The next rank must have consumed the slice that last used this FIFO slot.
      if (send_slice >= kDemoFifoSlots &&
          !WaitAtLeast(&p.fifo_head[to], send_slice + 1 - kDemoFifoSlots, p.timeout_ns)) {
        timed_out = 1;
      }
    }
    __syncthreads();
    if (timed_out) {
      if (threadIdx.x == 0) atomicExch(p.timed_out, 1);
      return;
    }
    if (threadIdx.x == kDemoRecvThread && receives) recv_stamper.TransferStart(i - 1, slice_bytes);
    if (threadIdx.x == kDemoSendThread && sends) send_stamper.TransferStart(i, slice_bytes);
    if (receives) {
      CopySlice(my_fifo + (recv_slice % kDemoFifoSlots) * slice_stride,
                my_dst + size_t(i - 1) * slice_stride, p.slice_elems);
    }
    if (sends) {
      CopySlice(my_src + size_t(i) * slice_stride,
                next_fifo + (send_slice % kDemoFifoSlots) * slice_stride, p.slice_elems);
    }
    __syncthreads();
    if (threadIdx.x == kDemoRecvThread && receives) {
      Post(&p.fifo_head[self], recv_slice + 1);
      recv_stamper.SliceEnd();
    }
    if (threadIdx.x == kDemoSendThread && sends) {
      __threadfence();
      Post(&p.fifo_tail[to], send_slice + 1);
      send_stamper.SliceEnd();
    }
  }
}

}  // namespace

cudaError_t LaunchDemoRing(const DemoRingParams& params, bool stamping, int threads_per_block,
                           cudaStream_t stream) {
  if (threads_per_block < kDemoMinThreads) return cudaErrorInvalidValue;
  const dim3 grid(unsigned(params.num_ranks * params.num_channels));
  if (stamping) {
    DemoRingKernel<true><<<grid, threads_per_block, 0, stream>>>(params);
  } else {
    DemoRingKernel<false><<<grid, threads_per_block, 0, stream>>>(params);
  }
  return cudaGetLastError();
}

}  // namespace katrace
