// The trace file's writer: bytes arrive whole and in order however the writes are cut, the bulk
// of a big file bypasses the page cache where the file system allows it, and errors say so.
#include "common/file_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "test/support/subprocess.h"

namespace katrace {
namespace {

std::string TempPath(const char* name) { return ::testing::TempDir() + "/" + name + "-" + std::to_string(getpid()); }

// Whether the file system under |path| takes O_DIRECT at all (tmpfs before Linux 6.6 does not).
bool TakesODirect(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  close(fd);
  unlink(path.c_str());
  return true;
}

// Bytes of every value, cut into pieces of odd sizes, some larger than the staging buffer.
std::string WriteInOddPieces(FileWriter* w, size_t total) {
  std::string expected;
  expected.reserve(total);
  for (size_t i = 0; expected.size() < total; ++i) {
    const size_t n = std::min(total - expected.size(), (i * 7919) % 20000 + 1);
    std::string piece(n, '\0');
    for (size_t k = 0; k < n; ++k) piece[k] = static_cast<char>((expected.size() + k) * 131 + i);
    EXPECT_TRUE(w->Write(piece.data(), piece.size()));
    expected += piece;
  }
  return expected;
}

TEST(ExportFileWriter, ABigFileArrivesWholeAndItsBulkBypassesThePageCache) {
  const std::string path = TempPath("katrace-file-writer-big.bin");
  const bool direct_possible = TakesODirect(path);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  // 8 KiB staged, direct after 16 KiB: 1 MiB and an unaligned tail cross every case.
  FileWriter w(fd, true, 8192, 16384);
  const std::string expected = WriteInOddPieces(&w, (1u << 20) + 1234);
  ASSERT_TRUE(w.Close());
  EXPECT_EQ(w.wrote_direct(), direct_possible) << "O_DIRECT is taken by this file system: " << direct_possible;
  const std::string got = katrace_test::ReadWholeFile(path);
  EXPECT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected) << "the bytes differ";
  unlink(path.c_str());
}

TEST(ExportFileWriter, ASmallFileAndOneNotAllowedToBypassKeepThePageCache) {
  for (bool may_bypass : {true, false}) {
    const std::string path = TempPath(may_bypass ? "katrace-file-writer-small.bin" : "katrace-file-writer-cached.bin");
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    // Small: under direct_after. Not allowed: big, but told to keep the cache (a device, a pipe).
    FileWriter w(fd, may_bypass, 8192, may_bypass ? (1u << 20) : 16384);
    const std::string expected = WriteInOddPieces(&w, may_bypass ? 100000 : 300000);
    ASSERT_TRUE(w.Close());
    EXPECT_FALSE(w.wrote_direct());
    EXPECT_TRUE(katrace_test::ReadWholeFile(path) == expected) << "the bytes differ";
    unlink(path.c_str());
  }
}

TEST(ExportFileWriter, AFullDiskFailsTheWriteAndTheClose) {
  int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (fd < 0) GTEST_SKIP() << "no /dev/full on this machine";
  FileWriter w(fd, false, 8192, 16384);
  std::string piece(5000, 'x');
  EXPECT_TRUE(w.Write(piece.data(), piece.size())) << "staged, not yet written";
  errno = 0;
  EXPECT_FALSE(w.Write(piece.data(), piece.size())) << "the staging buffer filled and its write failed";
  EXPECT_EQ(errno, ENOSPC);
  EXPECT_FALSE(w.Write(piece.data(), 1)) << "a failed writer writes nothing more";
  EXPECT_FALSE(w.Close());
}

TEST(ExportFileWriter, ACloseWithSomethingStagedReportsItsError) {
  int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (fd < 0) GTEST_SKIP() << "no /dev/full on this machine";
  FileWriter w(fd, false, 8192, 16384);
  ASSERT_TRUE(w.Write("abc", 3));
  errno = 0;
  EXPECT_FALSE(w.Close());
  EXPECT_EQ(errno, ENOSPC);
}

}  // namespace
}  // namespace katrace
