#!/usr/bin/env bash
# Runs every benchmark recorded in BENCHMARKS.md, in one go on one machine, so the figures can be
# compared with each other. Usage: bench/run_benchmarks.sh [BUILD_DIR]  (default: build)
set -euo pipefail
build=${1:-build}
plugin=$build/libnccl-profiler-katrace.so
out=$build/bench-out
mkdir -p "$out"

echo "## Instructions, locked operations and clock reads per callback of a sustained collective"
"$build/test/test_hot_path_cost" --gtest_filter='*EveryCallback*' 2>/dev/null | sed -n '/one sustained collective/,/all 13/p'

echo
echo "## Callback cost through the exported ABI (median of 10 repetitions)"
"$build/bench/plugin_callback_bench" "$plugin" --benchmark_repetitions=10 --benchmark_min_time=0.05 \
  --benchmark_report_aggregates_only=true 2>&1 | grep -E '^Benchmark|_median|_stddev'

echo
echo "## Sustained: NCCL's 13-callback collective back to back, katrace vs. the null plugin"
echo "(mask coll,kernelch, spool on the real disk, 2,000,000 collectives; three runs)"
for run in 1 2 3; do
  KATRACE_MASK=coll,kernelch KATRACE_OUTPUT="$out/sustained.json" KATRACE_SUMMARY=0 \
    "$build/bench/sustained_bench" 2000000 "$plugin" "$build/test/libnccl-profiler-null.so" 2>&1 | grep -v '^katrace:'
  rm -f "$out/sustained.json"*
done

echo
echo "## Capture into the spool, then export at finalize (Coll events; spool and trace on disk)"
for n in 1000000 10000000; do
  "$build/bench/writer_bench" "$plugin" "$n" "$out/writer-$n.json"
  rm -f "$out/writer-$n.json"*
done
echo "(1 Coll + 3 KernelCh children each)"
"$build/bench/writer_bench" "$plugin" 1000000 "$out/writer-mixed.json" 3
rm -f "$out/writer-mixed.json"*

echo
echo "## The spool writer's own capacity, fed by the cheapest producer (best of four runs each)"
for mode in lz4 none; do
  for run in 1 2 3 4; do "$build/bench/spool_writer_bench" 20000000 "$out" "$mode" | sed -n 2p; done
done

echo
echo "## The demo's spool: bytes per event"
rm -rf "$out/demo-spool" && mkdir -p "$out/demo-spool"
KATRACE_KEEP_SPOOL=1 KATRACE_SUMMARY=0 KATRACE_OUTPUT="$out/demo-spool/demo.json" "$build/bin/katrace-sim" \
  --plugin "$plugin" --ranks 4 --channels 4 --iters 20 2>&1 | grep -E 'events, [0-9]+ lost'
echo "spool: $(stat -c %s "$out/demo-spool/demo.json.kspool") bytes"
rm -rf "$out/demo-spool"

echo
echo "## Export alone: a generated spool to JSON"
for n in 1000000 10000000; do
  /usr/bin/time -f "peak RSS %M KiB, %e s wall, %U s user" "$build/bench/export_bench" "$n" "$out" 2>&1
done

echo
echo "## The same simulated workload through katrace and through a plugin that records nothing"
for p in "$plugin" "$build/test/libnccl-profiler-null.so"; do
  KATRACE_OUTPUT=/dev/null KATRACE_SUMMARY=0 "$build/bin/katrace-sim" --plugin "$p" --bench --ranks 4 \
    --channels 4 --iters 200 --size 64K 2>&1 | grep -E 'plugin "|callbacks|mean'
done

echo
echo "## KernelStep drain"
"$build/bench/drain_bench" 2>&1 | grep -vE '^(\*\*\*|WARNING)'

echo
echo "## Trace tools on 64 rank files"
bench/tools_bench.sh "$build"

echo
echo "## Capture window: a callback outside the window against a masked-out one (10 alternating rounds)"
"$build/bench/window_bench" 1000000 10 "$plugin" "$out" 2>&1 | grep -v '^katrace: trace'
rm -f "$out"/window-bench*.json*

echo
echo "## Capture window: 1,000 collectives of 100,000 (katrace-sim, 4 ranks, one allreduce per group)"
/usr/bin/time -f "%e s wall, peak RSS %M KiB" env KATRACE_DELAY=50000colls KATRACE_DURATION=1000colls \
  KATRACE_OUTPUT="$out/window.json" "$build/bin/katrace-sim" --ranks 4 --iters 25000 --ops allreduce --size 4K \
  --quiet 2>&1 | grep -v '^katrace: trace'
for cat in GroupApi CollApi Coll KernelCh KernelStep ProxyOp; do
  printf '%s %s\n' "$cat" "$(grep -o "\"cat\":\"$cat\"" "$out/window.json" | wc -l)"
done
grep -o '"name":"capture o[nf]*","cat":"katrace"[^}]*}' "$out/window.json"
"$build/bin/katrace-check" "$out/window.json" | tail -1
rm -f "$out/window.json"*
echo
echo "## The flight recorder's resident memory, sustained (KATRACE_FLIGHT_MB=64, 20 s; three runs)"
for run in 1 2 3; do
  KATRACE_FLIGHT_MB=64 KATRACE_OUTPUT="$out/flight.json" KATRACE_SUMMARY=0 \
    "$build/bench/flight_rss_bench" "$plugin" 20 2>&1
done
