// SpoolWriter suite: the spool writer in file mode, driven directly. A buffer the writer finds
// half full or more (it has fallen behind that thread) goes out uncompressed so that the
// capture does not wait for LZ4; one it finds on time is delta-coded and compressed; both read
// back whole and export every event. A spool that cannot grow (the file size limit, as on a full
// disk) loses the blocks that do not fit, counted, and keeps every other block whole.
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "katrace/spool_format.h"
#include "plugin/capture/record_appender.h"
#include "plugin/capture/spool_writer.h"
#include "plugin/export/exporter.h"
#include "plugin/export/spool_reader.h"
#include "test/support/capture_records.h"

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
    exporting::SpoolFile file;
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
  AppendAtLeast(kBufferBytes / 2 + katrace_test::kCollRecordBytes);
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
  EXPECT_TRUE(r.clean_end);
}

}  // namespace
}  // namespace katrace
