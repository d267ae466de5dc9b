#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The whole test matrix: installs what is missing (ci/install-deps.sh), then configures, builds and runs ctest
# for every target, going on after a failure so one run reports everything:
#   host       the machine's compilers, Debug, AddressSanitizer and gcov's counters: ci/coverage.sh runs its tests
#              (each fuzzer's corpus alone, then ctest) and holds lines and branches per directory against
#              ci/coverage-baseline.txt (a figure that falls fails the target; docs/quality.md)
#   host-tsan  the machine's compilers, ThreadSanitizer: only the tests labelled `threads` (and their programs)
#   nehalem    x86-64 baseline code under qemu-x86_64 -cpu Nehalem (no AVX: run-time dispatch must fall back),
#              UndefinedBehaviorSanitizer (the library at -O3; the host's coverage leaves it out: its checks are
#              branches gcov would count)
#   aarch64    NEON, qemu-aarch64
#   armhf      ARMv7-A + NEON, hard float, qemu-arm
#   ppc64le    POWER8 VSX, qemu-ppc64le
#   ppc64      POWER8 VSX, BIG-endian, qemu-ppc64
#   riscv64    RISC-V 64-bit Linux (RV64GC, no SIMD kernel: the scalar filters), qemu-riscv64
#   cortex-m4  bare metal, picolibc, QEMU MPS2-AN386 with semihosting (freestanding proof, code size); its
#              default configuration is the small one (error messages compiled out)
#   cortex-m4-messages  the same with the error messages' texts kept (TESSERA_ERROR_MESSAGES=ON)
#   cortex-m-cores  the other Cortex-M cores, each configured (toolchains/cortex-m<N>.cmake) but only the small
#              set built and run (the examples' target tessera_small_set): the frame and flash tests, the
#              readers, the loggers and the fault probes, and on the M0 the array test. M0 (ARMv6-M: an unaligned
#              access faults) on QEMU's
#              micro:bit (the readers on the real 16 KiB part, the rest on it with more memory), M3 on
#              mps2-an385, M7 on mps2-an500, M33 (Secure state) on mps2-an505
#   static-analysis  clang-tidy and cppcheck with zero findings (ci/static-analysis.sh), counted as one test
#   package    the install and the Debian package (ci/package.sh): the release preset built without GoogleTest and
#              installed, tessera_VERSION_ARCH.deb built, installed with dpkg -i, used (the tool, C++ and C
#              programs through find_package and pkg-config) and removed with dpkg -r; counted as one test
#   rv32-baremetal  bare metal RISC-V RV32IMAC, picolibc, QEMU virt with semihosting: a compiler without a C++
#              library (the core builds from the C library's headers; tests and examples get a few C++ library
#              headers from tests/support/cxx_shim), its own size and stack budgets
#   riscv64-baremetal  bare metal RISC-V RV64IMAC, picolibc, QEMU sifive_u: the SPI NOR driver on the board's
#              flash (the logger read back by the host's tool, the kill test), the flash port's tests and the
#              freestanding check only (the rest of the core is RV32's and RV64 Linux's to test)
# Every target but host-tsan also runs the freestanding check of the core (cmake/check_freestanding.cmake).
# Long sweeps (the ctest label `long`: huge indexes walked whole, a 100 MB file, many random reads; see
# tests/support/long_tests.hpp) test logic that does not depend on the platform: ppc64 (big-endian) runs them in
# full; host (at -O0 with gcov's counters), host-tsan, nehalem, aarch64, armhf, ppc64le and riscv64 run a reduced
# variant asserting the same properties (-DTESSERA_LONG_TESTS=reduced). The tool's tests (label `tools`) run on
# the host, ppc64 (big-endian) and armhf (32-bit): the other 64-bit little-endian Linux targets would repeat them.
# The page-cache crash sweeps (label `crash`) run on the host only, reduced (TESSERA_LONG_TESTS=full runs them
# whole). The allocator's thread contract (label `allocator_threads`: every codec on 1-4 workers, the core's
# discipline, not the processor's) runs on the host, under ThreadSanitizer and on aarch64. A target builds none
# of the test programs it leaves out (-DTESSERA_TEST_LABELS_SKIPPED). The second Cortex-M4 configuration runs
# every test but the four largest test images (array, array space, chunk, frame), which the first runs: it is
# there for the messages' build, size and the tests that print them. Every other test runs in full on every
# target.
#
# The tests read their data in place from the repository's tests/data (the reference's golden files and the
# digests of its large decodes: tests/data/README.md); nothing outside the repository is needed.
# Environment: TESSERA_BUILD_ROOT (default build, relative to the repository), SHARED_DIR (optional: a directory
# with the reference's golden/, default ../shared when it exists; the host target's test_data_provenance then
# checks tests/data against it), TESSERA_TARGETS (a subset, e.g. "host cortex-m4"), TESSERA_JOBS (default 2),
# TESSERA_SKIP_DEPS=1 (do not run install-deps.sh), TESSERA_SKIP_FUZZ=1 (no libFuzzer run), FUZZ_SECONDS,
# TESSERA_HOST_COVERAGE=0 (the host target without gcov's counters: a plain ctest), COVERAGE_WRITE_BASELINE=1
# (the host's measured coverage written as ci/coverage-baseline.txt instead of checked).
# Output: ctest's own summary per target, one line per target, and last a line "N passed, M failed"
# (a configure or build failure, or a target without tests, counts as one failure). Exit status 0 only when
# everything passed.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

build_root=${TESSERA_BUILD_ROOT:-build}
[[ $build_root == /* ]] || build_root=$repo/$build_root
jobs=${TESSERA_JOBS:-2}
all_targets=(host host-tsan nehalem aarch64 armhf ppc64le ppc64 riscv64 cortex-m4 cortex-m4-messages cortex-m-cores
  rv32-baremetal riscv64-baremetal static-analysis package)
read -r -a targets <<<"${TESSERA_TARGETS:-${all_targets[*]}}"

if [[ ${TESSERA_SKIP_DEPS:-0} != 1 ]]; then
  if ! bash "$repo/ci/install-deps.sh"; then
    echo "ci/test.sh: installing the dependencies failed"
    echo "0 passed, 1 failed"
    exit 1
  fi
fi

common=(-G Ninja -DTESSERA_BUILD_TESTS=ON -DTESSERA_CHECK_FREESTANDING=ON)
# Optional: tests/data checked against the reference's golden files (the data itself is in the repository).
shared=${SHARED_DIR:-}
[[ -z $shared && -d $repo/../shared/golden ]] && shared=$(cd "$repo/../shared" && pwd)
common+=("-DTESSERA_SHARED_DIR=$shared")

# The long sweeps: in full on big-endian ppc64, reduced on the other Linux targets.
full="-DTESSERA_LONG_TESTS=full"
reduced="-DTESSERA_LONG_TESTS=reduced"
# The emulated Linux targets compile their test programs at -O1 (half their build's time) and the library, which
# is what they test, at the build type's -O3.
tests_o1="-DTESSERA_TEST_OPTIMIZE=-O1"
host_coverage=ON
[[ ${TESSERA_HOST_COVERAGE:-1} == 0 ]] && host_coverage=OFF
target_args() {
  case $1 in
    host) echo "-DCMAKE_BUILD_TYPE=Debug -DTESSERA_SANITIZERS=address -DTESSERA_COVERAGE=$host_coverage $reduced" ;;
    host-tsan) echo "-DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_SANITIZE_THREAD=ON $reduced" ;;
    nehalem) echo "-DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=$repo/toolchains/x86_64-nehalem.cmake" \
      "-DTESSERA_SANITIZERS=undefined $reduced $tests_o1" ;;
    aarch64) echo "-DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=$repo/toolchains/aarch64-linux-gnu.cmake $reduced $tests_o1" ;;
    armhf) echo "-DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=$repo/toolchains/arm-linux-gnueabihf.cmake $reduced $tests_o1" ;;
    ppc64le) echo "-DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=$repo/toolchains/powerpc64le-linux-gnu.cmake" \
      "$reduced $tests_o1" ;;
    ppc64) echo "-DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=$repo/toolchains/powerpc64-linux-gnu.cmake $full $tests_o1" ;;
    riscv64) echo "-DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=$repo/toolchains/riscv64-linux-gnu.cmake $reduced $tests_o1" ;;
    rv32-baremetal) echo "-DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=$repo/toolchains/riscv32-baremetal.cmake" ;;
    riscv64-baremetal) echo "-DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=$repo/toolchains/riscv64-baremetal-sifive-u.cmake" ;;
    cortex-m4) echo "-DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=$repo/toolchains/cortex-m4.cmake" ;;
    cortex-m4-messages) echo "-DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=$repo/toolchains/cortex-m4.cmake" \
      "-DTESSERA_ERROR_MESSAGES=ON" ;;
    *) return 1 ;;
  esac
}

# Sanitizers: stop at the first report, with a stack trace.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1:strict_string_checks=1:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

summary=()
total_passed=0
total_failed=0
m4_size=""
start_all=$SECONDS

for target in "${targets[@]}"; do
  dir=$build_root/$target
  [[ $target == host ]] && dir=$build_root/host-asan  # the `host` preset (no sanitizers) keeps build/host
  start=$SECONDS
  echo
  echo "================================================================ $target ($dir)"
  if [[ $target == static-analysis ]]; then
    # clang-tidy and cppcheck over src/, port/ and tools/ (ci/static-analysis.sh): zero findings, one test.
    mkdir -p "$build_root"
    if bash "$repo/ci/static-analysis.sh" "$build_root/static-analysis" 2>&1 | tee "$build_root/static-analysis.log"; then
      total_passed=$((total_passed + 1))
      summary+=("$(printf '%-10s     1 passed,   0 failed  (%ds)' "$target" $((SECONDS - start)))")
    else
      total_failed=$((total_failed + 1))
      summary+=("$(printf '%-10s     0 passed,   1 failed  (%ds) findings: %s' "$target" $((SECONDS - start)) \
        "$build_root/static-analysis.log")")
    fi
    continue
  fi
  if [[ $target == package ]]; then
    # The install and the .deb (ci/package.sh): built, installed, used and removed, one test.
    mkdir -p "$build_root"
    if TESSERA_JOBS=$jobs TESSERA_BUILD_ROOT=$build_root bash "$repo/ci/package.sh" 2>&1 | tee "$build_root/package.log"; then
      total_passed=$((total_passed + 1))
      summary+=("$(printf '%-10s     1 passed,   0 failed  (%ds)' "$target" $((SECONDS - start)))")
    else
      total_failed=$((total_failed + 1))
      summary+=("$(printf '%-10s     0 passed,   1 failed  (%ds) %s' "$target" $((SECONDS - start)) \
        "$(grep -E '^package: FAILED' "$build_root/package.log" | tail -n 1)")")
    fi
    continue
  fi
  if [[ $target == cortex-m-cores ]]; then
    # One configuration per core, the small set only; its tests are counted like a target's, a core whose
    # configure or build fails as one failure.
    host_tool=$build_root/host-asan/tools/tessera
    [[ -x $host_tool ]] || host_tool=""
    small='tessera_test_(frame|flash)|example_flash_reader(_lz4)?|example_firmware_logger(_lz4)?'
    small+='|tessera_selftest_(fault|unaligned)'
    notes=""
    cores_passed=0
    cores_failed=0
    for core in m0 m3 m7 m33; do
      cdir=$build_root/cortex-$core
      cstart=$SECONDS
      echo "---- cortex-$core ($cdir)"
      # The M0 without Zstd: its decoder context (about 33 KB) is twice a micro:bit's RAM, and its compressor's
      # 64-bit hashing, emulated on ARMv6-M, made the array test alone take minutes.
      core_args=()
      [[ $core == m0 ]] && core_args=(-DTESSERA_WITH_ZSTD=OFF)
      # The array test (the M4's longest, platform-independent logic) on the M0 only: ARMv6-M, where an unaligned
      # access faults; the M3, M7 and M33 share the M4's instruction set but for its DSP and FPU extensions.
      programs=(tessera_small_set)
      tests="^($small)\$"
      [[ $core == m0 ]] && programs+=(tessera_test_array tessera_test_array_space) &&
        tests="^($small|tessera_test_array(_space)?)\$"
      if ! cmake -S "$repo" -B "$cdir" "${common[@]}" -DCMAKE_BUILD_TYPE=Release \
          "-DCMAKE_TOOLCHAIN_FILE=$repo/toolchains/cortex-$core.cmake" "-DTESSERA_HOST_TOOL=$host_tool" \
          "${core_args[@]}"; then
        notes+=" $core: configure FAILED;"
        cores_failed=$((cores_failed + 1))
        continue
      fi
      if ! ninja -C "$cdir" -j "$jobs" -k 0 "${programs[@]}"; then
        notes+=" $core: build FAILED;"
        cores_failed=$((cores_failed + 1))
      fi
      ctest --test-dir "$cdir" --output-on-failure -j "$jobs" --no-tests=error -R "$tests" 2>&1 | tee "$cdir/ctest.log"
      line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$cdir/ctest.log" | tail -n 1)
      if [[ $line =~ ([0-9]+)\ tests?\ failed\ out\ of\ ([0-9]+) ]]; then
        cores_failed=$((cores_failed + BASH_REMATCH[1]))
        cores_passed=$((cores_passed + BASH_REMATCH[2] - BASH_REMATCH[1]))
        notes+=" $core: ${BASH_REMATCH[2]} tests, ${BASH_REMATCH[1]} failed ($((SECONDS - cstart))s);"
      else
        notes+=" $core: no test results;"
        cores_failed=$((cores_failed + 1))
      fi
    done
    total_passed=$((total_passed + cores_passed))
    total_failed=$((total_failed + cores_failed))
    summary+=("$(printf '%-10s %5d passed, %3d failed  (%ds)%s' "$target" "$cores_passed" "$cores_failed" \
      $((SECONDS - start)) "$notes")")
    continue
  fi
  # Which tests: the tool's on the host, ppc64 and armhf only; the page-cache crash sweeps (label `crash`: the
  # commit protocol's logic, which no platform changes) on the host only; the allocator's thread contract (label
  # `allocator_threads`) on the host, under ThreadSanitizer and on aarch64; the M4's second configuration without
  # the three largest test images (the header says why). A label left out is left out of the build too.
  skipped=""
  case $target in
    nehalem | ppc64le | riscv64) skipped="tools|crash|allocator_threads" ;;
    aarch64) skipped="tools|crash" ;;
    armhf | ppc64) skipped="crash|allocator_threads" ;;
  esac
  if ! args=$(target_args "$target"); then
    echo "ci/test.sh: unknown target '$target' (known: ${all_targets[*]})"
    summary+=("$(printf '%-10s unknown target' "$target")")
    total_failed=$((total_failed + 1))
    continue
  fi
  args+=" -DTESSERA_TEST_LABELS_SKIPPED=${skipped//|/;}"
  notes=""
  extra_failed=0
  if [[ $target == cortex-m4* || $target == rv32-baremetal || $target == riscv64-baremetal ]]; then
    # The host build (run first) has the tessera tool: examples check the M4's frame images with it.
    host_tool=$build_root/host-asan/tools/tessera
    [[ -x $host_tool ]] || host_tool=""   # empty: the check is skipped, and a stale cached value is cleared
    args+=" -DTESSERA_HOST_TOOL=$host_tool"
  fi

  # shellcheck disable=SC2086  # args holds separate words
  if ! cmake -S "$repo" -B "$dir" "${common[@]}" $args; then
    summary+=("$(printf '%-10s configure FAILED (%ds)' "$target" $((SECONDS - start)))")
    total_failed=$((total_failed + 1))
    continue
  fi
  # -k 0: build everything that can be built, so the tests of the other programs still run. host-tsan builds only
  # the programs of the tests it runs (tessera_threads_tests, tests/CMakeLists.txt).
  build_targets=()
  [[ $target == host-tsan ]] && build_targets=(tessera_threads_tests)
  # riscv64-baremetal: the SPI NOR images, the flash port's tests and the freestanding checks (the ctest filter
  # below runs those).
  [[ $target == riscv64-baremetal ]] &&
    build_targets=(spinor_logger spinor_recover tessera_test_flash tessera_core_freestanding tessera_flash_freestanding)
  if ! ninja -C "$dir" -j "$jobs" -k 0 "${build_targets[@]}"; then
    notes+=" build FAILED;"
    extra_failed=1
  fi

  if [[ $target == cortex-m4 && -f $dir/src/libtessera_core.a ]]; then
    echo "---- Cortex-M4 code size of the core (arm-none-eabi-size -t libtessera_core.a)"
    arm-none-eabi-size -t "$dir/src/libtessera_core.a"
    m4_size=$(arm-none-eabi-size -t "$dir/src/libtessera_core.a" | awk '/\(TOTALS\)/ {
      printf "text %d B, data %d B, bss %d B (flash %d B)", $1, $2, $3, $1 + $2 }')
  fi
  if [[ $target == cortex-m4* ]]; then
    echo "---- Cortex-M4 images: sizes, Tessera's and the codecs' shares from the link maps, largest sections, stack"
    TOP=8 bash "$repo/ci/size-report.sh" "$dir" || { notes+=" size report FAILED;"; extra_failed=1; }
  fi
  if [[ $target == rv32-baremetal || $target == riscv64-baremetal ]]; then
    echo "---- ${target%-baremetal} images: sizes, Tessera's and the codecs' shares from the link maps, largest sections, stack"
    TOP=8 SIZE=riscv64-unknown-elf-size CXXFILT=riscv64-unknown-elf-c++filt bash "$repo/ci/size-report.sh" "$dir" ||
      { notes+=" size report FAILED;"; extra_failed=1; }
  fi

  log=$dir/ctest.log
  # host-tsan: only the tests that run several threads; any ThreadSanitizer report fails the test.
  ctest_env=()
  label_args=()
  if [[ $target == host-tsan ]]; then
    ctest_env=(env "TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}")
    label_args=(-L threads)
  fi
  [[ -n $skipped ]] && label_args+=(-LE "$skipped")
  case $target in
    cortex-m4-messages) label_args+=(-E '^tessera_test_(array|array_space|chunk|frame)$') ;;
    riscv64-baremetal) label_args+=(-R '^(tessera_(core|flash)_freestanding|tessera_test_flash|.*spinor.*)$') ;;
  esac
  if [[ $target == host && $host_coverage == ON ]]; then
    # ci/coverage.sh runs the fuzzers' corpora and then ctest (its output in $log), and holds the coverage.
    TESSERA_JOBS=$jobs bash "$repo/ci/coverage.sh" "$dir"
    case $? in
      1) # The rows that fell, in the summary: CI's log may keep only its end.
        notes+=" coverage fell: $(sed -n 's/^coverage: FALLEN: //p' "$dir/coverage-check.txt" 2>/dev/null | paste -sd ';' -);"
        extra_failed=1 ;;
    esac
  else
    "${ctest_env[@]}" ctest --test-dir "$dir" --output-on-failure -j "$jobs" --no-tests=error "${label_args[@]}" 2>&1 |
      tee "$log"
  fi
  # The slowest tests against their timeout (TESSERA_TEST_TIMEOUT, 300 s by default; bare metal adds 30 s): a
  # test near it would fail on a slower machine, so it shows here before it does.
  slowest=$(grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* sec$' "$log" |
    sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/' | sort -rn | head -n 3 |
    awk '{ printf "%s%s %.0f s", (NR > 1 ? ", " : ""), $2, $1 }')
  [[ -n $slowest ]] && echo "---- $target: slowest tests (timeout ${TESSERA_TEST_TIMEOUT:-300} s): $slowest"
  line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
  if [[ $line =~ ([0-9]+)\ tests?\ failed\ out\ of\ ([0-9]+) ]]; then
    failed=${BASH_REMATCH[1]}
    passed=$((BASH_REMATCH[2] - failed))
    notes+="  ctest: $line"
  else
    passed=0
    failed=0
    notes+=" no test results;"
    extra_failed=1
  fi
  failed=$((failed + extra_failed))
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
  summary+=("$(printf '%-10s %5d passed, %3d failed  (%ds)%s' "$target" "$passed" "$failed" $((SECONDS - start)) "$notes")")
done

# The bounded fuzzing run (ci/fuzz.sh, FUZZ_SECONDS per fuzzer, 15 by default in this matrix): every fuzzer counts as one test.
if [[ ${TESSERA_SKIP_FUZZ:-0} != 1 ]]; then
  echo
  echo "================================================================ fuzz"
  start=$SECONDS
  fuzz_log=$build_root/fuzz.log
  mkdir -p "$build_root"
  FUZZ_SECONDS=${FUZZ_SECONDS:-15} TESSERA_SKIP_DEPS=1 TESSERA_JOBS=$jobs TESSERA_BUILD_ROOT=$build_root bash "$repo/ci/fuzz.sh" 2>&1 | tee "$fuzz_log"
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$fuzz_log" | tail -n 1)
  if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    fuzz_passed=${BASH_REMATCH[1]}
    fuzz_failed=${BASH_REMATCH[2]}
  else
    fuzz_passed=0
    fuzz_failed=1
  fi
  total_passed=$((total_passed + fuzz_passed))
  total_failed=$((total_failed + fuzz_failed))
  summary+=("$(printf '%-10s %5d passed, %3d failed  (%ds)  libFuzzer, %s s each' fuzz "$fuzz_passed" "$fuzz_failed" \
    $((SECONDS - start)) "${FUZZ_SECONDS:-15}")")
fi

echo
echo "================================================================ summary"
for line in "${summary[@]}"; do
  echo "$line"
done
if [[ -n $m4_size ]]; then
  echo "Cortex-M4 core size: $m4_size"
fi
echo "total time: $((SECONDS - start_all)) s"
echo "$total_passed passed, $total_failed failed"
[[ $total_failed -eq 0 ]]
