// SpoolWriter suite: the spool writer in file mode, driven directly. A buffer the writer finds
// half full or more (it has fallen behind that thread) goes out uncompressed so that the
// capture does not wait for LZ4; one it finds on time is delta-coded and compressed; both read
// back whole and export every event. A spool that cannot grow (the file size limit, as on a full
// disk) loses the blocks that do not fit, counted, and keeps every other block whole.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "katrace/spool_format.h"
#include "plugin/capture/record_appender.h"
#include "plugin/capture/spool_file.h"
#include "plugin/capture/spool_writer.h"
#include "plugin/export/exporter.h"
#include "plugin/export/spool_reader.h"
#include "test/support/capture_records.h"
#include "test/support/scoped_env.h"

namespace katrace {
namespace {

constexpr uint64_t kBufferBytes = 64u << 10;

class SpoolWriterTest : public katrace_test::WriterTest {
 protected:
  // A writer whose thread is held in its periodic hook (between two passes) until Release():
  // a writer that has fallen behind. The calling thread's buffer holds a communicator.
  void StartHeldWriter() {
    SpoolWriterOptions options;
    options.buffer_bytes = kBufferBytes;
    options.compress = true;
    writer_ = std::make_unique<SpoolWriter>(options, [](spool::CountersBody*) {}, [this] {
      while (hold_.load()) {
        held_.store(true);
        usleep(1000);
      }
    });
    spool::ProcessBody process{};
    process.os_pid = getpid();
    std::string note, error;
    ASSERT_TRUE(writer_->Start(dir_ + "/run.json", process, "host", &note, &error)) << error;
    policy_.writer_running = writer_->running_flag();
    policy_.counters = &counters_;
    buffer_ = writer_->Acquire(static_cast<uint32_t>(syscall(SYS_gettid)));
    ASSERT_NE(buffer_, nullptr);
    ASSERT_TRUE(katrace_test::AppendCommRecord(buffer_, policy_));
    for (int i = 0; i < 500 && !held_.load(); ++i) usleep(1000);
    ASSERT_TRUE(held_.load());
  }

  // Appends collectives until |bytes| more are in the buffer; returns how many.
  uint64_t AppendAtLeast(uint64_t bytes) {
    uint64_t n = 0;
    while (n * katrace_test::kCollRecordBytes < bytes) Coll(buffer_, ++next_id_), ++n;
    return n;
  }

  // Lets the held writer go and waits until it has moved the block it found behind.
  void ReleaseAndWaitForTheRawBlock() {
    hold_.store(false);
    for (int i = 0; i < 2000 && writer_->uncompressed_blocks() == 0; ++i) usleep(1000);
    ASSERT_EQ(writer_->uncompressed_blocks(), 1u);
  }

  // Walks the closed spool's blocks, checking each one's header and CRC; counts the event
  // blocks (stream != 0) stored raw and compressed. False when a block is not whole or the
  // walk does not end exactly at the end of the file.
  bool CountBlocks(int* raw, int* lz4) {
    *raw = *lz4 = 0;
    exporting::SpoolReader file;
    std::string error;
    if (!file.Open(writer_->path(), &error)) return false;
    uint64_t offset = file.first_block_offset();
    exporting::BlockRef ref;
    exporting::ByteBuffer scratch, payload;
    while (file.ReadBlockHeader(offset, &ref, &error) == exporting::BlockStatus::kOk) {
      if (!file.LoadBlock(ref, true, &scratch, &payload, &error)) return false;
      if (ref.stream != 0) ++*((ref.flags & spool::kBlockLz4) ? lz4 : raw);
      // A compressed block is delta-coded first; a raw one is the records as they are.
      EXPECT_EQ((ref.flags & spool::kBlockDelta) != 0, (ref.flags & spool::kBlockLz4) != 0) << ref.flags;
      offset = ref.end();
    }
    return offset == file.size();
  }

  ExportReport Export() {
    ExportOptions eo;
    eo.summary = false;
    eo.progress = false;
    return ExportSpool(writer_->path(), eo);
  }

  CaptureCounters counters_;
  std::unique_ptr<SpoolWriter> writer_;
  ThreadBuffer* buffer_ = nullptr;
  std::atomic<bool> hold_{true}, held_{false};
  uint64_t next_id_ = 0;
};

TEST_F(SpoolWriterTest, ABufferFoundHalfFullGoesOutUncompressedAndEverythingReadsBack) {
  ASSERT_NO_FATAL_FAILURE(StartHeldWriter());
  uint64_t colls = AppendAtLeast(kBufferBytes / 2 + katrace_test::kCollRecordBytes);
  ASSERT_NO_FATAL_FAILURE(ReleaseAndWaitForTheRawBlock());
  EXPECT_GE(writer_->uncompressed_bytes(), kBufferBytes / 2);

  // On time: less than half the buffer (moved as it fills, or at close) is compressed.
  colls += AppendAtLeast(kBufferBytes * 3 / 8);
  writer_->Close();
  EXPECT_EQ(writer_->uncompressed_blocks(), 1u) << "only the block found behind";
  EXPECT_EQ(counters_.waits.load(), 0u);

  int raw = 0, lz4 = 0;
  EXPECT_TRUE(CountBlocks(&raw, &lz4));
  EXPECT_EQ(raw, 1);
  EXPECT_GE(lz4, 1);
  ExportReport r = Export();
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.events, colls) << r.message;
  EXPECT_TRUE(r.clean_end);
}

TEST_F(SpoolWriterTest, ABlockThatDoesNotFitIsCutOffAndEveryOtherBlockStaysWhole) {
  ASSERT_NO_FATAL_FAILURE(StartHeldWriter());
  const uint64_t lost = AppendAtLeast(kBufferBytes / 2 + katrace_test::kCollRecordBytes);
  // The raw block's header fits under the file size limit, its payload does not: the write is
  // torn mid-block, as on a disk that fills up.
  struct stat st;
  ASSERT_EQ(stat(writer_->path().c_str(), &st), 0);
  rlimit before;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &before), 0);
  rlimit limited = before;
  limited.rlim_cur = static_cast<rlim_t>(st.st_size) + 4096;
  struct sigaction ignore = {}, old_action = {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGXFSZ, &ignore, &old_action), 0);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  ReleaseAndWaitForTheRawBlock();
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &before), 0);
  ASSERT_EQ(sigaction(SIGXFSZ, &old_action, nullptr), 0);

  // The disk has room again: later blocks are written after the cut.
  const uint64_t later = AppendAtLeast(kBufferBytes * 3 / 8);
  writer_->Close();
  EXPECT_EQ(writer_->io_errors(), 1u) << "one failed block, counted";
  int raw = 0, lz4 = 0;
  EXPECT_TRUE(CountBlocks(&raw, &lz4)) << "every block in the file is whole";
  EXPECT_EQ(raw, 0) << "the torn block was cut off again";
  EXPECT_GE(lz4, 1);
  ExportReport r = Export();
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.events, later) << r.message;
  // Regression: the events of the failed block were in no count ("0 lost").
  EXPECT_EQ(r.dropped, lost) << "the Colls of the failed block, counted as lost";
  EXPECT_TRUE(r.clean_end);
}

// A spool whose header cannot be written (a full disk: here a file size limit of 0 bytes) is
// removed again, next to the trace and in $TMPDIR alike, and the error names both places and why:
// no empty spool is left saying nothing.
TEST_F(SpoolWriterTest, ASpoolWhoseHeaderCannotBeWrittenAnywhereLeavesNoFileAndSaysWhy) {
  ASSERT_EQ(mkdir((dir_ + "/tmp").c_str(), 0700), 0);
  katrace_test::ScopedEnv tmpdir("TMPDIR", dir_ + "/tmp");
  rlimit before;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &before), 0);
  rlimit limited = before;
  limited.rlim_cur = 0;
  struct sigaction ignore = {}, old_action = {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGXFSZ, &ignore, &old_action), 0);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  SpoolFile file;
  std::string note, error;
  const bool created = file.Create(dir_ + "/run.json", 4242, true, &note, &error);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &before), 0);
  ASSERT_EQ(sigaction(SIGXFSZ, &old_action, nullptr), 0);
  EXPECT_FALSE(created);
  EXPECT_EQ(error, "cannot create a spool next to '" + dir_ + "/run.json' (File too large) nor in '" + dir_ +
                       "/tmp' (File too large)");
  for (const std::string& d : {dir_, dir_ + "/tmp"}) {
    DIR* listing = opendir(d.c_str());
    ASSERT_NE(listing, nullptr);
    for (dirent* e; (e = readdir(listing)) != nullptr;) {
      EXPECT_EQ(std::string(e->d_name).find(".kspool"), std::string::npos) << d << "/" << e->d_name;
    }
    closedir(listing);
  }
}

// Past its first |keep_cached| bytes a spool gives its pages back, a chunk behind the one being
// written; the head and the last chunks stay in memory, and every block reads back whole.
TEST_F(SpoolWriterTest, ALongSpoolGivesBackThePagesOfChunksLongWritten) {
  struct statfs fs;
  ASSERT_EQ(statfs(dir_.c_str(), &fs), 0);
  if (fs.f_type == 0x01021994) GTEST_SKIP() << "tmpfs keeps its pages in memory whatever the advice";
  // Records to fill the blocks with: one buffer's worth of collectives, written again and again.
  ThreadBuffer records(1, kBufferBytes);
  policy_.counters = &counters_;
  while (records.Pending() < kBufferBytes / 2) Coll(&records, ++next_id_);
  std::vector<uint8_t> raw(kBufferBytes);
  raw.resize(records.Take(raw.data()));

  constexpr uint64_t kKeep = 256u << 10, kChunk = 128u << 10;
  SpoolFile spool(kKeep, kChunk);
  std::string note, error;
  ASSERT_TRUE(spool.Create(dir_ + "/long.json", getpid(), false, &note, &error)) << error;
  while (spool.bytes() < (4u << 20)) spool.WriteBlock(1, 1, raw.data(), static_cast<uint32_t>(raw.size()), false);
  const uint64_t size = spool.bytes();
  const uint64_t blocks = spool.blocks();
  spool.Close();
  EXPECT_EQ(spool.io_errors(), 0u);

  // Which pages are in memory (the file's, not this mapping's: mincore reports the page cache).
  int fd = open(spool.path().c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED);
  const long page = sysconf(_SC_PAGESIZE);
  std::vector<unsigned char> resident((size + page - 1) / page);
  ASSERT_EQ(mincore(map, size, resident.data()), 0);
  uint64_t head_resident = 0, dropped_resident = 0, dropped_pages = 0;
  for (size_t i = 0; i < resident.size(); ++i) {
    const uint64_t at = i * page;
    if (at + page <= kKeep) head_resident += resident[i] & 1;
    // Given back: from keep_cached to two chunks before the end (the last chunk written back
    // and the one being written stay).
    if (at >= kKeep && at + page + 3 * kChunk <= size) {
      ++dropped_pages;
      dropped_resident += resident[i] & 1;
    }
  }
  munmap(map, size);
  close(fd);
  EXPECT_EQ(head_resident, kKeep / page) << "the head stays in memory";
  EXPECT_GT(dropped_pages, 0u);
  EXPECT_EQ(dropped_resident, 0u) << "of " << dropped_pages << " pages that were given back";

  // Every block is whole, and the walk ends at the end of the file.
  exporting::SpoolReader reader;
  ASSERT_TRUE(reader.Open(spool.path(), &error)) << error;
  uint64_t offset = reader.first_block_offset(), read = 0;
  exporting::BlockRef ref;
  exporting::ByteBuffer scratch, payload;
  while (reader.ReadBlockHeader(offset, &ref, &error) == exporting::BlockStatus::kOk) {
    ASSERT_TRUE(reader.LoadBlock(ref, true, &scratch, &payload, &error)) << error;
    EXPECT_EQ(payload.size(), raw.size());
    offset = ref.end();
    ++read;
  }
  EXPECT_EQ(offset, size);
  EXPECT_EQ(read, blocks);
}

}  // namespace
}  // namespace katrace
