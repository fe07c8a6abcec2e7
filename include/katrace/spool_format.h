// The spool: what the plugin captures while the job runs, one file per process
// ("<trace path>.kspool"), and what the exporter (in the plugin at exit, or katrace-export offline)
// turns into a trace. Shared by the plugin and the tools; nothing else defines these bytes.
//
//   file   = FileHeader, then Block*            (a killed job leaves a prefix of this)
//   block  = BlockHeader, then payload          (payload optionally LZ4-compressed, its records
//                                                optionally delta-coded: katrace/record_delta.h)
//   payload (decoded) = Record*                 (records never straddle blocks)
//   record = RecordHeader, then the per-type body; RecordHeader::size covers both
//
// A block is on disk whole or not at all (a failed write is cut off again) and carries a CRC-32
// over its header and payload, so a reader takes every block that is whole and stops at the
// first that is not: that is where the spool was cut. All integers are little-endian (the only
// byte order NCCL runs on).
//
// Event records (Start, State, Stop) are what the callbacks append; their bodies are at most
// 64 bytes (static_asserted below). Times are raw host clock ticks (see Clock records) read once
// at callback entry; GPU stamps are raw %globaltimer ns. Strings are interned: an event names a
// string by a 32-bit id, and a String record, written once per process, gives its text.
#ifndef KATRACE_SPOOL_FORMAT_H_
#define KATRACE_SPOOL_FORMAT_H_

#include <stddef.h>
#include <stdint.h>

#include <array>
#include <type_traits>
#include <utility>

#include "katrace/drain_counters.h"
#include "katrace/event_kinds.h"

namespace katrace {
namespace spool {

constexpr char kFileMagic[8] = {'K', 'A', 'S', 'P', 'O', 'O', 'L', '1'};
// Version 2 added delta-coded blocks (kBlockDelta); version 3, a GPU event's Stop that carries its
// GPU stop state (kStopCarriesGpuStop). Older spools have neither and read the same.
constexpr uint32_t kFormatVersion = 3;
constexpr uint32_t kOldestReadableVersion = 1;
constexpr uint32_t kBlockMagic = 0x4b4c424bu;  // "KBLK"
// Upper bound of one block's decoded payload; a reader rejects anything larger.
constexpr uint32_t kMaxBlockBytes = 4u << 20;

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;  // sizeof(FileHeader) of the writer
  uint64_t os_pid;
  uint64_t created_realtime_ns;
  uint64_t reserved[4];
};
static_assert(sizeof(FileHeader) == 64, "spool file header is 64 bytes");

enum BlockFlags : uint32_t {
  kBlockLz4 = 1u << 0,    // payload is one LZ4 block of raw_bytes decoded bytes
  kBlockDelta = 1u << 1,  // the decoded records are delta-coded (katrace/record_delta.h)
  kKnownBlockFlags = kBlockLz4 | kBlockDelta,
};

struct BlockHeader {
  uint32_t magic;         // kBlockMagic
  uint32_t stored_bytes;  // bytes of payload that follow this header
  uint32_t raw_bytes;     // decoded payload bytes (== stored_bytes when not compressed)
  uint32_t flags;         // BlockFlags
  uint32_t stream;        // capture buffer the records came from (one thread at a time)
  uint32_t os_tid;        // the thread that wrote them
  uint64_t sequence;      // blocks are numbered 0, 1, 2, ... in file order
  uint32_t crc32;         // zlib crc32 of this header (with crc32 = 0) followed by the payload
  uint32_t reserved;
};
static_assert(sizeof(BlockHeader) == 40, "spool block header is 40 bytes");
static_assert(offsetof(BlockHeader, crc32) == 32, "crc32 offset");

enum class RecordType : uint8_t {
  kStart = 1,     // an event started (body: StartBody + per-kind fields)
  kState = 2,     // recordEventState (body: StateBody)
  kStop = 3,      // stopEvent (body: StopBody)
  kString = 4,    // interned text (body: StringBody + text bytes, not NUL-terminated)
  kComm = 5,      // a communicator was initialised (body: CommBody + name bytes)
  kCommEnd = 6,   // a communicator was finalized (body: CommEndBody)
  kClock = 7,     // host clock calibration pair (body: ClockBody)
  kProcess = 8,   // process identity, first record of the spool (body: ProcessBody + text)
  kCounters = 9,  // cumulative loss and drain counters (body: CountersBody)
  kEnd = 10,      // the capture closed cleanly; nothing follows
  kMarker = 11,   // capture was switched on or off, or dumped (body: MarkerBody)
  kFlight = 12,   // a flight recorder dump: what its ring let go before it (body: FlightBody + reason)
};

struct RecordHeader {
  RecordType type;
  uint8_t kind;      // event kind index (katrace::Kind) for Start/State/Stop, else 0
  uint16_t size;     // whole record, header included, multiple of 8
  uint16_t context;  // communicator slot the event belongs to (0 = foreign PXN proxy ops)
  uint16_t flags;    // StartFlags for Start records
};
static_assert(sizeof(RecordHeader) == 8, "record header is 8 bytes");

enum StartFlags : uint16_t {
  kStartSend = 1u << 0,           // ProxyOp/KernelStep direction (ProxyStep: inherited at export)
  kStartGraphCaptured = 1u << 1,  // API events
  kStartLateChild = 1u << 2,      // the parent had completed before this event started
  kStartAwaitsKernelCh = 1u << 3, // Coll/P2p: KernelCh was in NCCL's mask for this task, so
                                  // nchannels KernelCh children are expected before it is done
};

// Common to every Start record.
struct StartBody {
  uint64_t id;         // unique per process, never 0
  uint64_t parent_id;  // 0 = none known
  uint64_t ticks;      // host clock at callback entry
};
static_assert(sizeof(StartBody) == 24, "start body");

// Per-kind fields after StartBody (which kind carries which: StartFieldsOf below).
// Each start record is header + StartBody + one of these, padded to a multiple of 8. Strings are interned ids (0 = none).
struct CollFields {
  uint64_t seq;
  uint64_t count;
  uint32_t func, datatype, algo, proto;
  int32_t root;
  uint8_t nchannels, nwarps, pad[2];
};
struct P2pFields {
  uint64_t count;
  uint32_t func, datatype;
  int32_t peer;
  uint8_t nchannels, pad[3];
};
struct ApiFields {
  uint64_t count;
  uint32_t func, datatype;
  int32_t root;
  int32_t depth;  // GroupApi
};
struct ProxyOpFields {
  int32_t peer;
  int32_t nsteps;
  int32_t chunk_size;
  uint8_t channel, pad[3];
};
struct ProxyStepFields {  // channel, peer and direction are copied from the parent ProxyOp
  int32_t step;
  int32_t peer;
  uint8_t channel;
  uint8_t direction;  // 0 unknown (no ProxyOp parent; then the first state tells), 1 send, 2 recv
  uint8_t pad[6];
};
struct KernelChFields {
  uint64_t gpu_start;  // %globaltimer ns (0 = none)
  uint32_t func;       // the parent Coll/P2p's func, copied at capture
  uint8_t channel, pad[3];
};
struct KernelStepFields {
  uint64_t gpu_start;  // wait start (0 = not measured)
  uint64_t gpu_ready;  // transfer start
  uint32_t step;
  uint32_t size;
  int32_t peer;
  uint32_t func;  // the parent's func
  uint8_t channel, pad[7];
};
struct NetPluginFields {
  int64_t net_id;
};
struct CeBatchFields {
  uint64_t bytes;
  int32_t ops;
  uint32_t pad;
};

struct NoFields {};  // KernelLaunch, Group, ProxyCtrl, CeSync: the common body says it all

// Which fields struct follows StartBody in each kind's Start record: the one place it is said.
// The capture writes, and the export and the GPU clock pass read, StartFields<kind>; every kind
// must have an entry (the table below instantiates them all, so a kind without one does not
// compile).
template <Kind K>
struct StartFieldsOf;
template <> struct StartFieldsOf<Kind::kGroupApi> { using type = ApiFields; };
template <> struct StartFieldsOf<Kind::kCollApi> { using type = ApiFields; };
template <> struct StartFieldsOf<Kind::kP2pApi> { using type = ApiFields; };
template <> struct StartFieldsOf<Kind::kKernelLaunch> { using type = NoFields; };
template <> struct StartFieldsOf<Kind::kGroup> { using type = NoFields; };
template <> struct StartFieldsOf<Kind::kColl> { using type = CollFields; };
template <> struct StartFieldsOf<Kind::kP2p> { using type = P2pFields; };
template <> struct StartFieldsOf<Kind::kProxyOp> { using type = ProxyOpFields; };
template <> struct StartFieldsOf<Kind::kProxyStep> { using type = ProxyStepFields; };
template <> struct StartFieldsOf<Kind::kProxyCtrl> { using type = NoFields; };
template <> struct StartFieldsOf<Kind::kKernelCh> { using type = KernelChFields; };
template <> struct StartFieldsOf<Kind::kNetPlugin> { using type = NetPluginFields; };
template <> struct StartFieldsOf<Kind::kCeColl> { using type = CollFields; };
template <> struct StartFieldsOf<Kind::kCeSync> { using type = NoFields; };
template <> struct StartFieldsOf<Kind::kCeBatch> { using type = CeBatchFields; };
template <> struct StartFieldsOf<Kind::kKernelStep> { using type = KernelStepFields; };
template <Kind K>
using StartFields = typename StartFieldsOf<K>::type;

template <typename Fields>
constexpr uint8_t FieldsBytes() {
  return std::is_same<Fields, NoFields>::value ? 0 : static_cast<uint8_t>(sizeof(Fields));
}
template <size_t... K>
constexpr std::array<uint8_t, sizeof...(K)> StartFieldsBytesOf(std::index_sequence<K...>) {
  return {{FieldsBytes<StartFields<static_cast<Kind>(K)>>()...}};
}
// Bytes of each kind's fields after StartBody (a Start record is shorter only when damaged).
inline constexpr std::array<uint8_t, kKindCount> kStartFieldsBytes =
    StartFieldsBytesOf(std::make_index_sequence<kKindCount>{});
constexpr uint8_t MaxStartFieldsBytes() {
  uint8_t most = 0;
  for (uint8_t bytes : kStartFieldsBytes) most = bytes > most ? bytes : most;
  return most;
}
constexpr size_t kMaxStartFieldsBytes = MaxStartFieldsBytes();

constexpr size_t kMaxEventBody = 64;
constexpr bool EveryStartFits() {
  for (uint8_t bytes : kStartFieldsBytes) {
    if (sizeof(StartBody) + bytes > kMaxEventBody) return false;
  }
  return true;
}
static_assert(EveryStartFits(), "every event record body is at most 64 bytes");
struct StateBody {
  uint64_t id;
  uint64_t ticks;
  int32_t state;   // NCCL's state number, as given (any int)
  uint32_t pad;
  uint64_t value;  // transSize, appendedProxyOps, or the GPU stop stamp (KernelCh/KernelStep stop)
};
static_assert(sizeof(StateBody) <= kMaxEventBody, "state body");

// katrace's own State, never one of NCCL's (theirs are non-negative; the plugin ignores this
// number from NCCL): written on a Coll/P2p when it completes in the plugin, |value| of the
// KernelCh children it announced (kStartAwaitsKernelCh) were not recorded (dropped: pool full,
// buffer full, budget). The export then stops waiting for them.
constexpr int32_t kStateUnrecordedChildren = -1;

struct StopBody {
  uint64_t id;
  uint64_t ticks;
};
static_assert(sizeof(StopBody) <= kMaxEventBody, "stop body");

enum StopFlags : uint16_t {
  // A GPU event's Stop with its GPU stop state folded in (body: StopWithGpuStopBody): a
  // KernelCh's KernelChStop, a KernelStep's KernelStepStop (GpuStopStateOf). NCCL's proxy (and
  // the step drain) report that state just before the stop, so the capture keeps the state's GPU
  // stamp in the slot and writes one record where it wrote two; its ticks are the state's, which
  // the stop takes. An event that never stops has its state written on its own at finalize or
  // exit.
  kStopCarriesGpuStop = 1u << 0,
};

// The state a kStopCarriesGpuStop Stop of |kind| folds in; -1 for a kind that has none.
constexpr int32_t GpuStopStateOf(Kind kind) {
  return kind == Kind::kKernelCh     ? static_cast<int32_t>(ncclProfilerKernelChStop)
         : kind == Kind::kKernelStep ? static_cast<int32_t>(ncclProfilerKernelStepStop)
                                     : -1;
}

struct StopWithGpuStopBody {
  uint64_t id;
  uint64_t ticks;     // the state's, which is also the stop's
  uint64_t gpu_stop;  // the state's value: the GPU stop stamp (%globaltimer ns; 0 = none given,
                      // which for a KernelStep means the drain gave up waiting for it)
};
static_assert(offsetof(StopWithGpuStopBody, ticks) == offsetof(StopBody, ticks), "a Stop's ticks are where they were");

struct StringBody {
  uint32_t id;
  uint32_t length;  // text bytes that follow
};

struct CommBody {
  uint64_t comm_hash;
  uint64_t ticks;
  int32_t rank;
  int32_t nranks;
  int32_t nnodes;
  int32_t abi_version;
  uint32_t name_length;  // name bytes that follow
  int32_t cuda_device;   // the CUDA device current at init (the GPU whose clock stamps it), -1 unknown
};

struct CommEndBody {
  uint64_t ticks;
};

// The End record's: when the capture closed (host ticks). The spool writer writes it at Close
// and at the tail of each flight recorder dump.
struct EndBody {
  uint64_t ticks;
};

// Host clock: ns = monotonic_ns of the first Clock record +
//   (ticks - its ticks) * (Δmonotonic / Δticks over the first and last Clock records).
// When ticks already are CLOCK_MONOTONIC ns, every pair has ticks == monotonic_ns.
struct ClockBody {
  uint64_t ticks;
  uint64_t monotonic_ns;
  uint64_t realtime_ns;
};

enum ClockSource : uint32_t {
  kClockMonotonic = 0,  // ticks are CLOCK_MONOTONIC ns
  kClockTsc = 1,        // ticks are the invariant x86 TSC
};

struct ProcessBody {
  int32_t rank;      // the launcher's global rank (RANK, OMPI_COMM_WORLD_RANK, ...), -1 when none named one
  int32_t os_pid;
  uint64_t base_realtime_ns;
  uint64_t base_monotonic_ns;
  uint32_t clock_source;  // ClockSource
  int32_t mask;           // event kinds recorded (NCCL type bits)
  uint32_t host_length;   // host name bytes, then trace_path_length bytes of the trace path
  uint32_t trace_path_length;
};

// A flight recorder dump (KATRACE_MODE=flight) holds the newest blocks of the run: the ring
// evicted older ones, so States and Stops whose Start went with them, and children whose parent
// did, are expected, not lost; the export leaves out events that started before the cut
// (FlightBody::cut_ticks), so those it writes are whole. Records the export needs whatever was evicted (String, Comm,
// CommEnd, the first Clock) are kept apart and written before the ring's blocks.
struct FlightBody {
  uint64_t evicted_blocks;     // blocks the ring evicted, oldest first, before this dump
  uint64_t evicted_raw_bytes;  // their decoded bytes
  uint64_t refused_blocks;     // blocks never held: larger than the ring, or after a crash froze it
  uint64_t sticky_dropped;     // records to keep past eviction that found the sticky area full
  // The latest host ticks of any event record the ring let go (0: none). Events that started
  // by then may have lost records with it; those after it are whole.
  uint64_t cut_ticks;
  uint64_t dump_realtime_ns;
  int32_t signal;              // the fatal signal of a crash dump, else 0
  uint32_t reason_length;      // reason text bytes that follow ("exit", "control file", ...)
};

constexpr int kCounterKinds = 16;
// The on-disk counters hold one drop count per kind: a kind past them needs a new format version.
static_assert(kCounterKinds >= kKindCount, "CountersBody::dropped has a slot for every kind");
struct CountersBody {
  uint64_t dropped[kCounterKinds];  // events lost per kind: pool full, buffers full (drop mode), or their
                                    // Start record in a spool block that could not be written
  uint64_t waits;                   // callbacks that waited for buffer space (wait mode)
  DrainCounters drain;              // the KernelStep drain's counters, in kDrainCounterFields order
  uint64_t strings_unnamed;         // strings not interned (table full)
  uint64_t io_errors;
};

static_assert(offsetof(CountersBody, drain) == 136, "spool counters layout");

// A switch of the capture window (plugin/capture/capture_window.h) or a dump on demand: the
// trace shows it as an instant event. Written by whoever switched: a callback thread (a count
// edge of KATRACE_DELAY/KATRACE_DURATION) into its own stream, the writer thread (time edges,
// control file, signal) into stream 0. A reader rejects values it does not know.
enum MarkerWhat : uint8_t {
  kMarkerCaptureOn = 1,
  kMarkerCaptureOff = 2,
  kMarkerDump = 3,
};
enum MarkerReason : uint8_t {
  kMarkerDelay = 1,        // KATRACE_DELAY ran out
  kMarkerDuration = 2,     // KATRACE_DURATION ran out
  kMarkerControlFile = 3,  // a word in the KATRACE_CONTROL file
  kMarkerSignal = 4,       // the KATRACE_SIGNAL signal
};
constexpr bool IsKnownMarker(uint8_t what, uint8_t reason) {
  return what >= kMarkerCaptureOn && what <= kMarkerDump && reason >= kMarkerDelay && reason <= kMarkerSignal;
}
struct MarkerBody {
  uint64_t ticks;  // host clock when the switch was made
  uint8_t what;    // MarkerWhat
  uint8_t reason;  // MarkerReason
  uint8_t pad[6];
};
static_assert(sizeof(MarkerBody) == 16, "marker body");

constexpr uint16_t RecordSize(size_t body_bytes) {
  return static_cast<uint16_t>((sizeof(RecordHeader) + body_bytes + 7) & ~size_t{7});
}

}  // namespace spool
}  // namespace katrace

#endif  // KATRACE_SPOOL_FORMAT_H_
