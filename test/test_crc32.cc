// The fast CRC-32 gives zlib's value for every length, alignment and starting CRC, and chains as
// zlib's does: the spool's checksums must not change with it.
#include <stdint.h>
#include <zlib.h>

#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "common/crc32.h"

namespace katrace {
namespace {

uint32_t ZlibCrc(uint32_t crc, const uint8_t* p, size_t n) {
  return static_cast<uint32_t>(crc32(crc, p, static_cast<uInt>(n)));
}

TEST(Crc32, EqualsZlibForEveryLengthAlignmentAndStart) {
  std::mt19937_64 rng(7);
  std::vector<uint8_t> bytes(4096 + 64);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  for (size_t n = 0; n <= 1100; ++n) {
    for (size_t offset : {0, 1, 7, 13}) {
      const uint32_t start = n % 3 == 0 ? 0 : static_cast<uint32_t>(rng());
      ASSERT_EQ(Crc32(start, bytes.data() + offset, n), ZlibCrc(start, bytes.data() + offset, n))
          << n << " bytes at offset " << offset << " from " << start;
    }
  }
  EXPECT_EQ(Crc32(0, bytes.data(), 4096), ZlibCrc(0, bytes.data(), 4096));
}

TEST(Crc32, LargeBuffersAndChainsEqualZlib) {
  std::mt19937_64 rng(11);
  std::vector<uint8_t> bytes((1u << 22) + 5);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  const uint32_t whole = ZlibCrc(0, bytes.data(), bytes.size());
  EXPECT_EQ(Crc32(0, bytes.data(), bytes.size()), whole);
  uint32_t chained = 0;
  for (size_t at = 0; at < bytes.size();) {
    const size_t n = std::min<size_t>(bytes.size() - at, 1 + rng() % 100000);
    chained = Crc32(chained, bytes.data() + at, n);
    at += n;
  }
  EXPECT_EQ(chained, whole);
  // Runs of one value (zeros, ones) stress the folding with products that cancel.
  std::vector<uint8_t> zeros(100000, 0), ones(100000, 0xFF);
  EXPECT_EQ(Crc32(0, zeros.data(), zeros.size()), ZlibCrc(0, zeros.data(), zeros.size()));
  EXPECT_EQ(Crc32(0x12345678u, ones.data(), ones.size()), ZlibCrc(0x12345678u, ones.data(), ones.size()));
  EXPECT_EQ(Crc32Zlib(5, bytes.data(), 1000), ZlibCrc(5, bytes.data(), 1000));
}

}  // namespace
}  // namespace katrace
