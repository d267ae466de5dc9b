#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ctest driver of example_pflash_logger and example_spinor_logger: the README's story end to end on a flash part
# QEMU models (PFLASH_BOARD: tests/flash/pflash_lib.sh). The logger image (examples/pflash_logger.cpp) writes its
# array chunk by chunk onto the CFI NOR bank of QEMU's riscv32 `virt` board, or the SPI NOR of its riscv64
# `sifive_u`, and finalizes; after QEMU exits, the part's backing file is the "dump" of the flash: `tessera` on
# the host reads the array from it (info and every item, against the items the logger computed), at the region's
# first byte (--offset). Run in both of the board's modes: CFI through the write buffer (24 chunks) and word by
# word (6 chunks: a word program costs QEMU a 512-byte write to the file, about 0.25 ms); SPI NOR with 4 KiB
# sectors and with 64 KiB blocks (24 chunks each).
# Usage: pflash_logger_test.sh LOGGER.elf TOOL WORK_FILE   (TOOL empty: the host checks without the tool only)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
logger=$1
tool=$2
file=$3
# shellcheck source=tests/flash/pflash_lib.sh
. "$here/pflash_lib.sh"

frame_of() {  # the "finalized frame_start S frame_len L chunks N" line of a log: "S L N"
  sed -n 's/^finalized frame_start \([0-9]*\) frame_len \([0-9]*\) chunks \([0-9]*\)$/\1 \2 \3/p' "$1"
}

for mode in "${PFLASH_MODES[@]}"; do
  img=$file.$mode
  log=$file.$mode.log
  mapfile -t args < <(pflash_mode_args "$mode")
  [[ $mode == "$PFLASH_SHORT_MODE" ]] && args+=(--chunks 6)
  pflash_erased "$img"
  start=$EPOCHREALTIME
  status=0
  pflash_run "$img" rw "$logger" "${args[@]}" >"$log" || status=$?
  cat "$log"
  ((status == 0)) || { echo "pflash_logger_test: the logger failed ($mode, exit $status)"; exit 1; }
  read -r fstart flen nchunks <<<"$(frame_of "$log")"
  [[ -n ${nchunks:-} ]] || { echo "pflash_logger_test: the logger did not say where its frame is"; exit 1; }
  ((fstart == 0)) || { echo "pflash_logger_test: the frame starts at $fstart, not at the region's byte 0"; exit 1; }
  # A cframe header: msgpack fixarray(14), str(8) "b2frame\0", int32 header_len, uint64 frame_len (big-endian).
  head=$(od -An -v -tx1 -j "$PFLASH_REGION_START" -N 24 "$img" | tr -d ' \n')
  [[ $head == 9ea862326672616d6500d2* ]] ||
    { echo "pflash_logger_test: byte $PFLASH_REGION_START is not a cframe: $head"; exit 1; }
  ((16#${head:32:16} == flen)) || { echo "pflash_logger_test: header frame_len 0x${head:32:16}, logger $flen"; exit 1; }
  echo "pflash_logger_test: $mode: a cframe of $flen bytes at byte $PFLASH_REGION_START of the part's file, $nchunks chunks" \
    "($(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }') s)"
  if [[ -n $tool ]]; then
    if [[ ! -x $tool ]]; then
      echo "pflash_logger_test: the tessera tool $tool does not exist (build the host first)"
      exit 1
    fi
    # The whole 32 MiB file as it is: the frame's header says where it ends (the log's records lie past it).
    pflash_check_array "$tool" "$img" $((nchunks * 64)) "$PFLASH_REGION_START" || exit 1
    echo "pflash_logger_test: tessera read the array from the part's file: $((nchunks * 64)) x 16 int32, every item"
  fi
done
if [[ -z $tool ]]; then
  echo "pflash_logger_test: no tessera tool in this build (TESSERA_HOST_TOOL): the arrays were not read on the host"
  exit 0
fi
"$tool" info "$file.${PFLASH_MODES[0]}" --offset "$PFLASH_REGION_START"
rm -f "$file.${PFLASH_MODES[1]}"
