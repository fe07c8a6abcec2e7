// Run-time triggers of the capture window: the control file (KATRACE_CONTROL) and the toggle
// signal (KATRACE_SIGNAL). Both are watched by the spool writer thread from its periodic hook, so
// nothing of this runs on NCCL's threads:
//   - the control file is looked at about every 100 ms; when it changed (mtime, size or inode,
//     or the text of its tail: a rewrite of the same size within the file system's mtime tick
//     leaves the rest alike), its last word is acted on: `start` and `stop` switch capture, `dump`
//     makes everything captured readable now (SpoolWriter::DumpNow). A missing file is normal
//     (it may be created later). A `start` while capture is on (or `stop` while it is off) ends
//     KATRACE_DURATION's (or KATRACE_DELAY's) say over it, as any trigger does: said in a warning.
//     It is read once at session start too, so a file that already says `stop` starts the job
//     with capture off (a `start` or `dump` left there does nothing);
//   - the signal's handler only bumps an atomic counter (async-signal-safe); the writer sees it
//     within a millisecond and toggles capture.
// Every switch and dump is written as a marker into the writer's own stream.
#ifndef KATRACE_PLUGIN_CAPTURE_CAPTURE_TRIGGERS_H_
#define KATRACE_PLUGIN_CAPTURE_CAPTURE_TRIGGERS_H_

#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "katrace/spool_format.h"
#include "plugin/capture/capture_window.h"
#include "plugin/capture/spool_writer.h"
#include "plugin/config.h"

namespace katrace {

class CaptureTriggers {
 public:
  // At session start, before the writer polls: reads the control file once and installs the
  // signal handler. Switches made now are written as markers by the first Poll.
  void Start(const Config& config, CaptureWindow* window);
  // Writer thread, about every millisecond.
  void Poll(uint64_t now_ns, SpoolWriter* spool);
  // Session close (after the writer stopped): the signal's previous disposition comes back, if
  // the handler is still ours.
  void Stop();

 private:
  struct FileStamp {
    bool exists = false;
    bool regular = false;
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const FileStamp& o) const {
      return exists == o.exists && dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns;
    }
  };
  static FileStamp StampOf(const struct stat& st);
  FileStamp StatControl() const;
  // The file's tail (its last kControlTailBytes) as of the fstat whose stamp is |*stamp|; "" when
  // it cannot be read or is not a regular file (warned once), and then a stamp of what was seen.
  std::string ReadTail(FileStamp* stamp);
  // Applies the last word of |text|; a dump is done at once when |spool| is given, else left
  // pending.
  void Apply(const std::string& text, SpoolWriter* spool);

  CaptureWindow* window_ = nullptr;
  std::string control_path_;
  FileStamp control_stamp_;
  std::string control_tail_;  // the tail read at the last look
  uint64_t next_control_poll_ns_ = 0;
  int signal_ = 0;
  bool handler_installed_ = false;
  bool not_regular_warned_ = false;  // the control file is a directory, a pipe, a device
  struct sigaction previous_ {};
  uint32_t signals_seen_ = 0;
  std::vector<spool::MarkerBody> pending_;  // switches made at Start, for the first Poll
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CAPTURE_CAPTURE_TRIGGERS_H_
