// Test support: writes katrace spools (katrace/spool_format.h) record by record, plain or LZ4,
// with records buffered per stream and a block written when a stream's buffer fills or is
// flushed, exactly as the capture lays them out. It can also write what no capture would (raw
// records, garbage bytes) for the hostile-input tests, and generate a realistic large spool for
// the export benchmark.
#ifndef KATRACE_TEST_SUPPORT_SPOOL_BUILDER_H_
#define KATRACE_TEST_SUPPORT_SPOOL_BUILDER_H_

#include <stdint.h>
#include <stdio.h>

#include <map>
#include <string>
#include <vector>

#include "katrace/event_kinds.h"
#include "katrace/spool_format.h"

namespace katrace_test {

class SpoolBuilder {
 public:
  // |block_bytes|: a stream's records are written as a block once they reach this size.
  explicit SpoolBuilder(const std::string& path, bool lz4 = false, size_t block_bytes = 64 << 10,
                        uint64_t os_pid = 4242);
  ~SpoolBuilder();
  SpoolBuilder(const SpoolBuilder&) = delete;
  SpoolBuilder& operator=(const SpoolBuilder&) = delete;

  void Process(int rank, int os_pid, const std::string& host, const std::string& trace_path, int mask,
               uint64_t base_realtime_ns, uint64_t base_monotonic_ns, uint32_t clock_source = 0, uint32_t stream = 0);
  void Clock(uint64_t ticks, uint64_t monotonic_ns, uint64_t realtime_ns, uint32_t stream = 0);
  void String(uint32_t id, const std::string& text, uint32_t stream = 0);
  void Comm(uint16_t slot, uint64_t comm_hash, uint64_t ticks, int rank, int nranks, const std::string& name,
            uint32_t stream = 0, int abi_version = 6);
  void CommEnd(uint16_t slot, uint64_t ticks, uint32_t stream = 0);

  template <typename Fields>
  void Start(uint32_t stream, katrace::Kind kind, uint16_t context, uint64_t id, uint64_t parent, uint64_t ticks,
             const Fields& fields, uint16_t flags = 0) {
    StartBytes(stream, kind, context, id, parent, ticks, &fields, sizeof(fields), flags);
  }
  // Kinds without per-kind fields (KernelLaunch, Group, ProxyCtrl, CeSync).
  void Start(uint32_t stream, katrace::Kind kind, uint16_t context, uint64_t id, uint64_t parent, uint64_t ticks,
             uint16_t flags = 0) {
    StartBytes(stream, kind, context, id, parent, ticks, nullptr, 0, flags);
  }
  void State(uint32_t stream, katrace::Kind kind, uint16_t context, uint64_t id, uint64_t ticks, int32_t state,
             uint64_t value = 0);
  void Stop(uint32_t stream, katrace::Kind kind, uint16_t context, uint64_t id, uint64_t ticks);
  // A KernelCh's stop with its KernelChStop state folded in, as the capture writes it.
  void StopWithGpuStop(uint32_t stream, katrace::Kind kind, uint16_t context, uint64_t id, uint64_t ticks,
                       uint64_t gpu_stop);
  void Counters(const katrace::spool::CountersBody& counters, uint32_t stream = 0);
  // Flushes every other stream, then writes End in |stream| and flushes it: nothing follows.
  void End(uint32_t stream = 0);

  // Any record: |header.size| is set from |n| unless |keep_size|.
  void Raw(uint32_t stream, katrace::spool::RecordHeader header, const void* body, size_t n, bool keep_size = false);
  void Flush(uint32_t stream);
  void FlushAll();
  // Bytes written as they are, outside any block (garbage, a torn header).
  void WriteRawBytes(const void* data, size_t n);
  void SetOsTid(uint32_t stream, uint32_t os_tid) { tids_[stream] = os_tid; }
  void Close();

  const std::vector<uint64_t>& block_offsets() const { return block_offsets_; }
  uint64_t size() const { return offset_; }

 private:
  void StartBytes(uint32_t stream, katrace::Kind kind, uint16_t context, uint64_t id, uint64_t parent,
                  uint64_t ticks, const void* fields, size_t n, uint16_t flags);
  void Append(uint32_t stream, katrace::spool::RecordType type, uint8_t kind, uint16_t context, uint16_t flags,
              const void* body, size_t n, const void* tail = nullptr, size_t tail_n = 0);
  void Write(const void* data, size_t n);

  FILE* file_ = nullptr;
  bool lz4_;
  size_t block_bytes_;
  uint64_t sequence_ = 0;
  uint64_t offset_ = 0;
  std::map<uint32_t, std::string> pending_;
  std::map<uint32_t, uint32_t> tids_;
  std::vector<uint64_t> block_offsets_;
};

// Reads a whole file / writes one (for corrupting spools in tests).
std::string ReadFileBytes(const std::string& path);
void WriteFileBytes(const std::string& path, const std::string& bytes);

// A realistic spool for throughput runs: Coll events on a host stream, each with one KernelCh
// (GPU-stamped) and a send and a recv ProxyOp per channel on |streams| − 1 proxy streams, until
// at least |events| events. Returns the number of events written.
uint64_t GenerateRealisticSpool(const std::string& path, uint64_t events, int streams, int channels, bool lz4,
                                const std::string& trace_path);

}  // namespace katrace_test

#endif  // KATRACE_TEST_SUPPORT_SPOOL_BUILDER_H_
