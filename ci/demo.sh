#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The main job: builds the host `tessera` tool (the release preset, into build/demo; installs nothing) and shows it at
# work on a float32 array: create (from generated data, and from stdin into a sparse frame), info, a slice as
# text, verify, the round trip back to the input bytes, and clean one-line errors for bad input.
# Needs cmake, ninja, a C++ compiler and the codec libraries: when one is missing it runs
# `ci/install-deps.sh --host`, which installs those only (no cross toolchains). Usage: ci/demo.sh [BUILD_DIR]
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/demo}
cxx=${CXX:-c++}

missing=""
for tool in cmake ninja "$cxx"; do
  command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if command -v dpkg-query >/dev/null 2>&1; then
  for package in liblz4-dev libzstd-dev zlib1g-dev; do
    [ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" = "install ok installed" ] || missing="$missing $package"
  done
fi
if [ -n "$missing" ]; then
  echo "demo: missing:$missing; installing the host build's packages (ci/install-deps.sh --host)"
  bash "$root/ci/install-deps.sh" --host || { echo "demo: installing them failed" >&2; exit 1; }
fi

step() { printf '\n=== %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

step "build the tool (the release preset: Release, no tests; into $build)"
if [ ! -f "$build/build.ninja" ]; then
  (cd "$root" && cmake --preset release -B "$build" >/dev/null)
fi
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
ninja -C "$build" -j "$jobs" tessera | tail -n 1
tessera=$build/tools/tessera

work=$build/demo-files
rm -rf "$work"
mkdir -p "$work"

step "generate 512 x 512 float32 values (a smooth field plus a little noise; a 20-line C++ generator)"
cat >"$work/gen.cpp" <<'CPP'
// Writes n x n little-endian float32 values: a smooth 2-D field plus deterministic noise.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
int main(int argc, char** argv) {
  const int n = std::atoi(argv[1]);
  uint32_t s = 12345;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      s = s * 1664525u + 1013904223u;  // LCG noise
      const float v = static_cast<float>(20 * std::sin(i / 40.0) * std::cos(j / 25.0) + 0.01 * i * j / n) +
                      static_cast<float>(s >> 20) / 4096.0f * 0.05f;
      uint8_t b[4];
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      for (int k = 0; k < 4; ++k) b[k] = static_cast<uint8_t>(bits >> (8 * k));
      std::fwrite(b, 1, 4, stdout);
    }
  return 0;
}
CPP
"$cxx" -O2 -o "$work/gen" "$work/gen.cpp"
"$work/gen" 512 >"$work/field.f4"
ls -l "$work/field.f4" | awk '{print $5 " bytes of input"}'

step "create a cframe file: zstd, shuffle, 128 x 128 chunks of 32 x 32 blocks, 2 threads"
run "$tessera" create "$work/field.b2nd" --dtype '<f4' --shape 512,512 --chunks 128,128 --blocks 32,32 \
  --codec zstd --clevel 5 --filters shuffle --threads 2 --input "$work/field.f4"

step "what the file holds"
run "$tessera" info "$work/field.b2nd"

step "a slice as text: rows 100..103, columns 200..205"
run "$tessera" dump "$work/field.b2nd" --slice 100:104,200:206 --format text

step "verify: every chunk and block decodes"
run "$tessera" verify "$work/field.b2nd"

step "the whole array back as raw bytes equals the input"
"$tessera" dump "$work/field.b2nd" --format raw -o "$work/back.f4"
cmp "$work/field.f4" "$work/back.f4" && echo "identical: $(wc -c <"$work/back.f4") bytes"

step "the same data from stdin into a sparse frame (a directory), bytedelta after shuffle, lz4"
cat "$work/field.f4" | "$tessera" create "$work/field-sparse.b2nd" --sparse --dtype '<f4' --shape 512,512 \
  --chunks 256,256 --filters shuffle,bytedelta --codec lz4 --input -
ls "$work/field-sparse.b2nd" | head -n 5
"$tessera" info "$work/field-sparse.b2nd" | grep -E '^(file|chunks|blocks|filters|ratio):'
"$tessera" dump "$work/field-sparse.b2nd" | cmp - "$work/field.f4" && echo "sparse copy: identical"

step "random bytes hardly compress"
head -c 65536 /dev/urandom | "$tessera" create "$work/random.b2nd" --dtype '|u1' --shape 256,256 --codec lz4 --input -
"$tessera" info "$work/random.b2nd" | grep -E '^(dtype|codec|ratio):'

step "bad input: one line on stderr and a non-zero exit status"
for args in "dump $work/field.b2nd --slice 0:10,500:600" "create $work/x.b2nd --dtype <f4 --shape 10 --input $work/field.f4" \
            "info $work/missing.b2nd"; do
  printf '$ tessera %s\n' "$args"
  # shellcheck disable=SC2086 # the words of $args are the arguments
  if "$tessera" $args; then echo "demo: this should have failed" >&2; exit 1; else echo "(exit status $?)"; fi
done
head -c 5000 "$work/field.b2nd" >"$work/cut.b2nd"
printf '$ tessera verify cut.b2nd   (the first 5000 bytes of field.b2nd)\n'
if "$tessera" verify "$work/cut.b2nd"; then echo "demo: this should have failed" >&2; exit 1; else echo "(exit status $?)"; fi

step "done: the tool is $tessera"
