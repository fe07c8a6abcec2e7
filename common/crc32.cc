#include "common/crc32.h"

#include <zlib.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace katrace {

uint32_t Crc32Zlib(uint32_t crc, const uint8_t* data, uint64_t n) {
  // zlib takes at most 4 GiB - 1 per call.
  while (n > 0) {
    const uInt chunk = n > (1u << 30) ? (1u << 30) : static_cast<uInt>(n);
    crc = static_cast<uint32_t>(crc32(crc, data, chunk));
    data += chunk;
    n -= chunk;
  }
  return crc;
}

#if defined(__x86_64__)
namespace {

// The method (folding with carry-less multiplies, as Intel's paper on PCLMULQDQ describes it),
// in the terms of this file. A message is a polynomial over GF(2) whose first bit (bit 0 of its
// first byte) is the highest term; zlib's CRC register, started at 0, ends as M(x)·x^32 mod P,
// bit-reflected. A 16-byte chunk loaded little-endian holds in bit t the coefficient of
// x^(127 - t) relative to its own end, so its low 64-bit lane is A·x^64 and its high lane B, with
// each lane's bit j the coefficient of x^(63 - j). Moving the chunk forward over d bits of
// message keeps M mod P when it is replaced by A·(x^(64+d) mod P) + B·(x^d mod P): a chunk of
// degree below 96, which the processor's 64 x 64 carry-less multiply gives directly, less the
// one position its product of two such lanes is shifted by (hence the constants' x^-1).
// Folded down to one chunk F at the end of the message, M ≡ F (mod P): the CRC of the message is
// the CRC of F's 16 bytes, which zlib computes.

// x^n mod P, P = x^32 + 0x04C11DB7, in the usual bit order (bit i: x^i).
constexpr uint32_t XPowModP(uint32_t n) {
  uint64_t r = 1;
  for (uint32_t i = 0; i < n; ++i) {
    r <<= 1;
    if ((r >> 32) & 1) r ^= 0x104C11DB7ull;
  }
  return static_cast<uint32_t>(r);
}

// |q| (degree below 32) in a lane's bit order: bit j holds the coefficient of x^(63 - j).
constexpr uint64_t Lane(uint32_t q) {
  uint64_t v = 0;
  for (int i = 0; i < 32; ++i) {
    if ((q >> i) & 1) v |= 1ull << (63 - i);
  }
  return v;
}

// Over 4 chunks (the four accumulators each jump the other three) and over one.
constexpr uint64_t kFold4Low = Lane(XPowModP(4 * 128 + 64 - 1));
constexpr uint64_t kFold4High = Lane(XPowModP(4 * 128 - 1));
constexpr uint64_t kFold1Low = Lane(XPowModP(128 + 64 - 1));
constexpr uint64_t kFold1High = Lane(XPowModP(128 - 1));

__attribute__((target("pclmul,sse2"))) inline __m128i Fold(__m128i chunk, __m128i constants, __m128i next) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(chunk, constants, 0x00),
                                     _mm_clmulepi64_si128(chunk, constants, 0x11)),
                       next);
}

__attribute__((target("pclmul,sse2"))) inline __m128i Load(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// |n|: at least 64, a multiple of 16.
__attribute__((target("pclmul,sse2"))) uint32_t Crc32Folded(uint32_t crc, const uint8_t* p, uint64_t n) {
  const __m128i by4 = _mm_set_epi64x(static_cast<long long>(kFold4High), static_cast<long long>(kFold4Low));
  const __m128i by1 = _mm_set_epi64x(static_cast<long long>(kFold1High), static_cast<long long>(kFold1Low));
  // zlib starts its register at ~crc: the same as a register at 0 with ~crc added to the first
  // four bytes.
  __m128i x0 = _mm_xor_si128(Load(p), _mm_cvtsi32_si128(static_cast<int>(~crc)));
  __m128i x1 = Load(p + 16), x2 = Load(p + 32), x3 = Load(p + 48);
  for (p += 64, n -= 64; n >= 64; p += 64, n -= 64) {
    x0 = Fold(x0, by4, Load(p));
    x1 = Fold(x1, by4, Load(p + 16));
    x2 = Fold(x2, by4, Load(p + 32));
    x3 = Fold(x3, by4, Load(p + 48));
  }
  __m128i x = Fold(Fold(Fold(x0, by1, x1), by1, x2), by1, x3);
  for (; n >= 16; p += 16, n -= 16) x = Fold(x, by1, Load(p));
  alignas(16) uint8_t last[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(last), x);
  // The register of F from 0, inverted as zlib returns it: zlib's CRC of F started from ~0.
  return Crc32Zlib(0xFFFFFFFFu, last, 16);
}

}  // namespace
#endif

uint32_t Crc32(uint32_t crc, const uint8_t* data, uint64_t n) {
#if defined(__x86_64__)
  if (n >= 64 && __builtin_cpu_supports("pclmul")) {
    const uint64_t folded = n & ~static_cast<uint64_t>(15);
    crc = Crc32Folded(crc, data, folded);
    data += folded;
    n -= folded;
  }
#endif
  return Crc32Zlib(crc, data, n);
}

}  // namespace katrace
