#include "fuzz/spool_export_input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>

#include <zlib.h>

#include "common/paths.h"
#include "katrace/spool_format.h"
#include "plugin/export/exporter.h"

namespace katrace_fuzz {
namespace {

namespace spool = katrace::spool;

// A scratch folder for one input's spool and trace, removed with them.
std::string MakeScratchDir() {
  std::string pattern = katrace::TempDir() + "/katrace-fuzz-XXXXXX";
  if (mkdtemp(&pattern[0]) == nullptr) {
    perror("katrace fuzz: cannot create a scratch folder");
    abort();
  }
  return pattern;
}

void FixBlockCrcs(std::string* file) {
  if (file->size() < sizeof(spool::FileHeader)) return;
  spool::FileHeader fh;
  memcpy(&fh, file->data(), sizeof(fh));
  if (fh.header_bytes < sizeof(fh) || fh.header_bytes > file->size()) return;
  uint64_t at = fh.header_bytes;
  while (file->size() - at >= sizeof(spool::BlockHeader)) {
    spool::BlockHeader h;
    memcpy(&h, file->data() + at, sizeof(h));
    const uint64_t left = file->size() - at - sizeof(h);
    if (h.magic != spool::kBlockMagic || h.stored_bytes > left) return;
    h.crc32 = 0;
    uLong crc = crc32(0, reinterpret_cast<const Bytef*>(&h), sizeof(h));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(file->data() + at + sizeof(h)), h.stored_bytes);
    h.crc32 = static_cast<uint32_t>(crc);
    memcpy(&(*file)[at], &h, sizeof(h));
    at += sizeof(h) + h.stored_bytes;
  }
}

}  // namespace

void ExportSpoolBytes(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const uint8_t mode = data[0];
  std::string file(reinterpret_cast<const char*>(data + 1), size - 1);
  if (mode & 1) FixBlockCrcs(&file);
  const std::string dir = MakeScratchDir();
  const std::string spool_path = dir + "/in.kspool";
  FILE* f = fopen(spool_path.c_str(), "wb");
  if (f == nullptr || fwrite(file.data(), 1, file.size(), f) != file.size() || fclose(f) != 0) {
    perror("katrace fuzz: cannot write the spool");
    abort();
  }
  katrace::ExportOptions options;
  // Never a path the spool names: a hostile Process record must not choose where to write.
  static const katrace::TraceFormat kFormats[4] = {katrace::TraceFormat::kJson, katrace::TraceFormat::kPerfetto,
                                                   katrace::TraceFormat::kNvtxt, katrace::TraceFormat::kJson};
  options.format = kFormats[(mode >> 2) & 3];
  options.output = dir + "/out" + katrace::TraceFormatExtension(*options.format);
  options.summary = false;
  if (mode & 16) options.summary_path = dir + "/summary.txt";
  options.progress = false;
  options.threads = (mode & 2) ? 1 : 2;
  const katrace::ExportReport report = katrace::ExportSpool(spool_path, options);
  if (report.ok && access(options.output.c_str(), F_OK) != 0) {
    fprintf(stderr, "katrace fuzz: the export said ok but wrote no trace: %s\n", report.message.c_str());
    abort();
  }
  if (!report.ok && report.message.empty()) {
    fprintf(stderr, "katrace fuzz: the export failed without saying why\n");
    abort();
  }
  unlink(options.output.c_str());
  if (!options.summary_path.empty()) unlink(options.summary_path.c_str());
  unlink(spool_path.c_str());
  // Whatever else is left there (a temporary file of the trace) the export failed to clean up.
  if (rmdir(dir.c_str()) != 0) {
    fprintf(stderr, "katrace fuzz: the export left files in %s (%s)\n", dir.c_str(), strerror(errno));
    abort();
  }
}

}  // namespace katrace_fuzz
