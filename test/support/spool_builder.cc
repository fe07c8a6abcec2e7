#include "test/support/spool_builder.h"

#include <lz4.h>
#include <string.h>
#include <zlib.h>

#include <stdexcept>

namespace katrace_test {

using katrace::Kind;
namespace spool = katrace::spool;

SpoolBuilder::SpoolBuilder(const std::string& path, bool lz4, size_t block_bytes, uint64_t os_pid)
    : lz4_(lz4), block_bytes_(block_bytes) {
  file_ = fopen(path.c_str(), "wb");
  if (file_ == nullptr) throw std::runtime_error("cannot create " + path);
  spool::FileHeader h{};
  memcpy(h.magic, spool::kFileMagic, sizeof(h.magic));
  h.version = spool::kFormatVersion;
  h.header_bytes = sizeof(h);
  h.os_pid = os_pid;
  h.created_realtime_ns = 1;
  Write(&h, sizeof(h));
}

SpoolBuilder::~SpoolBuilder() { Close(); }

void SpoolBuilder::Write(const void* data, size_t n) {
  if (n != 0 && fwrite(data, 1, n, file_) != n) throw std::runtime_error("spool write failed");
  offset_ += n;
}

void SpoolBuilder::WriteRawBytes(const void* data, size_t n) { Write(data, n); }

void SpoolBuilder::Append(uint32_t stream, spool::RecordType type, uint8_t kind, uint16_t context, uint16_t flags,
                          const void* body, size_t n, const void* tail, size_t tail_n) {
  spool::RecordHeader h{};
  h.type = type;
  h.kind = kind;
  h.size = spool::RecordSize(n + tail_n);
  h.context = context;
  h.flags = flags;
  std::string& buf = pending_[stream];
  buf.append(reinterpret_cast<const char*>(&h), sizeof(h));
  if (n) buf.append(static_cast<const char*>(body), n);
  if (tail_n) buf.append(static_cast<const char*>(tail), tail_n);
  buf.append(h.size - sizeof(h) - n - tail_n, '\0');
  if (buf.size() >= block_bytes_) Flush(stream);
}

void SpoolBuilder::Raw(uint32_t stream, spool::RecordHeader header, const void* body, size_t n, bool keep_size) {
  if (!keep_size) header.size = static_cast<uint16_t>(sizeof(header) + n);
  std::string& buf = pending_[stream];
  buf.append(reinterpret_cast<const char*>(&header), sizeof(header));
  if (n) buf.append(static_cast<const char*>(body), n);
}

void SpoolBuilder::Flush(uint32_t stream) {
  auto it = pending_.find(stream);
  if (it == pending_.end() || it->second.empty() || file_ == nullptr) return;
  const std::string& raw = it->second;
  std::string stored = raw;
  uint32_t flags = 0;
  if (lz4_) {
    stored.resize(static_cast<size_t>(LZ4_compressBound(static_cast<int>(raw.size()))));
    int n = LZ4_compress_default(raw.data(), &stored[0], static_cast<int>(raw.size()), static_cast<int>(stored.size()));
    if (n <= 0) throw std::runtime_error("LZ4 compression failed");
    stored.resize(static_cast<size_t>(n));
    flags = spool::kBlockLz4;
  }
  spool::BlockHeader b{};
  b.magic = spool::kBlockMagic;
  b.stored_bytes = static_cast<uint32_t>(stored.size());
  b.raw_bytes = static_cast<uint32_t>(raw.size());
  b.flags = flags;
  b.stream = stream;
  auto tid = tids_.find(stream);
  b.os_tid = tid != tids_.end() ? tid->second : 1000 + stream;
  b.sequence = sequence_++;
  b.crc32 = 0;
  uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(&b), sizeof(b));
  crc = crc32(crc, reinterpret_cast<const Bytef*>(stored.data()), static_cast<uInt>(stored.size()));
  b.crc32 = static_cast<uint32_t>(crc);
  block_offsets_.push_back(offset_);
  Write(&b, sizeof(b));
  Write(stored.data(), stored.size());
  it->second.clear();
}

void SpoolBuilder::FlushAll() {
  for (auto& p : pending_) Flush(p.first);
}

void SpoolBuilder::Close() {
  if (file_ == nullptr) return;
  FlushAll();
  fclose(file_);
  file_ = nullptr;
}

void SpoolBuilder::Process(int rank, int os_pid, const std::string& host, const std::string& trace_path, int mask,
                           uint64_t base_realtime_ns, uint64_t base_monotonic_ns, uint32_t clock_source,
                           uint32_t stream) {
  spool::ProcessBody p{};
  p.rank = rank;
  p.os_pid = os_pid;
  p.base_realtime_ns = base_realtime_ns;
  p.base_monotonic_ns = base_monotonic_ns;
  p.clock_source = clock_source;
  p.mask = mask;
  p.host_length = static_cast<uint32_t>(host.size());
  p.trace_path_length = static_cast<uint32_t>(trace_path.size());
  std::string tail = host + trace_path;
  Append(stream, spool::RecordType::kProcess, 0, 0, 0, &p, sizeof(p), tail.data(), tail.size());
}

void SpoolBuilder::Clock(uint64_t ticks, uint64_t monotonic_ns, uint64_t realtime_ns, uint32_t stream) {
  spool::ClockBody c{ticks, monotonic_ns, realtime_ns};
  Append(stream, spool::RecordType::kClock, 0, 0, 0, &c, sizeof(c));
}

void SpoolBuilder::String(uint32_t id, const std::string& text, uint32_t stream) {
  spool::StringBody s{id, static_cast<uint32_t>(text.size())};
  Append(stream, spool::RecordType::kString, 0, 0, 0, &s, sizeof(s), text.data(), text.size());
}

void SpoolBuilder::Comm(uint16_t slot, uint64_t comm_hash, uint64_t ticks, int rank, int nranks,
                        const std::string& name, uint32_t stream, int abi_version) {
  spool::CommBody c{};
  c.comm_hash = comm_hash;
  c.ticks = ticks;
  c.rank = rank;
  c.nranks = nranks;
  c.nnodes = 1;
  c.abi_version = abi_version;
  c.name_length = static_cast<uint32_t>(name.size());
  Append(stream, spool::RecordType::kComm, 0, slot, 0, &c, sizeof(c), name.data(), name.size());
}

void SpoolBuilder::CommEnd(uint16_t slot, uint64_t ticks, uint32_t stream) {
  spool::CommEndBody e{ticks};
  Append(stream, spool::RecordType::kCommEnd, 0, slot, 0, &e, sizeof(e));
}

void SpoolBuilder::StartBytes(uint32_t stream, Kind kind, uint16_t context, uint64_t id, uint64_t parent,
                              uint64_t ticks, const void* fields, size_t n, uint16_t flags) {
  spool::StartBody s{id, parent, ticks};
  Append(stream, spool::RecordType::kStart, static_cast<uint8_t>(kind), context, flags, &s, sizeof(s), fields, n);
}

void SpoolBuilder::State(uint32_t stream, Kind kind, uint16_t context, uint64_t id, uint64_t ticks, int32_t state,
                         uint64_t value) {
  spool::StateBody s{};
  s.id = id;
  s.ticks = ticks;
  s.state = state;
  s.value = value;
  Append(stream, spool::RecordType::kState, static_cast<uint8_t>(kind), context, 0, &s, sizeof(s));
}

void SpoolBuilder::Stop(uint32_t stream, Kind kind, uint16_t context, uint64_t id, uint64_t ticks) {
  spool::StopBody s{id, ticks};
  Append(stream, spool::RecordType::kStop, static_cast<uint8_t>(kind), context, 0, &s, sizeof(s));
}

void SpoolBuilder::StopWithGpuStop(uint32_t stream, Kind kind, uint16_t context, uint64_t id, uint64_t ticks,
                                   uint64_t gpu_stop) {
  spool::StopWithGpuStopBody s{id, ticks, gpu_stop};
  Append(stream, spool::RecordType::kStop, static_cast<uint8_t>(kind), context, spool::kStopCarriesGpuStop, &s,
         sizeof(s));
}

void SpoolBuilder::Counters(const spool::CountersBody& counters, uint32_t stream) {
  Append(stream, spool::RecordType::kCounters, 0, 0, 0, &counters, sizeof(counters));
}

void SpoolBuilder::End(uint32_t stream) {
  for (auto& p : pending_) {
    if (p.first != stream) Flush(p.first);
  }
  Append(stream, spool::RecordType::kEnd, 0, 0, 0, nullptr, 0);
  Flush(stream);
}

std::string ReadFileBytes(const std::string& path) {
  FILE* f = fopen(path.c_str(), "rb");
  if (f == nullptr) return "";
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  fclose(f);
  return out;
}

void WriteFileBytes(const std::string& path, const std::string& bytes) {
  FILE* f = fopen(path.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("cannot write " + path);
  fwrite(bytes.data(), 1, bytes.size(), f);
  fclose(f);
}

uint64_t GenerateRealisticSpool(const std::string& path, uint64_t events, int streams, int channels, bool lz4,
                                const std::string& trace_path) {
  if (streams < 2) streams = 2;
  if (channels < 1) channels = 1;
  SpoolBuilder b(path, lz4, 256 << 10);
  const uint64_t base_mono = 1000000000ull, base_rt = 1700000000000000000ull;
  // globaltimer runs on realtime; the host sees each stamp ~600 ns late.
  const uint64_t rt_minus_mono = base_rt - base_mono;
  int mask = static_cast<int>(ncclProfileColl | ncclProfileKernelCh | ncclProfileProxyOp);
  b.Process(0, 4242, "benchhost", trace_path, mask, base_rt, base_mono);
  b.Clock(base_mono, base_mono, base_rt);
  b.String(1, "AllReduce");
  b.String(2, "ncclFloat32");
  b.String(3, "RING");
  b.String(4, "SIMPLE");
  b.Comm(1, 0x9a3c0f1e12345678ull, base_mono, 0, 8, "bench");
  uint64_t written = 0, id = 1;
  for (uint64_t i = 0; written < events; ++i) {
    uint64_t t = base_mono + 1000 + i * 10000;
    uint64_t coll = id++;
    katrace::spool::CollFields cf{};
    cf.seq = i;
    cf.count = 1 << 20;
    cf.func = 1;
    cf.datatype = 2;
    cf.algo = 3;
    cf.proto = 4;
    cf.nchannels = static_cast<uint8_t>(channels);
    cf.nwarps = 16;
    // KernelCh is in the mask for every task, as the capture then flags it.
    b.Start(0, Kind::kColl, 1, coll, 0, t, cf, katrace::spool::kStartAwaitsKernelCh);
    b.Stop(0, Kind::kColl, 1, coll, t + 2000);
    ++written;
    int proxy_streams = streams - 1;
    for (int s = 0; s < proxy_streams; ++s) {
      uint32_t stream = static_cast<uint32_t>(1 + s);
      std::vector<int> mine;
      for (int c = s; c < channels; c += proxy_streams) mine.push_back(c);
      std::vector<uint64_t> kch, ops;
      for (int c : mine) {
        katrace::spool::KernelChFields k{};
        k.gpu_start = t + 3000 + static_cast<uint64_t>(c) + rt_minus_mono - 600;
        k.func = 1;
        k.channel = static_cast<uint8_t>(c);
        kch.push_back(id);
        b.Start(stream, Kind::kKernelCh, 1, id++, coll, t + 3000 + static_cast<uint64_t>(c), k);
      }
      for (int c : mine) {
        for (int dir = 0; dir < 2; ++dir) {
          katrace::spool::ProxyOpFields p{};
          p.peer = (dir ? 7 : 1);
          p.nsteps = 8;
          p.chunk_size = 131072;
          p.channel = static_cast<uint8_t>(c);
          ops.push_back(id);
          b.Start(stream, Kind::kProxyOp, 1, id++, coll, t + 3200 + static_cast<uint64_t>(c) * 2 + dir, p,
                  dir == 0 ? katrace::spool::kStartSend : 0);
        }
      }
      // Within a stream records stay in tick order: every GPU stop state, then every stop.
      for (size_t j = 0; j < kch.size(); ++j) {
        uint64_t at = t + 8000 + static_cast<uint64_t>(mine[j]);
        b.State(stream, Kind::kKernelCh, 1, kch[j], at, ncclProfilerKernelChStop, at + rt_minus_mono - 900);
      }
      for (size_t j = 0; j < kch.size(); ++j) b.Stop(stream, Kind::kKernelCh, 1, kch[j], t + 8500 + j);
      for (size_t j = 0; j < ops.size(); ++j) b.Stop(stream, Kind::kProxyOp, 1, ops[j], t + 9000 + j);
      written += kch.size() + ops.size();
    }
  }
  katrace::spool::CountersBody counters{};
  b.Counters(counters);
  b.End(0);
  return written;
}

}  // namespace katrace_test
