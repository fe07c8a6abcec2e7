#!/usr/bin/env bash
# How soon a hang is reported: katrace-sim injects one (--hang) into the real plugin with
# KATRACE_HANG_TIMEOUT=1s, RUNS times over different ranks, channels and depths; for each run, the
# delay from the last completion the watchdog saw to its detection (in the report) and to the
# report file being written (its mtime). Target: within the timeout plus 1 s.
# Usage: bench/hang_delay.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build}
runs=${2:-10}
dir=$build/bench-out/hang
rm -rf "$dir"
mkdir -p "$dir"
worst=0
for i in $(seq 1 "$runs"); do
  rank=$((i % 4)) channel=$(((i / 4) % 4)) after=$((3 + i))
  trace="$dir/run-$i.json"
  KATRACE_HANG_TIMEOUT=1s KATRACE_SUMMARY=0 KATRACE_OUTPUT="$trace" \
    KATRACE_MASK=coll,p2p,kernelch,kernelstep,proxyop,proxystep \
    "$build/bin/katrace-sim" --plugin "$build/libnccl-profiler-katrace.so" --ranks 4 --channels 4 \
    --iters 10 --hang "$rank:$channel:$after" --hang-for 2s --quiet 2>/dev/null
  report="$trace.hang.json"
  last=$(sed -n 's/.*"last_progress_realtime_ns":\([0-9]*\).*/\1/p' "$report")
  detected=$(sed -n 's/.*"report_realtime_ns":\([0-9]*\).*/\1/p' "$report")
  written=$(stat -c '%.9Y' "$report" | tr -d .)
  detect_ms=$(((detected - last) / 1000000))
  write_ms=$(((written - last) / 1000000))
  ((write_ms > worst)) && worst=$write_ms
  printf 'hang %d:%d:%-3d detected %5d ms, report written %5d ms after the last completion\n' \
    "$rank" "$channel" "$after" "$detect_ms" "$write_ms"
done
echo "worst: $worst ms (target: timeout 1000 ms + 1000 ms)"
