// Each thread's capture buffer in the current session: taken from the spool writer on the
// thread's first event of the session, handed back when the thread exits. Apart from the callbacks
// because only the first call of a thread (and its exit) does anything here; the per-call check
// is inline and costs one thread-local load.
#ifndef KATRACE_PLUGIN_THREAD_CAPTURE_H_
#define KATRACE_PLUGIN_THREAD_CAPTURE_H_

#include <stdint.h>

#include "plugin/capture/thread_buffer.h"
#include "plugin/session_state.h"

namespace katrace {
namespace core {

// The calling thread's capture buffer in the session |session_serial| names. initial-exec TLS:
// one load from the thread pointer, no __tls_get_addr on the hot path. __thread rather than
// thread_local: it can have no dynamic initializer, so files other than the defining one read it
// directly instead of through a TLS wrapper call.
struct ThreadCapture {
  uint64_t session_serial;
  ThreadBuffer* buffer;
  uint32_t os_tid;
};
extern __thread ThreadCapture t_capture __attribute__((tls_model("initial-exec"), visibility("hidden")));

// The first call of a thread in a session: takes a buffer from the writer (a lock, once). Null
// when the session does not spool or the buffer budget is spent (said once).
ThreadBuffer* AcquireBufferForThisThread(Session* s);

__attribute__((always_inline)) inline ThreadBuffer* BufferForThisThread(Session* s) {
  if (__builtin_expect(t_capture.session_serial == s->serial, 1)) return t_capture.buffer;
  return AcquireBufferForThisThread(s);
}

// The hook that hands an exiting thread's buffer back to the writer. Under g_lifecycle. Install:
// true when this call tried to create it (none was there), so the caller registers its fork
// handler along with it.
bool InstallThreadExitHook();
void RemoveThreadExitHook();

}  // namespace core
}  // namespace katrace

#endif  // KATRACE_PLUGIN_THREAD_CAPTURE_H_
