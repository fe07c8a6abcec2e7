// CRC-32 as zlib computes it (reflected polynomial 0x04C11DB7, initial and final inversion;
// Crc32(Crc32(0, a), b) == Crc32(0, a + b)), at the speed of the processor's carry-less multiply
// where it has one. The spool's blocks carry this checksum, and at the spool writer's rate zlib's
// table-driven crc32 was the largest single cost of the writer thread (BENCHMARKS.md); the values
// are zlib's, so spools written before read the same. Async-signal-safe: no allocation, no lock,
// no lazy initialization (the crash dump uses it).
#ifndef KATRACE_COMMON_CRC32_H_
#define KATRACE_COMMON_CRC32_H_

#include <stdint.h>

namespace katrace {

// The CRC of |n| bytes, continuing from |crc| (0 to start).
uint32_t Crc32(uint32_t crc, const uint8_t* data, uint64_t n);

// zlib's own, for comparison (tests, benchmarks) and for short or unaligned runs.
uint32_t Crc32Zlib(uint32_t crc, const uint8_t* data, uint64_t n);

}  // namespace katrace

#endif  // KATRACE_COMMON_CRC32_H_
