// Host ticks to CLOCK_MONOTONIC ns, from the spool's Clock records (formula in
// katrace/spool_format.h). The common case (ticks already are monotonic ns) is the identity and
// costs nothing; otherwise a 32.32 fixed-point rate, so converting never divides. Garbage
// calibration (zero or absurd rates) degrades to an offset-only conversion instead of
// overflowing: every step is done in 128 bits and saturated.
#ifndef KATRACE_PLUGIN_EXPORT_HOST_CLOCK_H_
#define KATRACE_PLUGIN_EXPORT_HOST_CLOCK_H_

#include <stdint.h>

#include "katrace/spool_format.h"

namespace katrace {
namespace exporting {

class HostClock {
 public:
  // |count| Clock records; |first| and |last| are those with the smallest and largest ticks.
  void Init(int count, const spool::ClockBody& first, const spool::ClockBody& last) {
    identity_ = true;
    if (count == 0) return;
    t0_ = first.ticks;
    m0_ = first.monotonic_ns;
    uint64_t dt = last.ticks - first.ticks;
    uint64_t dm = last.monotonic_ns - first.monotonic_ns;
    mult_ = uint64_t{1} << 32;
    if (count >= 2 && last.ticks > first.ticks && last.monotonic_ns > first.monotonic_ns && dt != dm) {
      unsigned __int128 m = (static_cast<unsigned __int128>(dm) << 32) / dt;
      // Beyond 2^30 ns per tick (or a rate that rounds to 0) the calibration is not a clock.
      if (m > 0 && m < (static_cast<unsigned __int128>(1) << 62)) mult_ = static_cast<uint64_t>(m);
    }
    identity_ = mult_ == (uint64_t{1} << 32) && t0_ == m0_;
    rated_ = mult_ != (uint64_t{1} << 32);
  }

  bool identity() const { return identity_; }

  uint64_t Ns(uint64_t ticks) const {
    if (identity_) return ticks;
    __int128 d = static_cast<__int128>(ticks) - static_cast<__int128>(t0_);
    __int128 scaled = rated_ ? (d * static_cast<__int128>(mult_)) / (static_cast<__int128>(1) << 32) : d;
    __int128 ns = static_cast<__int128>(m0_) + scaled;
    if (ns < 0) return 0;
    if (ns > static_cast<__int128>(UINT64_MAX)) return UINT64_MAX;
    return static_cast<uint64_t>(ns);
  }

 private:
  bool identity_ = true;
  bool rated_ = false;
  uint64_t t0_ = 0;
  uint64_t m0_ = 0;
  uint64_t mult_ = uint64_t{1} << 32;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_HOST_CLOCK_H_
