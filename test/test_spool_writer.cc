// SpoolWriter suite: the spool writer in file mode, driven directly. A buffer the writer finds
// half full or more (it has fallen behind that thread) goes out uncompressed so that the
// capture does not wait for LZ4; one it finds on time is compressed; both read back whole and
// export every event.
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include <gtest/gtest.h>

#include "katrace/event_kinds.h"
#include "katrace/spool_format.h"
#include "plugin/capture/host_clock.h"
#include "plugin/capture/record_appender.h"
#include "plugin/capture/spool_writer.h"
#include "plugin/export/exporter.h"
#include "plugin/export/spool_reader.h"
#include "test/support/capture_records.h"

namespace katrace {
namespace {

class SpoolWriterTest : public katrace_test::WriterTest {
 protected:
  CaptureCounters counters_;
};

TEST_F(SpoolWriterTest, ABufferFoundHalfFullGoesOutUncompressedAndEverythingReadsBack) {
  SpoolWriterOptions options;
  options.buffer_bytes = 64u << 10;
  options.compress = true;
  // The periodic hook runs on the writer thread between its passes: holding it there is a writer
  // that has fallen behind.
  std::atomic<bool> hold_writer{true};
  std::atomic<bool> writer_held{false};
  SpoolWriter writer(options, [](spool::CountersBody*) {}, [&] {
    while (hold_writer.load()) {
      writer_held.store(true);
      usleep(1000);
    }
  });
  spool::ProcessBody process{};
  process.os_pid = getpid();
  std::string note, error;
  ASSERT_TRUE(writer.Start(dir_ + "/run.json", process, "host", &note, &error)) << error;
  policy_.writer_running = writer.running_flag();
  policy_.counters = &counters_;
  ThreadBuffer* b = writer.Acquire(static_cast<uint32_t>(syscall(SYS_gettid)));
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(katrace_test::AppendCommRecord(b, policy_));
  for (int i = 0; i < 500 && !writer_held.load(); ++i) usleep(1000);
  ASSERT_TRUE(writer_held.load());

  // Behind: more than half the buffer captured while the writer is held.
  uint64_t id = 0;
  while (id * katrace_test::kCollRecordBytes < options.buffer_bytes / 2 + katrace_test::kCollRecordBytes) Coll(b, ++id);
  hold_writer.store(false);
  for (int i = 0; i < 2000 && writer.uncompressed_blocks() == 0; ++i) usleep(1000);
  EXPECT_EQ(writer.uncompressed_blocks(), 1u);
  EXPECT_GE(writer.uncompressed_bytes(), options.buffer_bytes / 2);

  // On time: less than half the buffer (moved as it fills, or at close) is compressed.
  const uint64_t behind = id;
  while ((id - behind) * katrace_test::kCollRecordBytes < options.buffer_bytes * 3 / 8) Coll(b, ++id);
  writer.Close();
  EXPECT_EQ(writer.uncompressed_blocks(), 1u) << "only the block found behind";
  EXPECT_EQ(counters_.waits.load(), 0u);

  // The file holds both kinds of block, each whole (header and CRC checked on the way).
  exporting::SpoolFile file;
  ASSERT_TRUE(file.Open(writer.path(), &error)) << error;
  int raw_event_blocks = 0, lz4_blocks = 0;
  uint64_t offset = file.first_block_offset();
  exporting::BlockRef ref;
  exporting::ByteBuffer scratch, payload;
  std::string reason;
  while (file.ReadBlockHeader(offset, &ref, &reason) == exporting::BlockStatus::kOk) {
    ASSERT_TRUE(file.LoadBlock(ref, true, &scratch, &payload, &reason)) << reason;
    if (ref.stream != 0) {
      if (ref.flags & spool::kBlockLz4) {
        ++lz4_blocks;
      } else {
        ++raw_event_blocks;
      }
    }
    offset = ref.end();
  }
  EXPECT_EQ(offset, file.size()) << reason;
  EXPECT_EQ(raw_event_blocks, 1);
  EXPECT_GE(lz4_blocks, 1);

  ExportOptions eo;
  eo.summary = false;
  eo.progress = false;
  ExportReport r = ExportSpool(writer.path(), eo);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.events, id) << r.message;
  EXPECT_TRUE(r.clean_end);
}

}  // namespace
}  // namespace katrace
