// %globaltimer resolution measurement; see globaltimer_tick.h.
#include <cuda_runtime.h>

#include "device/globaltimer_clock.cuh"
#include "device/globaltimer_tick.h"

namespace katrace {
namespace {

constexpr int kChanges = 64;
constexpr uint64_t kMaxSpins = uint64_t{1} << 26;

__global__ void TickKernel(uint64_t* deltas, int* num_changes) {
  uint64_t last = GlobaltimerClock::NowNs();
  int changes = 0;
  for (uint64_t spins = 0; spins < kMaxSpins && changes < kChanges; ++spins) {
    const uint64_t now = GlobaltimerClock::NowNs();
    if (now != last) {
      deltas[changes++] = now - last;
      last = now;
    }
  }
  *num_changes = changes;
}

bool Check(cudaError_t status, const char* what, std::string* error) {
  if (status == cudaSuccess) return true;
  *error = std::string(what) + ": " + cudaGetErrorString(status);
  return false;
}

}  // namespace

bool MeasureGlobaltimerTick(GlobaltimerTick* tick, std::string* error) {
  uint64_t* deltas = nullptr;
  int* num_changes = nullptr;
  if (!Check(cudaMalloc(&deltas, kChanges * sizeof(uint64_t)), "cudaMalloc", error)) return false;
  bool ok = Check(cudaMalloc(&num_changes, sizeof(int)), "cudaMalloc", error);
  uint64_t host_deltas[kChanges] = {};
  int changes = 0;
  if (ok) {
    TickKernel<<<1, 1>>>(deltas, num_changes);
    ok = Check(cudaGetLastError(), "tick kernel launch", error) &&
         Check(cudaMemcpy(&changes, num_changes, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy",
               error) &&
         Check(cudaMemcpy(host_deltas, deltas, sizeof(host_deltas), cudaMemcpyDeviceToHost),
               "cudaMemcpy", error);
  }
  cudaFree(deltas);
  cudaFree(num_changes);
  if (!ok) return false;
  *tick = GlobaltimerTick();
  tick->num_changes = changes;
  uint64_t sum = 0;
  for (int i = 0; i < changes; ++i) {
    sum += host_deltas[i];
    if (tick->min_ns == 0 || host_deltas[i] < tick->min_ns) tick->min_ns = host_deltas[i];
  }
  if (changes > 0) tick->mean_ns = sum / uint64_t(changes);
  return true;
}

}  // namespace katrace
