#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Code size of the Cortex-M4 images: for each ELF, the totals of arm-none-eabi-size (text, data, bss) and, from
# its GNU ld map file (ELF.map, written by the link: -Wl,-Map; the bare-metal examples link with one, see
# examples/CMakeLists.txt), Tessera's share: the .text* and .rodata* input sections taken from libtessera*.a
# (core and each port), and each codec library's share (liblz4, libzstd, libz) when one is linked. With
# TOP=N (default 0), also the N largest Tessera input sections of each image: with -ffunction-sections each is
# one function or constant, named here demangled (without function sections, one object file each). For a
# BUILD_DIR it first prints the size options that are OFF there (TESSERA_ERROR_MESSAGES, TESSERA_WITH_*: the
# cortex-m4 default turns the messages off; the cortex-m4-messages target of ci/test.sh keeps them).
#
# Usage: ci/size-report.sh BUILD_DIR|IMAGE.elf...
#   BUILD_DIR: every image of BUILD_DIR/examples that has a map file next to it.
# Then, when the build wrote GCC's call graph (.ci files: TESSERA_STACK_USAGE), the stack of each image's public
# entry points (ci/stack.py: the deepest path of each, indirect calls resolved by type).
# Environment: SIZE (default arm-none-eabi-size), CXXFILT (default arm-none-eabi-c++filt), TOP, BUDGETS: the
#   most bytes of Tessera's share an image may carry, as "image=bytes ..." (issue 12's goals: the examples' ctest
#   tessera_size_budget passes them); each listed image gets a line saying whether it is within, and an image
#   over its budget, or a listed one that was not found, makes the exit status 1.
# Exit status: 0, or 1 when an image or its map is missing, no image was found, or a budget is exceeded.
set -uo pipefail

size_tool=${SIZE:-arm-none-eabi-size}
cxxfilt=${CXXFILT:-arm-none-eabi-c++filt}
top=${TOP:-0}

images=()
for arg in "$@"; do
  if [[ -d $arg ]]; then
    # The options that remove code (error messages, filters, codecs), so the figures of two builds compare.
    if [[ -f $arg/CMakeCache.txt ]]; then
      off=$(sed -n -E 's/^(TESSERA_ERROR_MESSAGES|TESSERA_WITH_[A-Z0-9]+):BOOL=(OFF|ON|0|1|FALSE|TRUE)$/\1=\2/p' \
        "$arg/CMakeCache.txt" | sort | tr '\n' ' ')
      echo "configuration of $arg: ${off:-every message, filter and codec option at its default}"
    fi
    for map in "$arg"/examples/*.map; do
      [[ -f $map && -f ${map%.map} ]] && images+=("${map%.map}")
    done
  else
    images+=("$arg")
  fi
done
if [[ ${#images[@]} -eq 0 ]]; then
  echo "size-report.sh: no image with a map file (usage: $0 BUILD_DIR|IMAGE.elf...)" >&2
  exit 1
fi

# One line per kept input section of the map: "<size> <library or object> <section>". Only the memory map part
# (sections --gc-sections discarded are listed before it); a long section name sits alone on its line and its
# address, size and file follow on the next. Merged string sections (.rodata*.str1.*: the link keeps each string
# once, whichever objects hold it) count the bytes they occupy in the image, from their address to the next input
# section's: the map lists them with their size before merging, or with the merged block's, not with what they
# add. Every other section counts its listed size.
map_sections() {
  awk '
    /^Linker script and memory map/ { in_map = 1; next }
    !in_map { next }
    NF == 1 && $1 ~ /^\./ { pending = $1; next }
    NF >= 4 && $1 ~ /^\./ && $2 ~ /^0x/ && $3 ~ /^0x/ { keep($1, $2, $3, $4); pending = ""; next }
    NF == 3 && pending != "" && $1 ~ /^0x/ && $2 ~ /^0x/ { keep(pending, $1, $2, $3); pending = ""; next }
    { pending = "" }
    function hex(s,   n, i) {  # without gawk extensions
      n = 0
      for (i = 3; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
      return n
    }
    function keep(name, addr, size, file) {
      count++
      names[count] = name; addrs[count] = hex(addr); sizes[count] = hex(size); files[count] = file
    }
    END {
      for (k = 1; k <= count; k++) {
        n = sizes[k]
        if (n > 0 && names[k] ~ /\.str[0-9]/) {
          for (j = k + 1; j <= count && addrs[j] <= addrs[k]; j++) {}
          if (j <= count && addrs[j] - addrs[k] < n) n = addrs[j] - addrs[k]
        }
        if (n > 0 && names[k] ~ /^\.(text|rodata)/) print n, files[k], names[k]
      }
    }' "$1"
}

declare -A budget=()
for entry in ${BUDGETS:-}; do
  budget[${entry%%=*}]=${entry#*=}
done
declare -A seen=()

status=0
printf '%-22s %8s %7s %8s | %9s %s\n' image text data bss tessera "(.text* + .rodata* from libtessera*.a, bytes)"
for elf in "${images[@]}"; do
  name=$(basename "$elf")
  map=$elf.map
  if [[ ! -f $elf || ! -f $map ]]; then
    echo "size-report.sh: $elf or its map $map is missing" >&2
    status=1
    continue
  fi
  read -r text data bss _ < <("$size_tool" "$elf" | awk 'NR == 2')
  sections=$(map_sections "$map")
  # Per library: libtessera_<x>.a -> <x>; the codec libraries by name.
  shares=$(awk '
    { lib = "" }
    $2 ~ /libtessera[^\/]*\.a\(/ {
      lib = $2; sub(/.*libtessera_?/, "", lib); sub(/\.a\(.*/, "", lib); tessera += $1
      if ($3 ~ /^\.rodata/) { rodata += $1; if ($3 ~ /\.str[0-9]/) strings += $1 }
    }
    $2 ~ /\/liblz4[^\/]*\.a\(/ { lib = "codec lz4" }
    $2 ~ /\/libzstd[^\/]*\.a\(/ { lib = "codec zstd" }
    $2 ~ /\/libz\.a\(/ { lib = "codec zlib" }
    lib != "" { by[lib] += $1 }
    END {
      printf "%d\t", tessera
      sep = ""
      for (lib in by) { printf "%s%s %d", sep, lib, by[lib]; sep = ", " }
      printf "; rodata %d, of which string literals %d", rodata, strings
    }' <<<"$sections")
  IFS=$'\t' read -r tessera rest <<<"$shares"
  printf '%-22s %8d %7d %8d | %9d %s\n' "$name" "$text" "$data" "$bss" "$tessera" \
    "($(awk -v b="$tessera" 'BEGIN { printf "%.1f KiB", b / 1024 }'): ${rest})"
  if [[ -n ${budget[$name]:-} ]]; then
    seen[$name]=1
    if ((tessera <= budget[$name])); then
      printf '    budget %d B: met (%d B to spare)\n' "${budget[$name]}" $((budget[$name] - tessera))
    else
      printf '    budget %d B: EXCEEDED by %d B\n' "${budget[$name]}" $((tessera - budget[$name]))
      status=1
    fi
  fi
  if [[ $top -gt 0 ]]; then
    # The section name without its .text./.rodata. prefix is the symbol (mangled); plain .text: the object.
    awk '$2 ~ /libtessera[^\/]*\.a\(/' <<<"$sections" | sort -k1,1nr | head -n "$top" |
      while read -r bytes file section; do
        sym=${section#.text.}
        sym=${sym#.rodata.}
        what=""
        if [[ $sym =~ ^(.+)\.str1\.[0-9]+$ ]]; then  # a function's string literals (error messages)
          sym=${BASH_REMATCH[1]}
          what=" (its string literals)"
        fi
        if [[ $sym == "$section" || $sym == .* || $sym == str* ]]; then
          sym="$section of ${file##*/}"
        else
          sym="$("$cxxfilt" -- "$sym")$what"
        fi
        printf '    %7d  %s\n' "$bytes" "$sym"
      done
  fi
done
for name in "${!budget[@]}"; do
  if [[ -z ${seen[$name]:-} ]]; then
    echo "size-report.sh: no image $name to check against its budget" >&2
    status=1
  fi
done

# The stack of each image's public entry points (ci/stack.py), when the build wrote GCC's call graph
# (TESSERA_STACK_USAGE, ON on bare metal). STACK=0 leaves it out; STACK_BUDGETS="pattern=bytes ..." holds them.
if [[ ${STACK:-1} != 0 ]] && compgen -G "$(dirname "$(dirname "${images[0]}")")/src/CMakeFiles/*/*/*.ci" >/dev/null; then
  stack_args=()
  for entry in ${STACK_BUDGETS:-}; do
    stack_args+=(--budget "$entry")
  done
  objdump_tool=${size_tool%size}objdump
  python3 "$(dirname "${BASH_SOURCE[0]}")/stack.py" --objdump "$objdump_tool" --cxxfilt "$cxxfilt" \
    "${stack_args[@]}" "${images[@]}" || status=1
fi
exit $status
