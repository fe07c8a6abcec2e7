#!/usr/bin/env bash
# katrace-merge and katrace-stats on 64 rank files written by the real plugin through katrace-sim
# (one process per rank, each with its own clock base), at least 5 million events in all: wall
# time and peak resident memory of each tool. Usage: bench/tools_bench.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
dir=$build/bench-out/ranks
rm -rf "$dir"
mkdir -p "$dir"
echo "generating 64 rank files..."
for r in $(seq 0 63); do
  RANK=$r KATRACE_SUMMARY=0 KATRACE_OUTPUT="$dir/rank-$r.json" \
    "$build/bin/katrace-sim" --plugin "$build/libnccl-profiler-katrace.so" --ranks 2 --channels 4 \
    --iters 180 --size 256K --seed "$r" --quiet
done
# Every trace event carries one "ph" key, and no string katrace writes holds that key's text.
events=$(cat "$dir"/rank-*.json | grep -o '"ph":' | wc -l)
echo "input: 64 files, $events events, $(du -sh "$dir" | cut -f1)"
measure() {  # measure LABEL COMMAND...
  local label=$1
  shift
  /usr/bin/time -f '%e %M' -o "$dir/.time" "$@" >/dev/null 2>"$dir/.err" || { cat "$dir/.err"; exit 1; }
  read -r secs kib <"$dir/.time"
  printf '%-28s %6.1f s   peak RSS %7.1f MiB\n' "$label" "$secs" "$(echo "$kib / 1024" | bc -l)"
}
measure "katrace-merge (JSON out)" "$build/bin/katrace-merge" -o "$dir/merged.json" "$dir"/rank-*.json
measure "katrace-merge (gzip out)" "$build/bin/katrace-merge" -o "$dir/merged.json.gz" "$dir"/rank-*.json
measure "katrace-stats (all reports)" "$build/bin/katrace-stats" "$dir"/rank-*.json
measure "katrace-check" "$build/bin/katrace-check" -q "$dir"/rank-*.json
rm -rf "$dir"
