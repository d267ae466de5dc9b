#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The codec libraries (LZ4, Zstd, Zlib) of the Linux cross targets, as static archives and headers in one
# sysroot per target: ${TESSERA_SYSROOT_ROOT:-/opt/tessera-sysroots}/<triple>/usr/{include,lib/<triple>}.
# toolchains/linux-cross.cmake searches there, src/codecs/libraries.cmake finds the libraries.
#   aarch64, armhf, ppc64le  Debian's own -dev packages of the target architecture (liblz4-dev, libzstd-dev,
#                            zlib1g-dev), fetched with `apt-get download` and unpacked with `dpkg-deb -x`
#   ppc64 (big-endian),      Debian 12 has no packages for them: the same versions are built from Debian's
#   riscv64                  source packages (`apt-get source`, Debian's patches applied) with the target's
#                            cross compiler (powerpc64-linux-gnu-gcc, riscv64-linux-gnu-gcc)
#   cortex-m0, -m3, -m4,     bare metal: LZ4/LZ4HC and Zstd only, from the same Debian sources, compiled
#   -m7, -m33                file by file with the core's flags of toolchains/cortex-m.cmake (picolibc, -Os,
#                            function sections) into liblz4.a and libzstd.a under usr/{include,lib}, one sysroot
#                            per core and float ABI: arm-none-eabi/ (the M4's), arm-none-eabi-m0/, -m3/, -m7/,
#                            -m33/. Built without any heap: Tessera hands both libraries their state (see
#                            make_baremetal)
# Nothing is installed into the host's dpkg: apt runs with a private state (sources, lists, cache, an empty
# status) under the root's .apt/, so no foreign architecture is added and the host's packages can't conflict
# with a target's (multiarch zlib1g-dev:<arch> wants the host's exact zlib1g version; a foreign libc6 beside
# the host's is what the static links avoid anyway). Only the -dev packages are taken: they hold the .a files.
#
# Idempotent: a sysroot whose stamp (.tessera-sysroot) names the current recipe is left alone, and then
# nothing is downloaded. A sysroot is built in a staging folder and renamed into place, so a failed run leaves
# nothing half made. Needs the packages of ci/install-deps.sh (cross compilers, make, dpkg-dev, patch).
#
# Usage: ci/cross-sysroots.sh [--check] [target...]   (targets: aarch64 armhf ppc64le riscv64 ppc64 cortex-m0
#   cortex-m3 cortex-m4 cortex-m7 cortex-m33; default all)
#   --check: only report which sysroots are missing, exit 1 if any is.
# Environment: TESSERA_SYSROOT_ROOT, TESSERA_DEBIAN_MIRROR (default http://deb.debian.org/debian; the
#   suites <codename> and <codename>-updates, whose point releases carry the fixes), TESSERA_JOBS (default 2).
set -euo pipefail

root=${TESSERA_SYSROOT_ROOT:-/opt/tessera-sysroots}
mirror=${TESSERA_DEBIAN_MIRROR:-http://deb.debian.org/debian}
jobs=${TESSERA_JOBS:-2}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
# Changing what goes into a sysroot: bump this, and every sysroot is made again on the next run.
recipe="tessera-sysroot recipe 1: liblz4-dev libzstd-dev zlib1g-dev"
# The bare-metal sysroots have their own recipe (flags and defines; the core and float ABI are appended):
# bumping it remakes only those.
recipe_baremetal="tessera-sysroot bare-metal recipe 2: lz4 libzstd"
dev_packages=(liblz4-dev libzstd-dev zlib1g-dev)
source_packages=(lz4 libzstd zlib)

check_only=false
if [[ ${1:-} == --check ]]; then
  check_only=true
  shift
fi
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(aarch64 armhf ppc64le riscv64 ppc64 cortex-m0 cortex-m3 cortex-m4 cortex-m7 cortex-m33)
fi

# target -> "<Debian architecture or 'source'> <GNU triple>"
target_info() {
  case $1 in
    aarch64) echo "arm64 aarch64-linux-gnu" ;;
    riscv64) echo "source riscv64-linux-gnu" ;;  # Debian 12 has no riscv64 packages: built from source
    armhf) echo "armhf arm-linux-gnueabihf" ;;
    ppc64le) echo "ppc64el powerpc64le-linux-gnu" ;;
    ppc64) echo "source powerpc64-linux-gnu" ;;
    cortex-m4) echo "baremetal-m4 arm-none-eabi" ;;
    cortex-m0 | cortex-m3 | cortex-m7 | cortex-m33) echo "baremetal-${1#cortex-} arm-none-eabi-${1#cortex-}" ;;
    *) return 1 ;;
  esac
}

# The compiler flags of a Cortex-M core (as toolchains/cortex-m.cmake has them) and its float ABI.
baremetal_flags() { # core
  case $1 in
    m0) echo "-mcpu=cortex-m0 -mthumb -mfloat-abi=soft" ;;
    m3) echo "-mcpu=cortex-m3 -mthumb -mfloat-abi=soft" ;;
    m4) echo "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16" ;;
    m7) echo "-mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16" ;;
    m33) echo "-mcpu=cortex-m33 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16" ;;
  esac
}
recipe_of() { # arch
  if [[ $1 == baremetal-* ]]; then
    local core=${1#baremetal-} abi=soft-float
    [[ $(baremetal_flags "$core") == *=hard* ]] && abi=hard-float
    echo "$recipe_baremetal, cortex-$core $abi, no heap"
  else
    echo "$recipe"
  fi
}
ready() { # sysroot arch
  [[ -f $1/.tessera-sysroot && $(head -n 1 "$1/.tessera-sysroot") == "$(recipe_of "$2")" ]]
}

missing=()
for target in "${targets[@]}"; do
  if ! info=$(target_info "$target"); then
    echo "cross-sysroots: unknown target '$target' (known: aarch64 armhf ppc64le riscv64 ppc64 cortex-m0" \
      "cortex-m3 cortex-m4 cortex-m7 cortex-m33)" >&2
    exit 2
  fi
  read -r arch triple <<<"$info"
  ready "$root/$triple" "$arch" || missing+=("$target")
done

if ((${#missing[@]} == 0)); then
  echo "cross-sysroots: the sysroots of ${targets[*]} are ready in $root"
  exit 0
fi
echo "cross-sysroots: missing in $root: ${missing[*]}"
if $check_only; then
  exit 1
fi

mkdir -p "$root"
if [[ ! -w $root ]]; then
  echo "cross-sysroots: $root is not writable: run as root or set TESSERA_SYSROOT_ROOT" >&2
  exit 1
fi
# One run at a time per root (two CI jobs on one machine would otherwise build the same sysroot twice).
exec 9>"$root/.lock"
flock 9

# The private apt: Debian's archive for the target architectures (binary) and the sources.
apt_dir=$root/.apt
mkdir -p "$apt_dir"/{etc/parts,etc/preferences.d,lists/partial,cache/archives/partial,debs,src}
: >"$apt_dir/status"
# shellcheck disable=SC1091  # the machine's own file
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
if [[ -z $codename ]]; then
  echo "cross-sysroots: no VERSION_CODENAME in /etc/os-release (not Debian?)" >&2
  exit 1
fi
archs=()
need_sources=false
for target in "${missing[@]}"; do
  read -r arch _ <<<"$(target_info "$target")"
  if [[ $arch == source || $arch == baremetal-* ]]; then
    need_sources=true
  else
    archs+=("$arch")
  fi
done
{
  if ((${#archs[@]})); then
    arch_list=$(IFS=,; echo "${archs[*]}")
    echo "deb [arch=$arch_list signed-by=$keyring] $mirror $codename main"
    echo "deb [arch=$arch_list signed-by=$keyring] $mirror $codename-updates main"
  fi
  if $need_sources; then
    echo "deb-src [signed-by=$keyring] $mirror $codename main"
    echo "deb-src [signed-by=$keyring] $mirror $codename-updates main"
  fi
} >"$apt_dir/etc/sources.list"
apt_opts=(
  -q -o "Dir::Etc::SourceList=$apt_dir/etc/sources.list" -o "Dir::Etc::SourceParts=$apt_dir/etc/parts"
  -o "Dir::Etc::Preferences=$apt_dir/etc/preferences" -o "Dir::Etc::PreferencesParts=$apt_dir/etc/preferences.d"
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::State::status=$apt_dir/status" -o "Dir::Cache=$apt_dir/cache"
  -o APT::Sandbox::User=root
)
for arch in "${archs[@]}"; do
  apt_opts+=(-o "APT::Architectures::=$arch")
done
private_apt() {
  apt-get "${apt_opts[@]}" "$@"
}
echo "cross-sysroots: reading Debian's package lists ($codename: ${archs[*]:-}$($need_sources && echo ' sources'))"
# One retry: a mirror being synced answers with files of the wrong size for a moment.
private_apt update >"$apt_dir/update.log" 2>&1 || { sleep 10 && private_apt update >"$apt_dir/update.log" 2>&1; } || {
  cat "$apt_dir/update.log" >&2
  echo "cross-sysroots: apt-get update (private lists) failed" >&2
  exit 1
}

# Leaves only what the build needs: headers and static archives (no docs, no dangling .so links).
trim() { # staging
  rm -rf "${1:?}/usr/share"
  find "$1" -xtype l -delete
}

# Debian's -dev packages of one architecture, unpacked.
make_from_packages() { # arch triple staging
  local arch=$1 triple=$2 staging=$3 package file
  local debs=()
  for package in "${dev_packages[@]}"; do
    # The candidate's file name: apt-get download writes <name>_<version without epoch>_<arch>.deb.
    rm -f "$apt_dir/debs/${package}_"*"_$arch.deb"
  done
  (cd "$apt_dir/debs" && private_apt download "${dev_packages[@]/%/:$arch}") >"$apt_dir/download-$arch.log" 2>&1 || {
    cat "$apt_dir/download-$arch.log" >&2
    return 1
  }
  for package in "${dev_packages[@]}"; do
    file=$(compgen -G "$apt_dir/debs/${package}_*_$arch.deb" | head -n 1) || true
    if [[ -z $file ]]; then
      echo "cross-sysroots: $package:$arch was not downloaded" >&2
      return 1
    fi
    dpkg-deb -x "$file" "$staging"
    # shellcheck disable=SC2016  # dpkg-deb's own ${Field} syntax
    debs+=("$(dpkg-deb --show --showformat='${Package}:${Architecture} ${Version}' "$file")")
    echo "  $arch: $(basename "$file")"
  done
  trim "$staging"
  printf '%s\n' "${debs[@]}" >"$staging/.packages"
  rm -f "$apt_dir/debs/"*"_$arch.deb"
}

# Debian's source packages, downloaded and unpacked into work/<package> with Debian's patches applied.
unpack_sources() { # work staging log package...
  local work=$1 staging=$2 log=$3 package dir
  shift 3
  rm -rf "$work" && mkdir -p "$work"
  (cd "$apt_dir/src" && rm -f ./*.dsc ./*.tar.* ./*.asc && private_apt source --download-only "$@") \
    >>"$log" 2>&1 || return 1
  for package in "$@"; do
    dir=$(compgen -G "$apt_dir/src/${package}_*.dsc" | head -n 1) || true
    [[ -n $dir ]] || { echo "cross-sysroots: source package $package was not downloaded" >&2; return 1; }
    # The files' hashes were checked by apt against the signed release files; dpkg-source applies the patches.
    (cd "$work" && dpkg-source -x "$dir" "$package") >>"$log" 2>&1 || return 1
    echo "  source: $(basename "$dir" .dsc)"
    echo "$(basename "$dir" .dsc) (built from source)" >>"$staging/.packages.tmp"
  done
}

# Debian's source packages, patched by dpkg-source and built for the target with its cross compiler.
make_from_sources() { # triple staging log
  local triple=$1 staging=$2 log=$3 package dir
  local cc=$triple-gcc ar=$triple-ar ranlib=$triple-ranlib cflags="-O2"
  if ! command -v "$cc" >/dev/null; then
    echo "cross-sysroots: $cc not found (run ci/install-deps.sh)" >&2
    return 1
  fi
  local work=$apt_dir/src/build-$triple
  unpack_sources "$work" "$staging" "$log" "${source_packages[@]}" || return 1
  local inc=$staging/usr/include lib=$staging/usr/lib/$triple
  mkdir -p "$inc" "$lib"
  make -C "$work/lz4/lib" -j "$jobs" liblz4.a CC="$cc" AR="$ar" CFLAGS="$cflags" >>"$log" 2>&1 || return 1
  cp "$work"/lz4/lib/{lz4.h,lz4hc.h,lz4frame.h,lz4frame_static.h} "$inc/"
  cp "$work/lz4/lib/liblz4.a" "$lib/"
  # The static libzstd is single-threaded (no pthread needed), like Debian's libzstd.a.
  make -C "$work/libzstd/lib" -j "$jobs" libzstd.a CC="$cc" AR="$ar" CFLAGS="$cflags" >>"$log" 2>&1 || return 1
  cp "$work"/libzstd/lib/{zstd.h,zdict.h,zstd_errors.h} "$inc/"
  cp "$work/libzstd/lib/libzstd.a" "$lib/"
  (cd "$work/zlib" && CHOST=$triple CC=$cc AR=$ar RANLIB=$ranlib CFLAGS=$cflags ./configure --static &&
    make -j "$jobs" libz.a) >>"$log" 2>&1 || return 1
  cp "$work"/zlib/{zlib.h,zconf.h} "$inc/"
  cp "$work/zlib/libz.a" "$lib/"
  mv "$staging/.packages.tmp" "$staging/.packages"
  rm -rf "$work" "$apt_dir/src/"*.dsc "$apt_dir/src/"*.tar.* "$apt_dir/src/"*.asc
}

# Bare metal (a Cortex-M core, picolibc): the libraries' C files compiled one by one (their Makefiles assume a
# hosted system) into static archives, with the core's flags of toolchains/cortex-m.cmake. No heap in either: Tessera gives
# LZ4 its state (the *_extState functions) and Zstd static contexts in workspaces from its allocator, so
#   lz4:  LZ4_STATIC_LINKING_ONLY_DISABLE_MEMORY_ALLOCATION removes LZ4_create* and every malloc/free call (it
#         needs LZ4HC_HEAPMODE=0: the optimal parser of LZ4HC levels 10-12 then keeps its 64 KiB on the stack);
#   zstd: ZSTD_DEPS_MALLOC predefined with ZSTD_malloc/calloc/free that allocate nothing, in place of
#         zstd_deps.h's malloc/calloc/free (its documented way to build without libc's heap): ZSTD_create*
#         return NULL, the ZSTD_initStatic* contexts work. Single-threaded (no ZSTD_MULTITHREAD, no pool.c,
#         threading.c, zstdmt_compress.c), no legacy formats, no assembly, no debug, no error strings, and the
#         smaller of zstd's decoder variants (HUF_FORCE_DECOMPRESS_X1, ZSTD_FORCE_DECOMPRESS_SEQUENCES_SHORT:
#         they decode every stream, a little slower), and a 4 KiB literals buffer in the DCtx instead of 64 KiB
#         (ZSTD_DECODER_INTERNAL_BUFFER: literals that don't fit go to the output's tail), so that a decoder
#         context is about 32 KiB instead of 96 KiB; compression at every level.
make_baremetal() { # core staging log
  local core=$1 staging=$2 log=$3 f triple=arm-none-eabi
  local cc=$triple-gcc ar=$triple-ar
  # shellcheck disable=SC2207  # the flags are separate words
  local cflags=($(baremetal_flags "$core") --specs=picolibc.specs -Os -ffunction-sections -fdata-sections -DNDEBUG)
  if ! command -v "$cc" >/dev/null; then
    echo "cross-sysroots: $cc not found (run ci/install-deps.sh)" >&2
    return 1
  fi
  local work=$apt_dir/src/build-$triple-$core
  unpack_sources "$work" "$staging" "$log" lz4 libzstd || return 1
  local inc=$staging/usr/include lib=$staging/usr/lib
  mkdir -p "$inc" "$lib" "$work/obj-lz4" "$work/obj-zstd"
  for f in lz4 lz4hc; do
    echo "$cc ... $f.c" >>"$log"
    "$cc" "${cflags[@]}" -DLZ4_HEAPMODE=0 -DLZ4HC_HEAPMODE=0 -DLZ4_STATIC_LINKING_ONLY_DISABLE_MEMORY_ALLOCATION \
      -c "$work/lz4/lib/$f.c" -o "$work/obj-lz4/$f.o" >>"$log" 2>&1 || return 1
  done
  "$ar" rcs "$lib/liblz4.a" "$work"/obj-lz4/*.o >>"$log" 2>&1 || return 1
  cp "$work"/lz4/lib/{lz4.h,lz4hc.h} "$inc/"
  local zstd=$work/libzstd/lib
  local zdefs=(-DZSTD_LEGACY_SUPPORT=0 -DZSTD_HEAPMODE=0 -DZSTD_NOBENCH -DZSTD_NO_INTRINSICS -DZSTD_DISABLE_ASM
               -DDEBUGLEVEL=0 -DZSTD_STRIP_ERROR_STRINGS -DZSTD_NO_UNUSED_FUNCTIONS -DHUF_FORCE_DECOMPRESS_X1
               -DZSTD_FORCE_DECOMPRESS_SEQUENCES_SHORT -DZSTD_DECODER_INTERNAL_BUFFER=4096 -DZSTD_DEPS_MALLOC '-DZSTD_malloc(s)=((void)(s), (void*)0)'
               '-DZSTD_calloc(n,s)=((void)(n), (void)(s), (void*)0)' '-DZSTD_free(p)=((void)(p))')
  for f in "$zstd"/common/{debug,entropy_common,error_private,fse_decompress,xxhash,zstd_common}.c \
           "$zstd"/decompress/*.c "$zstd"/compress/*.c; do
    [[ $(basename "$f") == zstdmt_compress.c ]] && continue
    echo "$cc ... ${f#"$zstd"/}" >>"$log"
    "$cc" "${cflags[@]}" "${zdefs[@]}" -c "$f" -o "$work/obj-zstd/$(basename "$f" .c).o" >>"$log" 2>&1 || return 1
  done
  "$ar" rcs "$lib/libzstd.a" "$work"/obj-zstd/*.o >>"$log" 2>&1 || return 1
  cp "$zstd"/{zstd.h,zdict.h,zstd_errors.h} "$inc/"
  # Proof of "no heap": neither archive may reference malloc, calloc, realloc or free.
  if "$triple-nm" -u "$lib"/liblz4.a "$lib"/libzstd.a | grep -Ew '(malloc|calloc|realloc|free)' >>"$log"; then
    echo "cross-sysroots: the bare-metal codec libraries reference the heap (see $log)" >&2
    return 1
  fi
  mv "$staging/.packages.tmp" "$staging/.packages"
  rm -rf "$work" "$apt_dir/src/"*.dsc "$apt_dir/src/"*.tar.* "$apt_dir/src/"*.asc
}

failed=()
for target in "${missing[@]}"; do
  read -r arch triple <<<"$(target_info "$target")"
  sysroot=$root/$triple
  staging=$root/.staging-$triple
  log=$apt_dir/build-$triple.log
  rm -rf "$staging" && mkdir -p "$staging" && : >"$log"
  start=$SECONDS
  archives=(liblz4.a libzstd.a libz.a)
  libdir=usr/lib/$triple
  if [[ $arch == source ]]; then
    echo "cross-sysroots: $target ($triple): building Debian's source packages"
    make_from_sources "$triple" "$staging" "$log" && ok=true || ok=false
  elif [[ $arch == baremetal-* ]]; then
    echo "cross-sysroots: $target ($triple): building Debian's lz4 and libzstd sources for bare metal"
    make_baremetal "${arch#baremetal-}" "$staging" "$log" && ok=true || ok=false
    archives=(liblz4.a libzstd.a)
    libdir=usr/lib
  else
    echo "cross-sysroots: $target ($triple): Debian's $arch packages"
    make_from_packages "$arch" "$triple" "$staging" && ok=true || ok=false
  fi
  for archive in "${archives[@]}"; do
    if $ok && [[ ! -f $staging/$libdir/$archive ]]; then
      echo "cross-sysroots: no $archive" >&2
      ok=false
    fi
  done
  if ! $ok; then
    tail -n 40 "$log" >&2 || true
    echo "cross-sysroots: $target FAILED (log: $log)" >&2
    rm -rf "$staging"
    failed+=("$target")
    continue
  fi
  { recipe_of "$arch"; cat "$staging/.packages"; } >"$staging/.tessera-sysroot"
  rm -f "$staging/.packages"
  rm -rf "$sysroot"
  mv "$staging" "$sysroot"
  echo "cross-sysroots: $target ready in $sysroot ($((SECONDS - start)) s)"
done

# The package lists are only needed while something is made (they go stale anyway): don't keep 80 MB of them.
rm -rf "$apt_dir/lists" "$apt_dir/cache"

if ((${#failed[@]})); then
  echo "cross-sysroots: could not make: ${failed[*]}" >&2
  exit 1
fi
echo "cross-sysroots: made ${#missing[@]} sysroot(s) in $root"
