#include "plugin/capture/capture_triggers.h"

#include <ctype.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>

#include "plugin/capture/host_clock.h"
#include "plugin/logger.h"

namespace katrace {
namespace {

constexpr uint64_t kControlPollNs = 100 * 1000 * 1000;
// Only the file's tail is read: the last word is all that counts, however long the file grew.
constexpr size_t kControlTailBytes = 256;

// Bumped by the signal handler, read by the writer thread: a lock-free atomic is
// async-signal-safe, and process-wide since a handler has no other way to reach the session.
std::atomic<uint32_t> g_toggle_signals{0};
static_assert(std::atomic<uint32_t>::is_always_lock_free, "the signal handler needs a lock-free counter");

void OnToggleSignal(int) { g_toggle_signals.fetch_add(1, std::memory_order_relaxed); }

const char* SignalName(int sig) { return sig == SIGUSR1 ? "SIGUSR1" : sig == SIGUSR2 ? "SIGUSR2" : "the signal"; }

// The last whitespace-separated word of |text|, lower-cased.
std::string LastWord(const std::string& text) {
  size_t end = text.size();
  while (end > 0 && isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  size_t begin = end;
  while (begin > 0 && !isspace(static_cast<unsigned char>(text[begin - 1]))) --begin;
  std::string word = text.substr(begin, end - begin);
  for (char& c : word) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return word;
}

// Printable, bounded, for a warning about a word that came from a file.
std::string ForMessage(const std::string& word) {
  std::string out;
  for (char c : word.substr(0, 40)) out += isprint(static_cast<unsigned char>(c)) ? c : '?';
  return word.size() > 40 ? out + "..." : out;
}

}  // namespace

void CaptureTriggers::Start(const Config& config, CaptureWindow* window) {
  window_ = window;
  control_path_ = config.control_path;
  if (!control_path_.empty()) {
    control_tail_ = ReadTail(&control_stamp_);
    if (control_stamp_.exists) Apply(control_tail_, nullptr);
  }
  signal_ = config.toggle_signal;
  if (signal_ != 0) {
    struct sigaction sa {};
    sa.sa_handler = OnToggleSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    signals_seen_ = g_toggle_signals.load(std::memory_order_relaxed);
    handler_installed_ = sigaction(signal_, &sa, &previous_) == 0;
    if (!handler_installed_) LogWarn(std::string("KATRACE_SIGNAL: cannot install a handler for ") + SignalName(signal_));
  }
}

CaptureTriggers::FileStamp CaptureTriggers::StampOf(const struct stat& st) {
  FileStamp f;
  f.exists = true;
  f.regular = S_ISREG(st.st_mode);
  f.dev = st.st_dev;
  f.ino = st.st_ino;
  f.size = st.st_size;
  f.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return f;
}

CaptureTriggers::FileStamp CaptureTriggers::StatControl() const {
  struct stat st;
  if (stat(control_path_.c_str(), &st) != 0) return FileStamp{};
  return StampOf(st);
}

std::string CaptureTriggers::ReadTail(FileStamp* stamp) {
  *stamp = FileStamp{};
  int fd = open(control_path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return "";  // gone again, or not readable: nothing to act on
  std::string text;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return "";
  }
  *stamp = StampOf(st);
  if (S_ISREG(st.st_mode)) {
    // Only the bytes up to the size fstat saw: a word appended after it is read at the next
    // look, once, as the change of size it is.
    const size_t n = static_cast<size_t>(st.st_size) < kControlTailBytes ? static_cast<size_t>(st.st_size)
                                                                          : kControlTailBytes;
    char buf[kControlTailBytes];
    const ssize_t got = n > 0 ? pread(fd, buf, n, st.st_size - static_cast<off_t>(n)) : 0;
    if (got > 0) text.assign(buf, static_cast<size_t>(got));
  } else if (!not_regular_warned_) {
    // Never read: a pipe or a device could block the writer thread or never end.
    not_regular_warned_ = true;
    LogWarn("KATRACE_CONTROL " + control_path_ + " is not a regular file; it is ignored until it is one");
  }
  close(fd);
  return text;
}

void CaptureTriggers::Apply(const std::string& text, SpoolWriter* spool) {
  const std::string word = LastWord(text);
  if (word.empty()) return;
  spool::MarkerBody edge{};
  if (word == "start" && spool == nullptr) {
    // At session start, capture begins as KATRACE_DELAY says: a "start" left from an earlier run
    // must not switch DELAY and DURATION off.
    return;
  }
  if (word == "start" || word == "stop") {
    const char* ended = nullptr;
    if (window_->Trigger(word == "start", spool::kMarkerControlFile, &edge, &ended)) {
      LogInfo(std::string("capture ") + (word == "start" ? "on" : "off") + " (control file " + control_path_ + ")");
      if (spool != nullptr) {
        spool->WriteMarker(edge);
      } else {
        pending_.push_back(edge);
      }
    } else if (ended != nullptr) {
      LogWarn(std::string("KATRACE_CONTROL ") + control_path_ + ": '" + word + "' while capture was already " +
              (word == "start" ? "on" : "off") + ": " + ended + " no longer applies; capture stays " +
              (word == "start" ? "on until a 'stop'" : "off until a 'start'"));
    }
  } else if (word == "dump") {
    // Nothing is captured yet at session start: a leftover "dump" there does nothing.
    if (spool == nullptr) return;
    edge.ticks = NowTicks();
    edge.what = spool::kMarkerDump;
    edge.reason = spool::kMarkerControlFile;
    spool->WriteMarker(edge);
    LogInfo("dump requested (control file " + control_path_ + "): " + spool->DumpNow("control file"));
  } else {
    LogWarn("KATRACE_CONTROL " + control_path_ + ": unknown word '" + ForMessage(word) +
            "' (use start, stop or dump); ignored");
  }
}

void CaptureTriggers::Poll(uint64_t now_ns, SpoolWriter* spool) {
  for (const spool::MarkerBody& m : pending_) spool->WriteMarker(m);
  pending_.clear();
  spool::MarkerBody edge{};
  if (window_->PollTime(now_ns, &edge)) spool->WriteMarker(edge);
  if (handler_installed_) {
    const char* ended = nullptr;  // a toggle always switches capture
    const uint32_t seen = g_toggle_signals.load(std::memory_order_relaxed);
    // Two signals between polls cancel out; each odd count is one toggle.
    if (((seen - signals_seen_) & 1) != 0 && window_->Trigger(!window_->open(), spool::kMarkerSignal, &edge, &ended)) {
      LogInfo(std::string("capture ") + (window_->open() ? "on" : "off") + " (" + SignalName(signal_) + ")");
      spool->WriteMarker(edge);
    }
    signals_seen_ = seen;
  }
  if (!control_path_.empty() && now_ns >= next_control_poll_ns_) {
    next_control_poll_ns_ = now_ns + kControlPollNs;
    // The tail is read at every look (one small pread every 100 ms): a rewrite with the same
    // size inside one mtime tick of the file system (ext4's is a jiffy) changes nothing stat
    // shows. Anything but a regular file is opened only when it changed (a device may act on
    // an open). The tail and the stamp it is compared with come from one open file (fstat, then
    // the bytes up to the size it saw): with the stamp of this stat, a word written between it
    // and the read would be acted on now and, its stamp changed, again at the next look.
    const FileStamp at_stat = StatControl();
    if (!(at_stat == control_stamp_) || at_stat.regular) {
      FileStamp stamp;
      const std::string tail = at_stat.exists ? ReadTail(&stamp) : std::string();
      if (!(stamp == control_stamp_) || tail != control_tail_) {
        control_stamp_ = stamp;
        control_tail_ = tail;
        if (stamp.exists) Apply(tail, spool);
      }
    }
  }
}

void CaptureTriggers::Stop() {
  if (!handler_installed_) return;
  handler_installed_ = false;
  struct sigaction current {};
  if (sigaction(signal_, nullptr, &current) == 0 && current.sa_handler == OnToggleSignal) {
    sigaction(signal_, &previous_, nullptr);
  }
}

}  // namespace katrace
