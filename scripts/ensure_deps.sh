#!/usr/bin/env bash
# Makes sure the build's Debian packages are present; installs the missing ones when run as root
# (as on CI and a fresh machine), otherwise prints the command to run. Fast when nothing is missing.
set -u
missing=()
need() {  # need PACKAGE TEST...
  local pkg=$1
  shift
  "$@" >/dev/null 2>&1 || missing+=("$pkg")
}
need g++ command -v g++
need make command -v make
need binutils command -v nm
need zlib1g-dev test -f /usr/include/zlib.h
need nlohmann-json3-dev test -f /usr/include/nlohmann/json.hpp
need libgtest-dev test -f /usr/include/gtest/gtest.h
need libbenchmark-dev test -f /usr/include/benchmark/benchmark.h
need liblz4-dev test -f /usr/include/lz4.h
need python3-venv python3 -c 'import ensurepip, venv'  # the Perfetto schema test's environment
need time test -x /usr/bin/time  # benchmarks only
need bc command -v bc            # benchmarks only
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing packages: ${missing[*]}" >&2
  echo "install them with: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq && apt-get install -y -qq "${missing[@]}" >&2
