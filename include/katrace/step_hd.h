// Function qualifiers for code shared by nvcc (device and host) and g++ (host only): the KernelStep
// ring protocol and stamper. Outside CUDA compilation the CUDA qualifiers vanish.
#ifndef KATRACE_STEP_HD_H_
#define KATRACE_STEP_HD_H_

#if defined(__CUDACC__)
#ifndef KATRACE_HD
#define KATRACE_HD __host__ __device__
#endif
#ifndef KATRACE_HD_INLINE
#define KATRACE_HD_INLINE __host__ __device__ __forceinline__
#endif
#else
#ifndef KATRACE_HD
#define KATRACE_HD
#endif
#ifndef KATRACE_HD_INLINE
#define KATRACE_HD_INLINE inline __attribute__((always_inline))
#endif
#endif

#endif  // KATRACE_STEP_HD_H_
