// Records as the capture writes them, and a fixture with a scratch directory, for the suites that
// drive the spool writer directly.
#ifndef KATRACE_TEST_SUPPORT_CAPTURE_RECORDS_H_
#define KATRACE_TEST_SUPPORT_CAPTURE_RECORDS_H_

#include <stdint.h>
#include <stdlib.h>

#include <string>

#include <gtest/gtest.h>

#include "katrace/event_kinds.h"
#include "katrace/spool_format.h"
#include "plugin/capture/host_clock.h"
#include "plugin/capture/record_appender.h"

namespace katrace_test {

// Bytes of records one AppendCollRecords call appends.
constexpr uint64_t kCollRecordBytes =
    katrace::spool::RecordSize(sizeof(katrace::StartRecord<katrace::spool::CollFields>)) +
    katrace::spool::RecordSize(sizeof(katrace::spool::StopBody));

// A Coll's start and stop with id (and sequence number) |id|, timed now, in communicator slot 1;
// false when the policy dropped either record.
inline bool AppendCollRecords(katrace::ThreadBuffer* b, const katrace::AppendPolicy& policy, uint64_t id) {
  namespace spool = katrace::spool;
  katrace::StartRecord<spool::CollFields> r{};
  r.start = {id, 0, katrace::NowTicks()};
  r.fields.seq = id;
  r.fields.count = 16;
  const int kind = static_cast<int>(katrace::Kind::kColl);
  const bool started = katrace::AppendRecord(b, policy, spool::RecordType::kStart, kind, 1, 0, r);
  const spool::StopBody stop{id, katrace::NowTicks()};
  return katrace::AppendRecord(b, policy, spool::RecordType::kStop, kind, 1, 0, stop) && started;
}

// A one-rank communicator "world" in slot 1, which the Coll records above belong to.
inline bool AppendCommRecord(katrace::ThreadBuffer* b, const katrace::AppendPolicy& policy) {
  katrace::spool::CommBody comm{};
  comm.comm_hash = 0xc0;
  comm.ticks = katrace::NowTicks();
  comm.nranks = 1;
  comm.name_length = 5;
  return katrace::AppendRecord(b, policy, katrace::spool::RecordType::kComm, 0, 1, 0, comm, "world", 5);
}

class WriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/katrace_writer_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { ASSERT_EQ(system(("rm -rf " + dir_).c_str()), 0); }

  void Coll(katrace::ThreadBuffer* b, uint64_t id) { ASSERT_TRUE(AppendCollRecords(b, policy_, id)); }

  std::string dir_;  // removed with everything in it after the test
  katrace::AppendPolicy policy_;
};

}  // namespace katrace_test

#endif  // KATRACE_TEST_SUPPORT_CAPTURE_RECORDS_H_
