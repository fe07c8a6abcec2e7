// The communicator table: a slot per communicator from init to finalize, the pools of its events,
// and their retirement. A finalized communicator's pools outlive it by a grace period, since a
// callback may have resolved a handle into them just before; its slot is reused only after that.
// Cold: init, finalize and the writer's pass. The lookups the callbacks use are inline in
// comm_contexts.h.
#include "plugin/comm_contexts.h"

#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <new>
#include <string>
#include <utility>

#include "katrace/spool_format.h"
#include "plugin/asymmetric_fence.h"
#include "plugin/capture/host_clock.h"
#include "plugin/capture/record_appender.h"
#include "plugin/clock.h"
#include "plugin/logger.h"
#include "plugin/process_identity.h"
#include "plugin/slot_links.h"
#include "plugin/thread_capture.h"

namespace katrace {
namespace core {
namespace {

// Pools of finalized communicators waiting out their grace period. A job that creates
// communicators faster than that (sub-groups in a loop) waits at init once this is reached, so
// memory stays bounded however many communicators come and go.
constexpr size_t kRetiredBudgetBytes = 32u << 20;

// A free context slot for a new communicator. When communicators come and go faster than the
// retirement grace period, waits (at most about one grace period) for retired ones.
Context* TakeContextSlot(Session* s) {
  for (int attempt = 0; attempt < 40; ++attempt) {
    bool over_budget;
    {
      std::lock_guard<std::mutex> lock(s->retire_mu);
      over_budget = s->retired_bytes > kRetiredBudgetBytes;
    }
    bool retiring = false;  // a finalized communicator's slot that becomes free after its grace
    if (!over_budget) {
      for (uint32_t i = 1; i < kMaxContexts; ++i) {
        Context* c = &s->context_storage[i];
        if (c->reusable.load(std::memory_order_acquire)) {
          c->reusable.store(false, std::memory_order_relaxed);
          return c;
        }
        retiring = retiring || c->finalized.load(std::memory_order_relaxed);
      }
      // Every slot holds a live communicator: waiting frees none (and would hold every other
      // init and finalize behind the lock).
      if (!retiring) return nullptr;
    }
    usleep(10 * 1000);
    FreeRetiredPools(s, NowMonotonicNs() - kRetireGraceNs);
  }
  return nullptr;
}

}  // namespace

EventPool* MakePool(Session* s, Context* ctx, Kind kind) {
  int k = static_cast<int>(kind);
  std::lock_guard<std::mutex> lock(ctx->pool_mu);
  EventPool* pool = ctx->pools[k].load(std::memory_order_relaxed);
  if (pool == nullptr) {
    // Generations start at a per-context offset so that a handle of an earlier context that used
    // the same context slot does not match.
    try {
      pool = new EventPool(s->config.pool_size[k], static_cast<uint32_t>(ctx->serial * 0x9e3779b1u) & kGenerationMask,
                           AsymmetricFenceAvailable() ? ThisThreadToken() : 0);
    } catch (const std::bad_alloc&) {
      return nullptr;  // no exception crosses the C ABI: the caller counts a drop
    }
    ctx->pools[k].store(pool, std::memory_order_release);
  }
  return pool;
}

ncclResult_t OpenContext(Session* s, const InitArgs& a, void** context) {
  Context* ctx = TakeContextSlot(s);
  if (ctx == nullptr) {
    static std::atomic<bool> warned{false};
    WarnOnce(&warned, "more than " + std::to_string(kMaxContexts - 1) +
                          " live communicators; further ones are not profiled (their events are counted as "
                          "dropped), the job goes on");
    *context = UnprofiledContext();
    return ncclSuccess;
  }
  ctx->serial = s->next_serial++;
  ctx->index = static_cast<uint32_t>(ctx - s->context_storage.get());
  ctx->comm_hash = a.comm_hash;
  ctx->rank = a.rank;
  ctx->finalized.store(false, std::memory_order_relaxed);
  if (s->spooling) {
    std::string name = a.comm_name != nullptr ? std::string(a.comm_name).substr(0, 1024) : "";
    spool::CommBody body{};
    body.comm_hash = a.comm_hash;
    body.ticks = NowTicks();
    body.rank = a.rank;
    body.nranks = a.nranks;
    body.nnodes = a.nnodes;
    body.abi_version = a.abi_version;
    body.cuda_device = CurrentCudaDevice();
    body.name_length = static_cast<uint32_t>(name.size());
    AppendPolicy waiting = s->policy;
    waiting.drop_when_full = false;
    AppendRecord(BufferForThisThread(s), waiting, spool::RecordType::kComm, 0, static_cast<uint16_t>(ctx->index), 0,
                 body, name.data(), name.size());
  }
  s->contexts[ctx->index].store(ctx, std::memory_order_release);
  *context = EncodeContext(ctx->index, ctx->serial);
  ++s->live_contexts;
  // The mask is process-global and NCCL re-reads it at every operation. Set it on the first
  // communicator only, so a value the application changed later is not reset by a new one.
  int mask = __atomic_load_n(&s->config_mask, __ATOMIC_RELAXED);
  if (a.mask != nullptr) {
    if (s->live_mask == &s->config_mask) {
      s->live_mask = a.mask;
      g_slotless_starts.live_mask.store(a.mask, std::memory_order_release);
    }
    if (s->live_contexts == 1) __atomic_store_n(a.mask, mask, __ATOMIC_RELAXED);
  }
  LogInfo("profiling comm " + std::to_string(a.comm_hash) + " rank " + std::to_string(a.rank) + "/" +
          std::to_string(a.nranks) + " (ABI v" + std::to_string(a.abi_version) + ", mask " + std::to_string(mask) +
          ", trace " + s->trace_path + ")");
  return ncclSuccess;
}

void RetireContext(Session* s, Context* ctx) {
  WriteHeldGpuStops(s, ctx);
  ClaimLiveSlots(s, ctx);
  WritePendingNotices(s);
  ctx->retired_serial.store(ctx->serial & kContextSerialMask, std::memory_order_relaxed);
  ThreadBuffer* b = s->spooling ? BufferForThisThread(s) : nullptr;
  spool::CommEndBody end{NowTicks()};
  AppendRecord(b, s->policy, spool::RecordType::kCommEnd, 0, static_cast<uint16_t>(ctx->index), 0, end);
  s->contexts[ctx->index].store(nullptr, std::memory_order_release);
  RetiredPools r{NowMonotonicNs(), ctx, {}, 0};
  for (auto& p : ctx->pools) {
    EventPool* pool = p.exchange(nullptr, std::memory_order_acq_rel);
    if (pool != nullptr) {
      r.pools.push_back(pool);
      r.bytes += pool->bytes();
    }
  }
  std::lock_guard<std::mutex> lock(s->retire_mu);
  s->retired_bytes += r.bytes;
  s->retired.push_back(std::move(r));
}

void FreeRetiredPools(Session* s, uint64_t older_than_ns) {
  std::vector<RetiredPools> done;
  {
    std::lock_guard<std::mutex> lock(s->retire_mu);
    auto keep = std::partition(s->retired.begin(), s->retired.end(),
                               [&](const RetiredPools& r) { return r.since_ns > older_than_ns; });
    done.assign(std::make_move_iterator(keep), std::make_move_iterator(s->retired.end()));
    s->retired.erase(keep, s->retired.end());
    for (const RetiredPools& r : done) s->retired_bytes -= r.bytes;
  }
  for (RetiredPools& r : done) {
    for (EventPool* p : r.pools) delete p;
    r.ctx->reusable.store(true, std::memory_order_release);
  }
}

int64_t TasksInFlight(Session* s, int64_t enough) {
  int64_t n = 0;
  for (uint32_t i = 1; i < kMaxContexts && n < enough; ++i) {
    Context* ctx = ContextAt(s, i);
    if (ctx == nullptr) continue;
    for (Kind kind : {Kind::kColl, Kind::kP2p}) {
      EventPool* pool = ctx->pools[static_cast<int>(kind)].load(std::memory_order_acquire);
      if (pool == nullptr) continue;
      for (uint32_t k = 0; k < pool->size() && n < enough; ++k) {
        const uint64_t w = pool->slot(k).state.load(std::memory_order_relaxed);
        if ((w & SlotState::kLive) && SlotState::Holds(w) > 0) ++n;
      }
    }
  }
  return n;
}

}  // namespace core
}  // namespace katrace
