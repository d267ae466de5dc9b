# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Sourced by the pflash tests (bash): running a bare-metal RV32 image on QEMU's riscv32 `virt` board with a host
# file as its parallel NOR flash. Facts checked on QEMU 7.2 (issue 46): pflash unit 0 would be taken as the boot
# flash and unit 1 makes QEMU skip -kernel, so only unit 1 is given (32 MiB, mapped at 0x22000000) and the
# image is loaded with `-device loader` (the board then starts it at RAM's base, where it is linked, as with
# -kernel). Semihosting as in toolchains/run-riscv32-virt.sh; the image's arguments go through
# -semihosting-config's arg= (argv[0] first), since -append needs -kernel.

PFLASH_BYTES=$((32 * 1024 * 1024))
PFLASH_TIMEOUT=${TESSERA_QEMU_TIMEOUT:-300}

# pflash_erased FILE: a bank of all 0xFF (an erased part).
pflash_erased() {
  head -c "$PFLASH_BYTES" /dev/zero | LC_ALL=C tr '\0' '\377' >"$1"
}

# pflash_command FILE rw|ro IMAGE [ARG...]: the QEMU command in the array PFLASH_CMD.
pflash_command() {
  local file=$1 mode=$2 image=$3
  shift 3
  local semi="enable=on,target=native,arg=${image##*/}" arg drive="if=pflash,format=raw,unit=1,file=$file"
  for arg in "$@"; do semi+=",arg=$arg"; done
  [[ $mode == ro ]] && drive+=",readonly=on"
  PFLASH_CMD=(qemu-system-riscv32 -M virt -bios none -display none -monitor none -serial null
    -semihosting-config "$semi" -drive "$drive" -device "loader,file=$image")
}

# pflash_run FILE rw|ro IMAGE [ARG...]: runs the image to its end (output on stdout); its exit status, 124 when
# it hangs past TESSERA_QEMU_TIMEOUT seconds.
pflash_run() {
  pflash_command "$@"
  local status=0
  timeout -k 10 "$PFLASH_TIMEOUT" "${PFLASH_CMD[@]}" </dev/null 2>&1 || status=$?
  if ((status == 124 || status == 137)); then
    echo "pflash_run: TIMEOUT: ${3##*/} did not finish within $PFLASH_TIMEOUT s"
    return 124
  fi
  return "$status"
}

# pflash_expected ROWS: the array of examples/pflash_array.hpp as `tessera dump --format text` prints it: ROWS
# lines of 16 int32 items, item (r, c) = (r * 16 + c) * 3 + (r * 7 + c * 13) % 29 - 1000 (pflash_item).
pflash_expected() {
  awk -v rows="$1" 'BEGIN {
    for (r = 0; r < rows; ++r) {
      line = ""
      for (c = 0; c < 16; ++c) line = line (c ? " " : "") ((r * 16 + c) * 3 + (r * 7 + c * 13) % 29 - 1000)
      print line
    }
  }'
}

# pflash_check_array TOOL FILE ROWS [OFFSET]: `tessera info` says the shape (ROWS, 16), <i4 and BloscLZ, and
# `tessera dump` prints exactly pflash_expected ROWS, for the frame at byte OFFSET (default 0) of FILE (a frame
# the recovery finalized into header slot 1 starts past byte 0). Prints what differs; status 1 then.
pflash_check_array() {
  local tool=$1 frame=$2 rows=$3 offset=${4:-0} info
  info=$("$tool" info "$frame" --offset "$offset") || { echo "tessera info $frame --offset $offset failed"; return 1; }
  if ! grep -qx "shape: $rows,16" <<<"$info" || ! grep -qx "dtype: <i4" <<<"$info" ||
    ! grep -qx "codec: blosclz" <<<"$info"; then
    echo "tessera info $frame does not say shape $rows,16, dtype <i4, codec blosclz:"
    echo "$info"
    return 1
  fi
  if ! cmp -s <("$tool" dump "$frame" --offset "$offset" --format text) <(pflash_expected "$rows"); then
    echo "tessera dump $frame differs from the items logged ($rows rows)"
    return 1
  fi
}
