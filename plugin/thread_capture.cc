// Each thread's capture buffer: the first call of a thread in a session takes one from the spool
// writer, the thread's exit hands it back (drained, then reused by a later thread). Cold: runs
// once per thread and session; the per-call check is inline in thread_capture.h.
#include "plugin/thread_capture.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>

#include "plugin/logger.h"

namespace katrace {
namespace core {

__thread ThreadCapture t_capture = {0, nullptr, 0};

namespace {

pthread_key_t g_thread_exit_key;
bool g_thread_exit_key_made = false;  // under g_lifecycle

uint32_t CurrentOsTid() {
  if (t_capture.os_tid == 0) t_capture.os_tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return t_capture.os_tid;
}

// Runs when a thread that captured exits: its buffer is drained and reused by a later thread.
void OnThreadExit(void*) {
  if (g_forked_child.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(g_lifecycle);
  Session* s = g_session.load(std::memory_order_acquire);
  if (s != nullptr && s->spooling && t_capture.session_serial == s->serial && t_capture.buffer != nullptr) {
    s->spool->Orphan(t_capture.buffer);
  }
  t_capture.buffer = nullptr;
  t_capture.session_serial = 0;
}

}  // namespace

ThreadBuffer* AcquireBufferForThisThread(Session* s) {
  ThreadBuffer* b = s->spooling ? s->spool->Acquire(CurrentOsTid()) : nullptr;
  t_capture.buffer = b;
  t_capture.session_serial = s->serial;
  if (b != nullptr) {
    pthread_setspecific(g_thread_exit_key, reinterpret_cast<void*>(1));
  } else if (s->spooling) {
    WarnOnce(&s->budget_warned, "the capture buffer budget (KATRACE_BUFFER_MB) is spent by " +
                          std::to_string(s->config.buffer_budget_bytes / s->config.thread_buffer_bytes) +
                          " threads; events of further threads are dropped and counted");
  }
  return b;
}

bool InstallThreadExitHook() {
  if (g_thread_exit_key_made) return false;
  g_thread_exit_key_made = pthread_key_create(&g_thread_exit_key, OnThreadExit) == 0;
  return true;
}

void RemoveThreadExitHook() {
  if (!g_thread_exit_key_made) return;
  pthread_key_delete(g_thread_exit_key);
  g_thread_exit_key_made = false;
}

}  // namespace core
}  // namespace katrace
