// katrace-export: exports katrace spools to traces (see --help). Each spool becomes its own
// trace; one line per spool says what was recovered and, for a killed job's spool, where it was
// cut. A spool is removed once its trace is committed, unless --keep-spool.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/ends_with.h"
#include "common/paths.h"
#include "common/trace_format.h"
#include "plugin/export/exporter.h"
#include "plugin/export/spool_index.h"

namespace {

using katrace::Basename;
using katrace::EndsWith;

const char kUsage[] =
    "usage: katrace-export SPOOL... [-o OUT] [--format json|perfetto|nvtxt] [--keep-spool] [--quiet]\n"
    "                      [--threads N]\n"
    "\n"
    "Exports katrace spools (<trace>.kspool, what the plugin captures while a job runs) to traces.\n"
    "Each spool becomes its own trace; by default the trace path recorded in the spool.\n"
    "\n"
    "  -o OUT        with one spool: the trace file (- for standard output, or an existing\n"
    "                directory to put it in);\n"
    "                with several: an existing directory, or a name containing {pid} or {rank}\n"
    "                (a .gz name writes gzip)\n"
    "  --format F    json (Chrome JSON), perfetto (Perfetto protobuf) or nvtxt (Nsight Systems'\n"
    "                NVTXT); default: what OUT's extension says (.json, .pftrace, .nvtxt, each\n"
    "                optionally .gz), else JSON. Without -o, the recorded trace name takes the\n"
    "                format's extension\n"
    "  --keep-spool  keep each spool after its trace was written (default: remove it)\n"
    "  --quiet       no summary tables or progress lines; only failures are printed\n"
    "  --threads N   decode threads, 1..64 (default: up to 4)\n"
    "  --help        this text\n"
    "\n"
    "A spool cut short (a killed job) is exported up to its last whole block, and the line says\n"
    "where it was cut; a damaged block in the middle is skipped, said, and the spool kept. A trace\n"
    "that would overwrite a spool, or a trace written from another spool of the same run, is not\n"
    "written (that spool fails and is kept). Exit status: 0 when every spool was exported, 1 when\n"
    "any failed, 2 on a usage error.\n";

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The regular file at |path| (device and inode), when there is one: two names of one file compare
// equal. A device or pipe has none: writing it again overwrites nothing.
std::optional<std::pair<dev_t, ino_t>> FileIdentity(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return std::make_pair(st.st_dev, st.st_ino);
}

void ReplaceAll(std::string* s, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = s->find(from, at)) != std::string::npos; at += to.size()) s->replace(at, from.size(), to);
}

// The trace a spool goes to when the spool does not say (no Process record): beside it.
std::string BesideSpool(const std::string& spool) {
  return EndsWith(spool, ".kspool") ? spool.substr(0, spool.size() - 7) : spool + ".json";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> spools;
  std::string out;
  bool keep = false, quiet = false;
  int threads = 0;
  std::optional<katrace::TraceFormat> format;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      fputs(kUsage, stdout);
      return 0;
    } else if (a == "-o" || a == "--output") {
      if (i + 1 >= argc) {
        fprintf(stderr, "katrace-export: %s needs a value\n%s", a.c_str(), kUsage);
        return 2;
      }
      out = argv[++i];
    } else if (a == "--format") {
      katrace::TraceFormat f;
      if (i + 1 >= argc || !katrace::ParseTraceFormat(argv[i + 1], &f)) {
        fprintf(stderr, "katrace-export: --format needs json, perfetto or nvtxt%s%s%s\n", i + 1 < argc ? " (got '" : "",
                i + 1 < argc ? argv[i + 1] : "", i + 1 < argc ? "')" : "");
        return 2;
      }
      format = f;
      ++i;
    } else if (a == "--keep-spool") {
      keep = true;
    } else if (a == "--quiet" || a == "-q") {
      quiet = true;
    } else if (a == "--threads") {
      char* end = nullptr;
      long n = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
      if (i + 1 >= argc || *end != '\0' || n < 1 || n > 64) {
        fprintf(stderr, "katrace-export: --threads needs a number from 1 to 64\n");
        return 2;
      }
      threads = static_cast<int>(n);
      ++i;
    } else if (a.size() > 1 && a[0] == '-') {
      fprintf(stderr, "katrace-export: unknown option '%s'\n%s", a.c_str(), kUsage);
      return 2;
    } else {
      spools.push_back(a);
    }
  }
  if (spools.empty()) {
    fprintf(stderr, "katrace-export: no spool given\n%s", kUsage);
    return 2;
  }
  if (out == "-") out = "/dev/stdout";  // written in place, as any device
  bool out_is_dir = !out.empty() && IsDirectory(out);
  // A name that says one format holding another would mislead every reader of it.
  if (format && !out_is_dir && katrace::TraceExtensionLength(out) != 0 &&
      katrace::TraceFormatOfPath(out) != *format) {
    fprintf(stderr, "katrace-export: --format %s does not match -o '%s' (its name says %s)\n",
            katrace::TraceFormatName(*format), out.c_str(),
            katrace::TraceFormatName(katrace::TraceFormatOfPath(out)));
    return 2;
  }
  bool templated = out.find("{pid}") != std::string::npos || out.find("{rank}") != std::string::npos;
  if (spools.size() > 1 && !out.empty() && !out_is_dir && !templated) {
    fprintf(stderr,
            "katrace-export: with %zu spools, -o must be an existing directory or contain {pid} or {rank} "
            "(got '%s')\n",
            spools.size(), out.c_str());
    return 2;
  }
  if (EndsWith(out, "/") && !out_is_dir) {
    fprintf(stderr, "katrace-export: -o '%s' names a directory that does not exist\n", out.c_str());
    return 2;
  }
  int failed = 0;
  // The traces this run wrote, so that two spools given one name (the same recorded trace name,
  // a {rank} both share) never overwrite each other's trace.
  std::set<std::pair<dev_t, ino_t>> written;
  for (const std::string& spool : spools) {
    katrace::spool::ProcessBody process{};
    std::string host, recorded, peek_error;
    bool peeked = katrace::exporting::PeekSpoolProcess(spool, &process, &host, &recorded, &peek_error);
    katrace::ExportOptions o;
    o.summary = !quiet;
    o.progress = !quiet;
    o.threads = threads;
    o.format = format;
    o.fallback_to_temp_dir = false;  // a name the user gave or can change: never a file in $TMPDIR instead
    // A name of ours (recorded or beside the spool) takes the chosen format's extension.
    auto named = [&](const std::string& name) { return format ? katrace::WithTraceFormat(name, *format) : name; };
    if (out.empty()) {
      o.output = peeked && !recorded.empty() ? (format ? named(recorded) : "") : named(BesideSpool(spool));
    } else if (out_is_dir) {
      std::string name = peeked && !recorded.empty() ? Basename(recorded) : Basename(BesideSpool(spool));
      o.output = out + (EndsWith(out, "/") ? "" : "/") + named(name);
    } else {
      o.output = out;
      ReplaceAll(&o.output, "{pid}", std::to_string(peeked ? process.os_pid : 0));
      ReplaceAll(&o.output, "{rank}", std::to_string(peeked && process.rank >= 0 ? process.rank : 0));
    }
    // Where it will go, to compare with the spool and with the traces already written.
    const std::string target = !o.output.empty() ? o.output : peeked ? recorded : "";
    const auto target_file = FileIdentity(target);
    if (target_file && target_file == FileIdentity(spool)) {
      ++failed;
      fprintf(stderr,
              "katrace-export: error: %s: the trace '%s' would overwrite the spool itself; give -o another name\n",
              spool.c_str(), target.c_str());
      continue;
    }
    if (target_file && written.count(*target_file) != 0) {
      ++failed;
      fprintf(stderr,
              "katrace-export: error: %s: its trace '%s' was written from another spool of this run; the spool is "
              "kept (give -o a name with {pid} or {rank} that tells them apart, or export it alone)\n",
              spool.c_str(), target.c_str());
      continue;
    }
    katrace::ExportReport r = katrace::ExportSpool(spool, o);
    if (r.ok) {
      if (const auto id = FileIdentity(r.trace_path)) written.insert(*id);
    } else {
      ++failed;
      fprintf(stderr, "katrace-export: error: %s\n", r.message.c_str());
      continue;
    }
    if (!quiet) fprintf(stderr, "katrace-export: %s\n", r.message.c_str());
    if (!keep && r.damaged_blocks != 0) {
      fprintf(stderr, "katrace-export: the spool '%s' is kept: it has damaged blocks\n", spool.c_str());
      continue;
    }
    if (!keep && unlink(spool.c_str()) != 0) {
      fprintf(stderr, "katrace-export: warning: cannot remove '%s': %s\n", spool.c_str(), strerror(errno));
    }
  }
  return failed == 0 ? 0 : 1;
}
