#!/usr/bin/env bash
# Makes the virtual environment the Perfetto schema test decodes .pftrace files in: PyPI's
# `perfetto` (its generated perfetto_trace_pb2) and `protobuf` >= 6.31. Writes DIR/STATUS: "ok",
# or one line saying why the environment could not be made (no python3, no venv module, PyPI not
# reachable), which the test prints when it skips. Never fails the build: the test needs it, the
# build does not. Run once per tree; several makes may call it at once (a lock serializes them).
#   scripts/perfetto_venv.sh DIR
set -u
dir=${1:?usage: scripts/perfetto_venv.sh DIR}
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
command -v flock >/dev/null 2>&1 && flock 9
[ -f "$dir/STATUS" ] && { touch "$dir/STATUS"; exit 0; }  # made before (rm -rf DIR to retry)
status() { mkdir -p "$dir" && echo "$*" >"$dir/STATUS"; exit 0; }
command -v python3 >/dev/null 2>&1 || status "no python3 (apt-get install -y python3-venv)"
python3 -c 'import ensurepip, venv' 2>/dev/null || status "python3 has no venv/ensurepip (apt-get install -y python3-venv)"
rm -rf "$dir"
python3 -m venv "$dir" >/dev/null 2>&1 || status "python3 -m venv $dir failed"
if ! timeout 300 "$dir/bin/pip" install --quiet --disable-pip-version-check 'protobuf>=6.31' perfetto \
    >"$dir/pip.log" 2>&1; then
  status "pip could not install perfetto and protobuf from PyPI (see $dir/pip.log): $(tail -n 1 "$dir/pip.log")"
fi
"$dir/bin/python" -c 'from perfetto.protos.perfetto.trace import perfetto_trace_pb2' 2>"$dir/import.log" ||
  status "perfetto_trace_pb2 does not import (see $dir/import.log)"
echo "perfetto schema: $("$dir/bin/pip" show perfetto 2>/dev/null | sed -n 's/^Version: /perfetto /p'), $("$dir/bin/pip" show protobuf 2>/dev/null | sed -n 's/^Version: /protobuf /p') in $dir"
status ok
