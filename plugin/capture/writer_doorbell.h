// The spool writer's doorbell. Between rounds the writer sleeps on it for at most its poll
// interval; a capturing thread whose ring has filled to a quarter rings it, so the writer drains
// that ring at once instead of at its next poll. With a 500 µs poll alone, a thread that fills a
// quarter of its ring faster than that (a few hundred thousand collectives a second do) outran
// the writer and waited for buffer space: the poll, not the writer's work, bounded sustained
// capture.
//
// A Linux futex on one word: ringing is one atomic exchange, plus a wake-up system call only when
// the word was clear (the writer may be asleep). A ring while the writer works makes its next
// Sleep return at once, so no ring is lost between a round and the sleep after it.
#ifndef KATRACE_PLUGIN_CAPTURE_WRITER_DOORBELL_H_
#define KATRACE_PLUGIN_CAPTURE_WRITER_DOORBELL_H_

#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

namespace katrace {

class WriterDoorbell {
 public:
  // Any thread. Publishes what the caller wrote before it (release) to the writer's next round.
  void Ring() {
    if (rung_.exchange(1, std::memory_order_acq_rel) == 0) Futex(FUTEX_WAKE_PRIVATE, 1, nullptr);
  }

  // The writer thread: returns at a ring, or after |micros|, whichever comes first; at once when
  // a ring came since the last call.
  void Sleep(uint32_t micros) {
    if (rung_.exchange(0, std::memory_order_acq_rel) != 0) return;
    const timespec timeout{static_cast<time_t>(micros / 1000000), static_cast<long>(micros % 1000000) * 1000};
    Futex(FUTEX_WAIT_PRIVATE, 0, &timeout);  // returns at once if rung since the exchange
    rung_.exchange(0, std::memory_order_acq_rel);
  }

  // Whether a ring waits for the next Sleep (for tests).
  bool rung() const { return rung_.load(std::memory_order_acquire) != 0; }

 private:
  void Futex(int op, uint32_t value, const timespec* timeout) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&rung_), op, value, timeout, nullptr, 0);
  }

  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "the futex word is the atomic's");
  std::atomic<uint32_t> rung_{0};
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CAPTURE_WRITER_DOORBELL_H_
