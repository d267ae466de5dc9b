#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A bounded libFuzzer run of every decoder fuzzer (tests/fuzz/): builds with clang and TESSERA_FUZZ=ON
# (-fsanitize=fuzzer,address,undefined) into build/fuzz, then runs each fuzzer for FUZZ_SECONDS on a temporary
# copy of its seed corpus (plus, for the chunk fuzzers, the reference's compatibility chunks; for the frame
# fuzzers, the reference's arrays of the n-d plugins), with its dictionary of the format's magic values
# (tests/fuzz/dict/<fuzzer>.dict, when there is one), so the repository is never modified. Any crash,
# sanitizer report, leak, timeout (-timeout=10 s per input) or memory blow-up
# (-rss_limit_mb=2048; the frame fuzzer, whose frames open with a 16 MiB max_alloc: -malloc_limit_mb=64 and
# -rss_limit_mb=512) is a finding: its input is kept in build/fuzz/artifacts/<fuzzer>/ and the run fails.
#
# Environment: FUZZ_SECONDS (per fuzzer, default 60), FUZZ_TARGETS (a subset, e.g. "chunk_decode msgpack_reader"),
# TESSERA_BUILD_ROOT (default build, relative to the repository), TESSERA_JOBS (build jobs, and fuzzers run at
# once: default 2),
# TESSERA_SKIP_DEPS=1 (do not install missing packages),
# FUZZ_CC / FUZZ_CXX (default clang-14 / clang++-14).
# Output: libFuzzer's log per fuzzer, then one summary line per fuzzer and a last line "N passed, M failed".
# Exit status 0 only when no fuzzer found anything.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 1

seconds=${FUZZ_SECONDS:-60}
jobs=${TESSERA_JOBS:-2}
build_root=${TESSERA_BUILD_ROOT:-build}
[[ $build_root == /* ]] || build_root=$repo/$build_root
dir=$build_root/fuzz
golden=$repo/tests/data/golden  # the reference-written test data (tests/data/README.md)
cc=${FUZZ_CC:-clang-14}
cxx=${FUZZ_CXX:-clang++-14}
all_fuzzers=(chunk_decode chunk_decode_block b2nd_meta_decode msgpack_reader blosclz_decompress frame_read array_view
             lz4_block_decode ndlz_decode ndcell ndmean)
read -r -a fuzzers <<<"${FUZZ_TARGETS:-${all_fuzzers[*]}}"

# The seed corpus of each fuzzer (the chunk fuzzers share one, and so do the frame fuzzers), and its dictionary.
corpus_of() {
  case $1 in
    chunk_decode | chunk_decode_block) echo "$repo/tests/fuzz/corpus/chunk" ;;
    array_view) echo "$repo/tests/fuzz/corpus/frame_read" ;;
    *) echo "$repo/tests/fuzz/corpus/$1" ;;
  esac
}
dict_of() {
  case $1 in
    chunk_decode | chunk_decode_block) echo "$repo/tests/fuzz/dict/chunk.dict" ;;
    array_view) echo "$repo/tests/fuzz/dict/frame_read.dict" ;;
    *) echo "$repo/tests/fuzz/dict/$1.dict" ;;
  esac
}

# ---- Dependencies: the project's list, then clang and its libFuzzer runtime (only what is missing).
if [[ ${TESSERA_SKIP_DEPS:-0} != 1 ]]; then
  if ! bash "$repo/ci/install-deps.sh"; then
    echo "ci/fuzz.sh: installing the dependencies failed"
    echo "0 passed, 1 failed"
    exit 1
  fi
  fuzz_packages=(clang-14 libclang-rt-14-dev)
  missing=()
  for package in "${fuzz_packages[@]}"; do
    [[ $(dpkg-query -W -f='${Status}' "$package" 2>/dev/null) == "install ok installed" ]] || missing+=("$package")
  done
  if ((${#missing[@]})); then
    echo "ci/fuzz.sh: installing ${missing[*]}"
    as_root=()
    [[ $(id -u) == 0 ]] || as_root=(sudo)
    if ! "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q ||
       ! "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"; then
      echo "ci/fuzz.sh: could not install ${missing[*]}"
      echo "0 passed, 1 failed"
      exit 1
    fi
  fi
fi

# ---- Build.
config=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx"
        -DTESSERA_BUILD_TESTS=ON -DTESSERA_FUZZ=ON -DTESSERA_SANITIZE=ON)
targets=()
for f in "${fuzzers[@]}"; do targets+=("fuzz_$f"); done
if ! cmake -S "$repo" -B "$dir" "${config[@]}" || ! ninja -C "$dir" -j "$jobs" "${targets[@]}"; then
  echo "ci/fuzz.sh: configuring or building the fuzzers FAILED"
  echo "0 passed, 1 failed"
  exit 1
fi

# ---- Run.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
work_root=$(mktemp -d "${TMPDIR:-/tmp}/tessera-fuzz.XXXXXX")
trap 'rm -rf "$work_root"' EXIT
# run_fuzzer F: one fuzzer's run; its report goes to $work_root/F.out, its summary line to $work_root/F.summary
# (starting "ok" or "FAILED"). $jobs fuzzers run at once, each on one processor; their reports print in order.
run_fuzzer() {
  local f=$1
  local bin seeds work artifacts log seeds_count start limits dict status execs units found
  bin=$(find "$dir" -type f -name "fuzz_$f" -perm -u+x | head -n 1)
  seeds=$(corpus_of "$f")
  work=$work_root/$f
  artifacts=$dir/artifacts/$f
  log=$dir/fuzz_$f.log
  mkdir -p "$work" "$artifacts"
  echo
  echo "================================================================ fuzz_$f (${seconds}s)"
  if [[ -z $bin || ! -d $seeds ]]; then
    printf '%-20s FAILED: no binary or no seed corpus (%s)\n' "$f" "$seeds" >"$work_root/$f.summary"
    return
  fi
  cp "$seeds"/* "$work"/
  if [[ $f == chunk_decode* ]]; then
    # The reference's compatibility chunks (small ones) as extra seeds; missing ones fail the run.
    if ! compgen -G "$golden/compat/blosc-*.cdata" >/dev/null; then
      printf '%-20s FAILED: no golden chunks in %s\n' "$f" "$golden/compat" >"$work_root/$f.summary"
      return
    fi
    find "$golden/compat" -name 'blosc-*.cdata' -size -64k -exec cp {} "$work"/ \;
  fi
  if [[ $f == frame_read || $f == array_view ]]; then
    cp "$repo"/tests/data/plugins/*.b2nd "$work"/  # the reference's NDLZ, NDCELL and NDMEAN arrays
  fi
  dict=()
  [[ -f $(dict_of "$f") ]] && dict=(-dict="$(dict_of "$f")")
  seeds_count=$(find "$work" -type f | wc -l)
  touch "$work_root/$f.start"
  start=$SECONDS
  limits=(-rss_limit_mb=2048)
  [[ $f == frame_read || $f == array_view ]] && limits=(-malloc_limit_mb=64 -rss_limit_mb=512)
  "$bin" -max_total_time="$seconds" "${limits[@]}" "${dict[@]}" -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$work" >"$log" 2>&1
  status=$?
  tail -n 40 "$log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  units=$(find "$work" -type f | wc -l)
  found=$(find "$artifacts" -type f -newer "$work_root/$f.start" 2>/dev/null | head -n 1)
  if ((status == 0)) && [[ -z $found ]]; then
    printf '%-20s ok      %8s execs in %3ds, corpus %d -> %d\n' "$f" "${execs:-?}" $((SECONDS - start)) \
      "$seeds_count" "$units" >"$work_root/$f.summary"
  else
    printf '%-20s FAILED  exit %d after %ds; input: %s; log: %s\n' "$f" "$status" $((SECONDS - start)) \
      "${found:-none saved}" "$log" >"$work_root/$f.summary"
    if [[ -n $found && $(stat -c %s "$found") -le 512 ]]; then
      echo "---- the input, hex: $(od -An -v -tx1 "$found" | tr -d ' \n')"
    fi
  fi
}

running=0
for f in "${fuzzers[@]}"; do
  if ((running >= jobs)); then
    wait -n
    running=$((running - 1))
  fi
  run_fuzzer "$f" >"$work_root/$f.out" 2>&1 &
  running=$((running + 1))
done
wait
summary=()
passed=0
failed=0
for f in "${fuzzers[@]}"; do
  cat "$work_root/$f.out" 2>/dev/null
  line=$(cat "$work_root/$f.summary" 2>/dev/null)
  [[ -n $line ]] || line=$(printf '%-20s FAILED: the run left no summary' "$f")
  summary+=("$line")
  if [[ $line == "$(printf '%-20s ok' "$f")"* ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done

echo
echo "================================================================ fuzz summary"
for line in "${summary[@]}"; do
  echo "$line"
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
