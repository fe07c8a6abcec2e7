// The spool on disk: opened exclusively (never another process's file, never an earlier run's
// spool), written one framed block per write() so that a block is on disk whole or not at all.
// A failed or short write is cut back off the file, counted and reported once; later blocks are
// still tried, so a full disk that frees up loses only what was written while it was full.
#ifndef KATRACE_PLUGIN_CAPTURE_SPOOL_FILE_H_
#define KATRACE_PLUGIN_CAPTURE_SPOOL_FILE_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "katrace/spool_format.h"

namespace katrace {

class SpoolFile {
 public:
  SpoolFile() = default;
  ~SpoolFile();
  SpoolFile(const SpoolFile&) = delete;
  SpoolFile& operator=(const SpoolFile&) = delete;

  // Creates "<trace_path>.kspool", or a name with the pid (and a counter) when that exists; when
  // the directory is not writable, the same name in $TMPDIR (or /tmp), and |*note| says so. A
  // trace that is a device or a pipe spools in $TMPDIR.
  // False with |*error| when nothing could be created.
  bool Create(const std::string& trace_path, int os_pid, bool compress, std::string* note, std::string* error);

  // Frames |raw| (|raw_bytes| of whole records) as one block and writes it, compressed when the
  // file compresses and |compress| allows it.
  void WriteBlock(uint32_t stream, uint32_t os_tid, const uint8_t* raw, uint32_t raw_bytes, bool compress = true);
  // Writes a block framed earlier (by the flight recorder), renumbered to follow this file's.
  void WriteFramed(const spool::BlockHeader& header, const uint8_t* payload, uint32_t payload_crc);
  void Close();

  const std::string& path() const { return path_; }
  uint64_t bytes() const { return offset_; }
  uint64_t blocks() const { return sequence_; }
  uint64_t io_errors() const { return io_errors_; }
  uint64_t raw_bytes() const { return raw_total_; }

 private:
  // One block: |frame| (n bytes), then |rest| (rest_n bytes, the payload when it was not copied
  // into the frame). On a failed write the file is cut back to where the block began.
  void Append(const uint8_t* frame, size_t n, const uint8_t* rest, size_t rest_n, uint32_t raw_bytes);
  bool WriteAll(const uint8_t* data, size_t n, int* err);
  bool WriteHeader(int os_pid, std::string* error);

  int fd_ = -1;
  std::string path_;
  bool compress_ = false;
  uint64_t offset_ = 0;
  uint64_t sequence_ = 0;
  uint64_t io_errors_ = 0;
  uint64_t raw_total_ = 0;
  std::vector<uint8_t> frame_, coded_;  // a block on its way out: framed, and delta-coded before LZ4
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CAPTURE_SPOOL_FILE_H_
