#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The `tessera` tool on the issue-13 array: 400^3 float32 (256 MB raw), LZ4 + shuffle, chunks 100^3, blocks
# 25^3, smooth data (sin(i/97)*1000 + i*0.01, as bench/bench_array.cpp). Prints, for a Release build:
#   create  from the raw file: wall time, MB/s, peak RSS (GNU time's "Maximum resident set size": getrusage)
#   dump    --format raw -o /dev/null: the same, against the library's own whole-array read (tessera_bench_array
#           whole/b25 with 1 and 2 threads, pread) on the same data
# and checks the goals: dump and create peak RSS <= 64 MiB. Not part of ctest (timings).
# Usage: ci/tool-bench.sh [BUILD_DIR (default build-release)] [THREADS (default: the tool's default, the online CPUs)]
# Needs: /usr/bin/time (Debian package time), /usr/bin/python3 with numpy (python3-numpy) to make the data.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$repo/build-release}
[[ $build == /* ]] || build=$repo/$build
threads=${2:-}
tool=$build/tools/tessera
bench=$build/bench/tessera_bench_array
work=${TMPDIR:-/tmp}/tessera-tool-bench
mkdir -p "$work"
for f in "$tool" "$bench" /usr/bin/time; do
  [[ -x $f ]] || { echo "tool-bench: $f is missing (build tessera and tessera_bench_array; apt-get install time)"; exit 1; }
done
targs=()
[[ -n $threads ]] && targs=(--threads "$threads")

raw=$work/a.raw
if [[ ! -f $raw || $(stat -c %s "$raw") != 256000000 ]]; then
  /usr/bin/python3 - "$raw" <<'PY'
import sys
import numpy as np
i = np.arange(400 ** 3, dtype=np.float64)
(np.sin(i / 97.0) * 1000.0 + i * 0.01).astype("<f4").tofile(sys.argv[1])
PY
fi

# measure LABEL CMD...: wall seconds and peak RSS (KiB) of one run (the best of 3 for the time).
measure() {
  local label=$1 best="" rss=0
  shift
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" >/dev/null
    read -r t m <"$work/time.txt"
    if [[ -z $best ]] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
    ((m > rss)) && rss=$m
  done
  printf '%-44s %7.3f s  %8.1f MB/s  peak RSS %6.1f MiB\n' "$label" "$best" \
    "$(awk "BEGIN{print 256/($best > 0 ? $best : 1e-9)}")" "$(awk "BEGIN{print $rss/1024}")"
  eval "${label%% *}_time=$best ${label%% *}_rss=$rss"
}

arr=$work/a.b2nd
measure "create (raw file -> cframe)" "$tool" create "$arr" --dtype '<f4' --shape 400,400,400 --chunks 100,100,100 \
  --blocks 25,25,25 --codec lz4 --filters shuffle --input "$raw" "${targs[@]}" --quiet
measure "dump (--format raw -o /dev/null)" "$tool" dump "$arr" --format raw -o /dev/null "${targs[@]}" --quiet
"$tool" dump "$arr" -o "$work/back.raw" "${targs[@]}" --quiet
cmp -s "$work/back.raw" "$raw" || { echo "tool-bench: dump does not return the input"; exit 1; }
rm -f "$work/back.raw"
echo "compressed: $(stat -c %s "$arr") bytes"

# The library's whole-array read of the same geometry and data (bench_array's own file).
echo "library, whole-array read (tessera_bench_array whole/b25, pread, in-process, real time):"
"$bench" --benchmark_filter='^whole/b25/threads:[12]$' --benchmark_min_time=1 2>/dev/null |
  grep -E '^whole/b25' | awk '{printf "  %-28s %8.1f ms\n", $1, $2}' | tee "$work/lib.txt"
lib2=$(awk '/threads:2/{print $2}' "$work/lib.txt")
echo "dump / library read (2 threads): $(awk "BEGIN{printf \"%.2f\", ($dump_time*1000)/$lib2}") x the library's time"
fail=0
((dump_rss <= 65536)) || { echo "GOAL MISSED: dump peak RSS $dump_rss KiB > 64 MiB"; fail=1; }
((create_rss <= 65536)) || { echo "GOAL MISSED: create peak RSS $create_rss KiB > 64 MiB"; fail=1; }
((fail == 0)) && echo "goals met: dump and create peak RSS <= 64 MiB"
exit $fail
