// Keeps a write into a pipe whose reader has gone from killing the process: while a guard lives,
// SIGPIPE is blocked on the calling thread, so the write fails with EPIPE instead; a SIGPIPE that
// the write raised is then taken off the thread's pending set before the old mask comes back.
//
// Why: the plugin writes its trace at the application's exit, and a trace path may be a pipe
// (a FIFO, /dev/stdout into `| head`). A reader that stops early must cost the trace, never the
// application (whose own SIGPIPE handling is none of the plugin's business: the mask is the
// thread's own, and restored).
#ifndef KATRACE_COMMON_SIGPIPE_GUARD_H_
#define KATRACE_COMMON_SIGPIPE_GUARD_H_

#include <pthread.h>
#include <signal.h>
#include <time.h>

namespace katrace {

class SigpipeGuard {
 public:
  // |active| false: a write that cannot raise SIGPIPE (a regular file), and the guard costs nothing.
  explicit SigpipeGuard(bool active) : active_(active) {
    if (!active_) return;
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    // One already pending (blocked earlier by the application) is the application's: left alone.
    sigset_t pending;
    sigemptyset(&pending);
    already_pending_ = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_mask_);
  }
  ~SigpipeGuard() {
    if (!active_) return;
    if (!already_pending_) {
      sigset_t pending;
      sigemptyset(&pending);
      if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
        const timespec now = {0, 0};
        sigtimedwait(&pipe_, nullptr, &now);
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  const bool active_;
  bool already_pending_ = false;
  sigset_t pipe_;
  sigset_t old_mask_;
};

}  // namespace katrace

#endif  // KATRACE_COMMON_SIGPIPE_GUARD_H_
