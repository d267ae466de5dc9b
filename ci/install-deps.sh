#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the Debian packages that building Tessera and running its test matrix need: only the missing ones,
# so a second run does nothing (no apt-get update either). Needs root (or sudo) only when something is missing.
# Then the codec libraries of the Linux cross targets (ci/cross-sysroots.sh): Debian's liblz4-dev, libzstd-dev
# and zlib1g-dev of arm64, armhf and ppc64el unpacked into sysroots under ${TESSERA_SYSROOT_ROOT:-/opt/tessera-
# sysroots}, and for big-endian ppc64 and riscv64 (no Debian 12 packages) the same Debian source packages built; for the
# Cortex-M4 the lz4 and libzstd sources built for bare metal without a heap. They are not installed into the
# host's dpkg. Only the sysroots of the cross targets in TESSERA_TARGETS (ci/test.sh's
# variable; default all) are made, and only those missing.
# Usage: ci/install-deps.sh [--check | --host]   (--check: only report what is missing, exit 1 if anything is;
# --host: only what the host build of the library and the tool needs, as ci/demo.sh asks)
set -euo pipefail

packages=(
  # Host build and tests; pkg-config for the consumer tests and ci/package.sh (dpkg-dev, below, for its .deb)
  cmake ninja-build g++ googletest libbenchmark-dev doxygen pkgconf
  # The tool's NumPy .npy round trips (tests/tools) and the tool's measurement (ci/tool-bench.sh: /usr/bin/time)
  python3-numpy time
  # Codec libraries of the host build (libzfp-dev: ZFP, host only; no cross sysroot has it)
  liblz4-dev libzstd-dev zlib1g-dev libzfp-dev
  # Emulators: qemu-user runs the Linux cross targets (and x86-64 as a Nehalem), qemu-system-arm the Cortex-M4
  qemu-user qemu-system-arm
  # Linux cross compilers: 64-bit ARM, 32-bit ARM hard-float, POWER little- and big-endian
  g++-aarch64-linux-gnu g++-arm-linux-gnueabihf g++-powerpc64le-linux-gnu g++-powerpc64-linux-gnu
  # Bare metal: the Cortex-M4 compiler, picolibc and its C++ library
  gcc-arm-none-eabi binutils-arm-none-eabi picolibc-arm-none-eabi libstdc++-arm-none-eabi-picolibc
  # The bounded fuzzing run (ci/fuzz.sh): clang with libFuzzer
  clang-14 libclang-rt-14-dev
  # Static analysis (ci/static-analysis.sh) and coverage (ci/coverage.sh)
  clang-tidy-14 cppcheck gcovr
  # ci/cross-sysroots.sh: apt's keyring, unpacking and patching Debian's source packages, building them
  debian-archive-keyring dpkg-dev patch xz-utils bzip2 make
  # A multiarch package can be added as name:arch (e.g. libfoo-dev:arm64); its architecture is added to dpkg
  # automatically. The codec libraries are not (see above): zlib1g-dev:<arch> needs the host's exact zlib1g.
)

# RISC-V: bare-metal RV32 (GCC with its rv32 multilibs and picolibc, no C++ library; qemu-system-riscv32 is in
# qemu-system-misc) and 64-bit Linux (cross compiler; qemu-riscv64 is in qemu-user), both in the default matrix.
if [[ -z ${TESSERA_TARGETS:-} || " ${TESSERA_TARGETS} " == *" rv32-baremetal "* ]]; then
  packages+=(gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc)
fi
if [[ -z ${TESSERA_TARGETS:-} || " ${TESSERA_TARGETS} " == *" riscv64 "* ]]; then
  packages+=(g++-riscv64-linux-gnu)
fi

check_only=false
host_only=false
case ${1:-} in
  --check) check_only=true ;;
  --host) host_only=true ;;
esac
if $host_only; then  # what the host build of the library and the tool needs (ci/demo.sh, README's Install): no cross
  packages=(cmake ninja-build g++ liblz4-dev libzstd-dev zlib1g-dev libzfp-dev)
fi

installed() {
  [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == "install ok installed" ]]
}

missing=()
for package in "${packages[@]}"; do
  installed "$package" || missing+=("$package")
done

# The cross targets whose codec sysroots are wanted.
sysroot_targets=()
for target in aarch64 armhf ppc64le riscv64 ppc64 cortex-m4; do
  $host_only && break
  if [[ -z ${TESSERA_TARGETS:-} || " ${TESSERA_TARGETS:-} " == *" $target "* ]]; then
    sysroot_targets+=("$target")
  fi
done
sysroots() { # [--check]
  if ((${#sysroot_targets[@]})); then
    bash "$(dirname "${BASH_SOURCE[0]}")/cross-sysroots.sh" "$@" "${sysroot_targets[@]}"
  fi
}

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages are installed"
  if $check_only; then
    sysroots --check
  else
    sysroots
  fi
  exit
fi
echo "install-deps: missing: ${missing[*]}"
if $check_only; then
  sysroots --check || true
  exit 1
fi

as_root=()
if [[ $(id -u) != 0 ]]; then
  as_root=(sudo)
fi

# Foreign architectures of multiarch packages (name:arch) must be known to dpkg before apt-get update.
for package in "${missing[@]}"; do
  if [[ $package == *:* ]]; then
    arch=${package##*:}
    if [[ $arch != "$(dpkg --print-architecture)" ]] && ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
      "${as_root[@]}" dpkg --add-architecture "$arch"
    fi
  fi
done

"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"

still_missing=()
for package in "${missing[@]}"; do
  installed "$package" || still_missing+=("$package")
done
if ((${#still_missing[@]})); then
  echo "install-deps: could not install: ${still_missing[*]}" >&2
  exit 1
fi
echo "install-deps: installed ${#missing[@]} package(s)"
sysroots
