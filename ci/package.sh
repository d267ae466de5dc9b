#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The install and the Debian package, as a user takes them (README.md's Install section; docs/build.md):
#   1. the release preset (the libraries, the tool, the install rules; no tests) configures with GoogleTest
#      pointed at a folder that does not exist, builds with `cmake --workflow --preset release` and installs into
#      a staging prefix: the tool, headers, static libraries, CMake package, pkg-config files, licence, man page;
#   2. `cmake --workflow --preset package` builds tessera_VERSION_ARCH.deb (CPack), which is checked
#      (name, fields, files), installed with dpkg -i, and used: `tessera --version`, the man page, a C++ and a C
#      program (tests/consumer/) built through find_package(tessera) and through a plain compiler command with
#      `pkg-config --cflags --libs`, and run;
#   3. dpkg -r removes it, and nothing of it is left (also when a step fails: the package never stays installed).
# Both builds go to the presets' folders, build/release and build/package; the consumers to
# ${TESSERA_BUILD_ROOT:-build}/package-check. Needs root (or sudo) for dpkg, and cmake, ninja, g++, pkg-config,
# dpkg-dev (dpkg-shlibdeps) and the codec libraries (ci/install-deps.sh --host). Environment: TESSERA_JOBS
# (default 2). Prints each step and its time; the last line is "package: passed (N s)" or "package: FAILED ...",
# with exit status 0 only when everything passed. ci/test.sh runs it as its target `package` (one test).
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 1
build_root=${TESSERA_BUILD_ROOT:-build}
[[ $build_root == /* ]] || build_root=$repo/$build_root
work=$build_root/package-check
jobs=${TESSERA_JOBS:-2}
export CMAKE_BUILD_PARALLEL_LEVEL=$jobs
start=$SECONDS

as_root=()
[[ $(id -u) != 0 ]] && as_root=(sudo)
installed_by_us=false

step() { printf '\n---- package: %s (%d s)\n' "$*" $((SECONDS - start)); }
fail() {
  echo "package: FAILED: $* ($((SECONDS - start)) s)"
  if $installed_by_us; then
    "${as_root[@]}" dpkg -r tessera >/dev/null 2>&1 || echo "package: could not remove the tessera package"
  fi
  exit 1
}
is_installed() { [[ $(dpkg-query -W -f='${Status}' tessera 2>/dev/null) == "install ok installed" ]]; }

for tool in cmake ninja c++ cc pkg-config dpkg dpkg-deb dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || fail "$tool is missing (ci/install-deps.sh)"
done
version=$(sed -nE 's/^project\(tessera VERSION ([0-9.]+).*/\1/p' CMakeLists.txt)
[[ -n $version ]] || fail "no version in CMakeLists.txt's project()"
arch=$(dpkg --print-architecture)

# ---- 1. The install README.md shows: the release preset, with no GoogleTest.
step "release preset: configure without GoogleTest, build, install into a staging prefix"
rm -rf "$work"
mkdir -p "$work"
cmake --preset release -DTESSERA_GTEST_SOURCE_DIR=/nonexistent >"$work/release-configure.log" 2>&1 ||
  { cat "$work/release-configure.log"; fail "the release preset does not configure without GoogleTest"; }
cmake --workflow --preset release || fail "cmake --workflow --preset release"
cmake --install build/release --prefix "$work/stage" >/dev/null || fail "cmake --install build/release"
for path in bin/tessera include/tessera/tessera.h include/tessera/array.hpp include/tessera/port/tessera_posix.h \
            lib/libtessera_core.a lib/libtessera_posix.a lib/cmake/tessera/tesseraConfig.cmake \
            lib/pkgconfig/tessera.pc share/doc/tessera/copyright share/man/man1/tessera.1; do
  [[ -e $work/stage/$path ]] || fail "the release install has no $path"
done
[[ ! -e build/release/googletest ]] || fail "the release preset configured GoogleTest"
echo "installed: $(find "$work/stage" -type f | wc -l) files"

# ---- 2. The Debian package.
step "package preset: build tessera_${version}_${arch}.deb"
deb=$repo/build/package/tessera_${version}_${arch}.deb
rm -f "$deb"
cmake --workflow --preset package || fail "cmake --workflow --preset package"
[[ -f $deb ]] || fail "no $deb"
dpkg-deb -f "$deb" Package Version Architecture Depends
for field in "Package: tessera" "Version: $version" "Architecture: $arch"; do
  dpkg-deb -f "$deb" "${field%%:*}" | grep -qx "${field#*: }" || fail "the package's ${field%%:*} is not ${field#*: }"
done
dpkg-deb -f "$deb" Depends | grep -q "libc6" || fail "the package has no Depends from dpkg-shlibdeps"
mapfile -t files < <(dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's|^\./|/|' | grep -v '/$')
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
for path in /usr/bin/tessera /usr/include/tessera/tessera.h /usr/include/tessera/port/flash.hpp \
            "/usr/lib/$multiarch/libtessera_core.a" "/usr/lib/$multiarch/libtessera_flash.a" \
            "/usr/lib/$multiarch/cmake/tessera/tesseraConfig.cmake" "/usr/lib/$multiarch/pkgconfig/tessera.pc" \
            /usr/share/man/man1/tessera.1 /usr/share/doc/tessera/copyright; do
  printf '%s\n' "${files[@]}" | grep -qx "$path" || fail "the package has no $path"
done
echo "$(basename "$deb"): ${#files[@]} files, $(stat -c %s "$deb") bytes"

step "dpkg -i"
if is_installed; then
  echo "a tessera package is installed (an earlier run's?): removing it first"
  "${as_root[@]}" dpkg -r tessera >/dev/null || fail "dpkg -r of the tessera package found installed"
fi
"${as_root[@]}" dpkg -i "$deb" || fail "dpkg -i $deb"
installed_by_us=true
is_installed || fail "dpkg -i did not leave tessera installed"

step "use it: the tool, find_package and pkg-config, C++ and C"
got=$(/usr/bin/tessera --version) || fail "tessera --version"
[[ $got == "tessera $version" ]] || fail "tessera --version says '$got', not 'tessera $version'"
echo "/usr/bin/tessera --version: $got"
grep -q "tessera info FILE" /usr/share/man/man1/tessera.1 || fail "the man page does not hold the tool's help"
expect_cxx="^tessera consumer: OK: "
expect_c="^tessera consumer \(C\): OK: tessera $version, "
run_checked() { # PROGRAM REGEX
  local out
  out=$("$1" 2>&1) || { echo "$out"; return 1; }
  echo "$out"
  grep -qE "$2" <<<"$out"
}
# find_package, from the system's own paths (no prefix given), the core and every port, C++ and C.
cmake -S tests/consumer/package -B "$work/find_package" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DTESSERA_CONSUMER_PORTS=memory,flash,posix -DTESSERA_CONSUMER_C=ON -DTESSERA_CONSUMER_PREFIX=/usr \
  >"$work/find_package.log" 2>&1 || { cat "$work/find_package.log"; fail "find_package(tessera): configure"; }
grep -E '^-- tessera ' "$work/find_package.log"
cmake --build "$work/find_package" >>"$work/find_package.log" 2>&1 ||
  { cat "$work/find_package.log"; fail "find_package(tessera): build"; }
run_checked "$work/find_package/consumer" "$expect_cxx" || fail "find_package: the C++ program"
run_checked "$work/find_package/consumer_c" "$expect_c" || fail "find_package: the C program"
# pkg-config, from its default search path, one compiler command each.
pcdir=$(pkg-config --variable=pcfiledir tessera) || fail "pkg-config does not find tessera"
[[ $pcdir == "/usr/lib/$multiarch/pkgconfig" ]] || fail "pkg-config finds tessera in $pcdir (another installation?)"
[[ $(pkg-config --modversion tessera) == "$version" ]] || fail "pkg-config --modversion tessera is not $version"
flags=$(pkg-config --cflags --libs tessera tessera-memory tessera-flash tessera-posix) || fail "pkg-config"
echo "pkg-config --cflags --libs: $flags"
# shellcheck disable=SC2086  # flags holds separate words
c++ -std=c++17 -Wall -Wextra -Werror -DTESSERA_CONSUMER_MEMORY -DTESSERA_CONSUMER_FLASH -DTESSERA_CONSUMER_POSIX \
  tests/consumer/consumer.cpp $flags -o "$work/pkg_consumer" || fail "pkg-config: compiling the C++ program"
run_checked "$work/pkg_consumer" "$expect_cxx" || fail "pkg-config: the C++ program"
# shellcheck disable=SC2086
cc -std=c99 -Wall -Wextra -Werror -DTESSERA_CONSUMER_MEMORY -DTESSERA_CONSUMER_POSIX tests/consumer/consumer.c \
  $flags -o "$work/pkg_consumer_c" || fail "pkg-config: compiling the C program"
run_checked "$work/pkg_consumer_c" "$expect_c" || fail "pkg-config: the C program"

step "dpkg -r"
"${as_root[@]}" dpkg -r tessera || fail "dpkg -r tessera"
installed_by_us=false
status=$(dpkg-query -W -f='${Status}' tessera 2>/dev/null)
[[ -z $status || $status == *not-installed* ]] || fail "after dpkg -r the package's status is '$status'"
left=()
for path in "${files[@]}"; do
  [[ -e $path ]] && left+=("$path")
done
for dir in /usr/include/tessera "/usr/lib/$multiarch/cmake/tessera" /usr/share/doc/tessera; do
  [[ -e $dir ]] && left+=("$dir")
done
((${#left[@]} == 0)) || fail "dpkg -r left: ${left[*]}"
echo "removed: none of the package's ${#files[@]} files is left"

echo
echo "package: passed ($((SECONDS - start)) s)"
