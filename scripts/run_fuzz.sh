#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang and fuzzes each for SECONDS, starting from
# the committed seeds in fuzz/corpus/<target>/. A crash input is kept in fuzz/regressions/<target>/
# (commit it: the replay test in the normal suites then runs it forever after) and fails the run.
# fuzz_abi_stream loads a copy of the plugin built here with the same instrumentation, so that
# its coverage guides the fuzzer (the plain .so would leave it blind to everything past the ABI).
# Without clang or libFuzzer it says so in one line and succeeds: fuzzing is optional.
#   scripts/run_fuzz.sh SECONDS BUILD
set -u
seconds=${1:-60} build=${2:-build}
cxx=${FUZZ_CXX:-clang++}
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "fuzz: skipped: no $cxx (install clang, e.g. apt-get install -y clang)"
  exit 0
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' \
  >"$probe/p.cc"
if ! "$cxx" -fsanitize=fuzzer "$probe/p.cc" -o "$probe/p" >/dev/null 2>&1; then
  echo "fuzz: skipped: $cxx has no libFuzzer (-fsanitize=fuzzer)"
  exit 0
fi
out="$build/fuzz"
obj="$out/obj"
mkdir -p "$out"
# Not -fsanitize=function: fuzz_abi_stream calls recordEventState with a plain int state, as
# NCCL's C code does, through a pointer whose type says int where the plugin's says the enum.
flags=(-std=c++17 -O1 -g1 -Iinclude -I. -Wall -Wextra -Werror -fsanitize=fuzzer,address,undefined
       -fno-sanitize=function -fno-sanitize-recover=all -pthread -fPIC)
plugin="$out/libnccl-profiler-katrace-fuzz.so"
sources_of() {  # the sources of one target; the objects are shared, each source compiled once
  local tools_common shared_common
  tools_common=$(ls tools/common/*.cc)
  shared_common=$(ls common/*.cc)
  case $1 in
    # The plugin's own sources, as plugin/module.mk builds the .so (PLUGIN_SRCS).
    plugin) echo plugin/*.cc plugin/capture/*.cc plugin/export/*.cc common/summary_table.cc \
      common/file_writer.cc common/output_file.cc common/busy_time.cc common/activity_summary.cc \
      common/event_mask.cc common/duration.cc common/crc32.cc ;;
    fuzz_abi_stream) echo fuzz/fuzz_abi_stream.cc fuzz/abi_stream.cc ;;
    fuzz_trace_reader) echo fuzz/fuzz_trace_reader.cc fuzz/trace_reader_input.cc fuzz/bytes_file.cc \
      $tools_common $shared_common ;;
    # The export stage as tools/export/module.mk links it (EXPORT_LIB_OBJS).
    fuzz_spool_export) echo fuzz/fuzz_spool_export.cc fuzz/spool_export_input.cc plugin/export/*.cc \
      common/output_file.cc common/file_writer.cc common/summary_table.cc \
      common/busy_time.cc common/activity_summary.cc common/crc32.cc ;;
    fuzz_trace_tools) echo fuzz/fuzz_trace_tools.cc fuzz/trace_tools_input.cc fuzz/bytes_file.cc \
      $(ls tools/check/*.cc tools/stats/*.cc tools/merge/*.cc | grep -v /main.cc) $tools_common $shared_common ;;
  esac
}
targets="fuzz_abi_stream fuzz_trace_reader fuzz_spool_export fuzz_trace_tools"
compile() {  # compile SOURCE: its object under $obj; a failure leaves $obj/FAILED
  local o="$obj/${1%.cc}.o" extra=()
  case $1 in fuzz/fuzz_abi_stream.cc) extra=(-DKATRACE_FUZZ_DEFAULT_PLUGIN="\"$plugin\"") ;; esac
  mkdir -p "$(dirname "$o")"
  "$cxx" "${flags[@]}" "${extra[@]}" -c "$1" -o "$o" || touch "$obj/FAILED"
}
# Rebuilt whole when a source, a header or this script changed since the last build.
stamp="$out/built"
if [ ! -f "$stamp" ] || [ -n "$(find fuzz tools common plugin include scripts/run_fuzz.sh -newer "$stamp" \
    \( -name '*.cc' -o -name '*.h' -o -name run_fuzz.sh \) 2>/dev/null | head -n 1)" ]; then
  echo "fuzz: building $targets in $out"
  rm -rf "$obj" "$stamp"
  mkdir -p "$obj"
  # shellcheck disable=SC2046
  for src in $(for t in plugin $targets; do sources_of "$t"; done | tr ' ' '\n' | sort -u); do
    while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n; done
    compile "$src" &
  done
  wait
  [ -e "$obj/FAILED" ] && exit 1
  # The sanitizer runtimes are the fuzzer's; the plugin takes their symbols from it when loaded.
  # shellcheck disable=SC2046
  "$cxx" -shared -fsanitize=address,undefined -Wl,--version-script=plugin/exports.map \
    $(for src in $(sources_of plugin); do echo "$obj/${src%.cc}.o"; done) -o "$plugin" -lz -llz4 -ldl || exit 1
  for t in $targets; do
    # shellcheck disable=SC2046
    "$cxx" "${flags[@]}" $(for src in $(sources_of "$t"); do echo "$obj/${src%.cc}.o"; done) \
      -o "$out/$t" -lz -llz4 -ldl || exit 1
  done
  touch "$stamp"
fi
status=0
for target in $targets; do
  work="$out/corpus-$target"
  mkdir -p "$work" "fuzz/regressions/$target"
  echo "fuzz: $target for ${seconds}s"
  # The plugin's own outputs go to a scratch folder; ASan's leak check is off because the
  # plugin keeps process-lifetime state on purpose.
  if ! KATRACE_OUTPUT="$probe/trace-{pid}.json" KATRACE_SUMMARY=0 ASAN_OPTIONS=detect_leaks=0 \
      "$out/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="fuzz/regressions/$target/" -print_final_stats=0 \
      "$work" "fuzz/corpus/$target" >"$out/$target.log" 2>&1; then
    echo "fuzz: $target FAILED; the input is in fuzz/regressions/$target/ (log: $out/$target.log)"
    tail -n 30 "$out/$target.log"
    status=1
  else
    grep -E '^#[0-9]+[[:space:]]+DONE' "$out/$target.log" | tail -n 1 | sed "s/^/fuzz: $target: /"
  fi
done
exit $status
