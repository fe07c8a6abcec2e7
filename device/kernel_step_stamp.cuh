// What a simple-prims-style slice loop includes to stamp KernelSteps. Each role thread (one per
// direction and peer) owns a KernelStepStamper and calls, per slice:
//
//   stamper.WaitStart(step);                 // before waiting for the peer's credit or data
//   ...wait, sub-barrier...
//   stamper.TransferStart(step, size_bytes); // the copy begins: start record published
//   ...copy, barrier, post...
//   stamper.SliceEnd();                      // the slice is posted: stop record published
//
// Costs per kept step: three %globaltimer reads, one device-scope atomic (sequence reservation),
// five 8-byte stores to host-mapped memory and one system-scope fence.
//
// Off switches, both free at run time: KernelStepStamper<false> (e.g. a kernel template
// parameter, as NCCL instantiates genericOp twice) is an empty class whose calls compile to
// nothing; -DKATRACE_DEVICE_STAMPS=0 turns every KernelStepStamper<true> into that empty class.
#ifndef KATRACE_DEVICE_KERNEL_STEP_STAMP_CUH_
#define KATRACE_DEVICE_KERNEL_STEP_STAMP_CUH_

#include "device/globaltimer_clock.cuh"
#include "katrace/step_ring.h"
#include "katrace/step_stamper.h"

#ifndef KATRACE_DEVICE_STAMPS
#define KATRACE_DEVICE_STAMPS 1
#endif

namespace katrace {

template <bool kEnabled>
using KernelStepStamper = StepStamper<kEnabled && (KATRACE_DEVICE_STAMPS != 0), GlobaltimerClock>;

}  // namespace katrace

#endif  // KATRACE_DEVICE_KERNEL_STEP_STAMP_CUH_
