# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# shellcheck disable=SC2034  # the PFLASH_ variables are for the scripts that source this file
# Sourced by the flash logger tests (bash): running a bare-metal image on a QEMU board with a host file as its
# NOR flash, the board chosen by PFLASH_BOARD:
#   cfi     (default) QEMU's riscv32 `virt` and its CFI parallel NOR. Facts checked on QEMU 7.2 (issue 46): pflash
#           unit 0 would be taken as the boot flash and unit 1 makes QEMU skip -kernel, so only unit 1 is given
#           (32 MiB, mapped at 0x22000000).
#   spinor  QEMU's riscv64 `sifive_u` and the ISSI IS25WP256 SPI NOR on its QSPI0 (`-drive if=mtd`, 32 MiB; the
#           SD card slot is on QSPI2). The array's region starts at 16 MiB of the part (examples/pflash_board_spinor.hpp).
# Either way the image is loaded with `-device loader` (the board then starts it at RAM's base, where it is
# linked, as with -kernel). Semihosting as in toolchains/run-riscv32-virt.sh; the image's arguments go through
# -semihosting-config's arg= (argv[0] first), since -append needs -kernel.
# What differs between the boards, for the tests: PFLASH_REGION_START (the array region's first byte in the
# file), PFLASH_MODES (the two ways each logger runs: pflash_mode_args gives a mode's image arguments),
# PFLASH_SHORT_MODE (a mode slow enough on QEMU to log fewer chunks), PFLASH_KILL (the power cut's signal).

PFLASH_BYTES=$((32 * 1024 * 1024))
PFLASH_REGION_BYTES=$((512 * 1024))
PFLASH_TIMEOUT=${TESSERA_QEMU_TIMEOUT:-300}
PFLASH_BOARD=${PFLASH_BOARD:-cfi}
case $PFLASH_BOARD in
  cfi)
    PFLASH_REGION_START=0
    PFLASH_MODES=(buffered word)  # through the write buffer, or word by word
    PFLASH_SHORT_MODE=word  # a word program costs QEMU a 512-byte write to the file, about 0.25 ms
    # QEMU's pflash writes its file before the program returns to the guest: SIGKILL loses nothing returned.
    PFLASH_KILL=KILL
    ;;
  spinor)
    PFLASH_REGION_START=$((16 * 1024 * 1024))
    PFLASH_MODES=(sector block)  # 4 KiB erase sectors (20h), or 64 KiB blocks (D8h)
    PFLASH_SHORT_MODE=''
    # QEMU's m25p80 writes its file asynchronously (a page's write is queued when chip select rises, and the
    # guest goes on): SIGKILL can drop writes that had returned, or keep a later one and drop an earlier one,
    # which no power cut does. SIGTERM stops the guest where it is (between two instructions, as a cut does),
    # then QEMU completes the writes already queued before it exits: the file is the part at that instant.
    PFLASH_KILL=TERM
    ;;
  *)
    echo "pflash_lib.sh: unknown PFLASH_BOARD '$PFLASH_BOARD' (cfi or spinor)" >&2
    return 1
    ;;
esac

# pflash_mode_args MODE: the image arguments of a mode of PFLASH_MODES (one a line; none for the first mode).
pflash_mode_args() {
  case $1 in
    word) echo --word ;;
    block) echo --block ;;
  esac
}

# pflash_erased FILE: a bank of all 0xFF (an erased part).
pflash_erased() {
  head -c "$PFLASH_BYTES" /dev/zero | LC_ALL=C tr '\0' '\377' >"$1"
}

# pflash_command FILE rw|ro IMAGE [ARG...]: the QEMU command in the array PFLASH_CMD.
pflash_command() {
  local file=$1 mode=$2 image=$3
  shift 3
  local semi="enable=on,target=native,arg=${image##*/}" arg drive="format=raw,file=$file"
  local -a machine
  for arg in "$@"; do semi+=",arg=$arg"; done
  [[ $mode == ro ]] && drive+=",readonly=on"
  if [[ $PFLASH_BOARD == spinor ]]; then
    machine=(qemu-system-riscv64 -M sifive_u)
    drive="if=mtd,$drive"
  else
    machine=(qemu-system-riscv32 -M virt)
    drive="if=pflash,unit=1,$drive"
  fi
  PFLASH_CMD=("${machine[@]}" -bios none -display none -monitor none -serial null
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
# `tessera dump` prints exactly pflash_expected ROWS, for the frame at byte OFFSET (default 0) of FILE (the
# region's start, past it when the recovery finalized into header slot 1). Prints what differs; status 1 then.
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
