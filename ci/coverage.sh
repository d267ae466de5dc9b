#!/usr/bin/env bash
# Line and branch coverage of the host build, held against ci/coverage-baseline.txt.
#   1. configures and builds the host in Debug with gcov instrumentation (--coverage -fprofile-update=atomic: the
#      threaded tests would otherwise race on the counters) into BUILD_DIR (default build/coverage);
#   2. replays each fuzzer's seed corpus alone (ctest's fuzz_replay_<name>) and prints what it reaches: the files
#      of the decoder it exists for, and src/ as a whole;
#   3. runs ctest once (every test but those labelled `consumer`: they build small projects against an installed
#      tree with their own flags and reach nothing of the instrumented build) and prints lines and branches per
#      directory of src/, port/, tools/ and include/ and per component;
#   4. compares every figure with the baseline: exit 1 when one is more than 0.1 point below it, or a test failed.
# gcovr: --exclude-unreachable-branches and --exclude-throw-branches (branches the compiler adds for code with no
# source of its own and for exceptions, which the core does not have); see docs/quality.md.
#
# Usage: ci/coverage.sh [BUILD_DIR]
# Environment: TESSERA_JOBS (default 2), SHARED_DIR (golden files; default ../shared), TESSERA_SKIP_DEPS=1 (do not
# run install-deps.sh), COVERAGE_WRITE_BASELINE=1 (write the measured figures as the new baseline instead of
# checking them), COVERAGE_SKIP_FUZZERS=1 (no per-fuzzer figures, and their baseline rows are not checked).
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 1
dir=${1:-build/coverage}
[[ $dir == /* ]] || dir=$repo/$dir
jobs=${TESSERA_JOBS:-2}
baseline=$repo/ci/coverage-baseline.txt
start_all=$SECONDS

if [[ ${TESSERA_SKIP_DEPS:-0} != 1 ]] && ! command -v gcovr >/dev/null; then
  TESSERA_TARGETS=host bash "$repo/ci/install-deps.sh" || { echo "ci/coverage.sh: installing gcovr failed"; exit 1; }
fi

flags="--coverage -fprofile-update=atomic"
args=(-G Ninja -DCMAKE_BUILD_TYPE=Debug -DTESSERA_BUILD_TESTS=ON -DTESSERA_BUILD_BENCH=OFF
      -DTESSERA_CHECK_FREESTANDING=OFF  # gcov's runtime (__gcov_*) is a hosted symbol by construction
      "-DCMAKE_C_FLAGS=$flags" "-DCMAKE_CXX_FLAGS=$flags" -DCMAKE_EXE_LINKER_FLAGS=--coverage
      -DCMAKE_SHARED_LINKER_FLAGS=--coverage)
[[ -n ${SHARED_DIR:-} ]] && args+=("-DTESSERA_SHARED_DIR=$SHARED_DIR")
mkdir -p "$dir"
cmake -S "$repo" -B "$dir" "${args[@]}" >"$dir/configure.log" 2>&1 ||
  { cat "$dir/configure.log"; echo "ci/coverage.sh: configure FAILED"; exit 1; }
ninja -C "$dir" -j "$jobs" || { echo "ci/coverage.sh: build FAILED"; exit 1; }
build_seconds=$((SECONDS - start_all))

# gcovr's JSON summary of the counters now in $dir, restricted to the project's own sources.
summary() { # OUTPUT
  TESSERA_JOBS=$jobs python3 "$repo/ci/coverage.py" measure "$repo" "$dir" "$1"
}
zero_counters() { find "$dir" -name '*.gcda' -delete; }

rows_fuzz=$dir/coverage-fuzzers.txt
: >"$rows_fuzz"
failed=0
if [[ ${COVERAGE_SKIP_FUZZERS:-0} != 1 ]]; then
  echo "---- each fuzzer's corpus alone (ctest fuzz_replay_<name>): its decoder's files, then src/"
  mapfile -t fuzzers < <(ctest --test-dir "$dir" -N -R '^fuzz_replay_' | sed -nE 's/^ *Test +#[0-9]+: fuzz_replay_(.*)$/\1/p')
  for fuzzer in "${fuzzers[@]}"; do
    zero_counters
    if ! ctest --test-dir "$dir" -R "^fuzz_replay_${fuzzer}\$" --output-on-failure >"$dir/fuzz_$fuzzer.log" 2>&1; then
      cat "$dir/fuzz_$fuzzer.log"
      failed=1
    fi
    summary "$dir/coverage-fuzz-$fuzzer.json" && python3 "$repo/ci/coverage.py" fuzzer "$fuzzer" \
      "$dir/coverage-fuzz-$fuzzer.json" | tee -a "$rows_fuzz"
  done
fi

echo "---- ctest (all but the label consumer)"
zero_counters
ctest_start=$SECONDS
ctest --test-dir "$dir" -j "$jobs" --output-on-failure -LE consumer >"$dir/ctest.log" 2>&1 || failed=1
grep -E '^[0-9]+% tests passed|^The following tests FAILED|^ *[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess)' \
  "$dir/ctest.log"
ctest_seconds=$((SECONDS - ctest_start))

rows=$dir/coverage-table.txt
summary "$dir/coverage.json" || { echo "ci/coverage.sh: gcovr FAILED"; exit 1; }
python3 "$repo/ci/coverage.py" table "$dir/coverage.json" >"$rows"
echo "---- coverage per directory (gcovr; lines and branches)"
cat "$rows"

if [[ ${COVERAGE_WRITE_BASELINE:-0} == 1 ]]; then
  {
    echo "# Coverage baseline of ci/coverage.sh (Debug host build, gcovr): lines and branches per directory, and"
    echo "# what each fuzzer's corpus reaches of its decoder. ci/coverage.sh fails when a figure falls more than 0.1"
    echo "# point below its row here. Written by COVERAGE_WRITE_BASELINE=1 ci/coverage.sh; raise it when coverage rises."
    # A fuzzer's share of all of src/ is printed, not held: it falls whenever src/ grows elsewhere.
    sed -E 's/^ +//' "$rows" "$rows_fuzz" | grep -v '^fuzz:[a-z0-9_]*:src/'
  } >"$baseline"
  echo "ci/coverage.sh: wrote $baseline"
  check=0
else
  check_rows=("$rows")
  if [[ ${COVERAGE_SKIP_FUZZERS:-0} != 1 ]]; then
    check_rows+=("$rows_fuzz")
  fi
  baseline_used=$baseline
  if [[ ${COVERAGE_SKIP_FUZZERS:-0} == 1 ]]; then
    baseline_used=$dir/coverage-baseline-nofuzz.txt
    grep -v '^fuzz:' "$baseline" >"$baseline_used"
  fi
  python3 "$repo/ci/coverage.py" check "$baseline_used" "${check_rows[@]}"
  check=$?
fi

echo "ci/coverage.sh: build ${build_seconds} s, ctest ${ctest_seconds} s, total $((SECONDS - start_all)) s"
if ((failed)); then
  echo "ci/coverage.sh: tests FAILED"
fi
((failed == 0 && check == 0))
