#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs the tests of a host build made with gcov's counters and holds its line and branch coverage against
# ci/coverage-baseline.txt. ci/test.sh's host target (Debug, AddressSanitizer, TESSERA_COVERAGE=ON) calls it on
# its build directory in place of a plain ctest; alone, `TESSERA_TARGETS=host TESSERA_SKIP_FUZZ=1 ci/test.sh`
# builds that directory and runs it. On BUILD_DIR, already built:
#   1. replays each fuzzer's seed corpus alone (ctest's fuzz_replay_<name>) and prints what it reaches: the files
#      of the decoder it exists for, and src/ as a whole;
#   2. runs ctest once, every test, its output in BUILD_DIR/ctest.log (and on standard output), and prints lines
#      and branches per directory of src/, port/, tools/ and include/ and per component;
#   3. compares every figure with the baseline: one more than 0.1 point, and more than one line or branch of its
#      row, below its row fails (ci/coverage.py check; the fallen rows also go to BUILD_DIR/coverage-check.txt).
# gcovr: --exclude-unreachable-branches and --exclude-throw-branches (branches the compiler adds for code with no
# source of its own and for exceptions, which the core does not have); see docs/quality.md. AddressSanitizer adds
# no branch gcov counts; UndefinedBehaviorSanitizer's checks would (a fifth more): that one runs on other targets.
#
# Usage: ci/coverage.sh BUILD_DIR
# Environment: TESSERA_JOBS (default 2), COVERAGE_WRITE_BASELINE=1 (write the measured figures as the new
# baseline instead of checking them), COVERAGE_SKIP_FUZZERS=1 (no per-fuzzer figures, and their baseline rows
# are not checked).
# Exit status: 0 when every test passed and no figure fell, 1 when a figure fell (or gcovr failed), 2 when a
# test failed.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${1:?usage: ci/coverage.sh BUILD_DIR}
[[ $dir == /* ]] || dir=$PWD/$dir
jobs=${TESSERA_JOBS:-2}
baseline=$repo/ci/coverage-baseline.txt
[[ -f $dir/CMakeCache.txt ]] || { echo "ci/coverage.sh: $dir is not a build directory"; exit 1; }
grep -q '^TESSERA_COVERAGE:BOOL=ON' "$dir/CMakeCache.txt" ||
  { echo "ci/coverage.sh: $dir is not built with TESSERA_COVERAGE=ON"; exit 1; }

# gcovr's JSON summary of the counters now in $dir, restricted to the project's own sources.
summary() { # OUTPUT
  TESSERA_JOBS=$jobs python3 "$repo/ci/coverage.py" measure "$repo" "$dir" "$1"
}
zero_counters() { find "$dir" -name '*.gcda' -delete; }

rows_fuzz=$dir/coverage-fuzzers.txt
rm -f "$dir/coverage-check.txt"
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

echo "---- ctest"
zero_counters
ctest --test-dir "$dir" -j "$jobs" --output-on-failure --no-tests=error 2>&1 | tee "$dir/ctest.log"
((PIPESTATUS[0] == 0)) || failed=1

rows=$dir/coverage-table.txt
summary "$dir/coverage.json" || { echo "ci/coverage.sh: gcovr FAILED"; exit 1; }
python3 "$repo/ci/coverage.py" table "$dir/coverage.json" >"$rows"
echo "---- coverage per directory (gcovr; lines and branches), against ci/coverage-baseline.txt"
cat "$rows"

if [[ ${COVERAGE_WRITE_BASELINE:-0} == 1 ]]; then
  {
    echo "# SPDX-License-Identifier: BSD-3-Clause"
    echo "# Coverage baseline of ci/test.sh's host target (Debug, AddressSanitizer, gcov; ci/coverage.sh): lines and"
    echo "# branches per directory, and what each fuzzer's corpus reaches of its decoder. The target fails when a"
    echo "# figure falls more than 0.1 point (and one line or branch) below its row. Written by COVERAGE_WRITE_BASELINE=1 with"
    echo "# TESSERA_TARGETS=host ci/test.sh; raise it when coverage rises."
    # A fuzzer's share of all of src/ is printed, not held: it falls whenever src/ grows elsewhere.
    sed -E 's/^ +//' "$rows" "$rows_fuzz" | grep -v '^fuzz:[a-z0-9_]*:src/'
  } >"$baseline"
  echo "ci/coverage.sh: wrote $baseline"
  check=0
else
  check_rows=("$rows")
  baseline_used=$baseline
  if [[ ${COVERAGE_SKIP_FUZZERS:-0} == 1 ]]; then
    baseline_used=$dir/coverage-baseline-nofuzz.txt
    grep -v '^fuzz:' "$baseline" >"$baseline_used"
  else
    check_rows+=("$rows_fuzz")
  fi
  python3 "$repo/ci/coverage.py" check "$baseline_used" "${check_rows[@]}" | tee "$dir/coverage-check.txt"
  check=${PIPESTATUS[0]}
fi

((failed)) && exit 2
((check == 0)) || exit 1
exit 0
