#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs one bare-metal Cortex-M program (an ELF built with toolchains/cortex-m.cmake) on a QEMU board with that
# core and exits with the program's own exit status (semihosting SYS_EXIT), so a failing test fails ctest.
# A hung program is killed after ${TESSERA_QEMU_TIMEOUT:-300} seconds and reported as a failure (exit 124).
# A CPU fault also fails: picolibc's fault handler prints the fault and the registers over semihosting and
# exits with status 1 (a fault QEMU cannot escalate, a lockup, ends QEMU with a non-zero status too).
# Usage: run-cortex-m.sh MACHINE program.elf [arguments passed through semihosting's command line]
#   MACHINE: microbit (Cortex-M0), mps2-an385 (M3), mps2-an386 (M4), mps2-an500 (M7), mps2-an505 (M33), or
#   microbit-test: the micro:bit's nRF51 and Cortex-M0, its flash enlarged to 4 MiB and its RAM to 16 MiB (QEMU's
#   nrf51-soc properties), for the programs larger than the part (toolchains/cortex-m.cmake).
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 MACHINE program.elf [args...]" >&2
  exit 2
fi
machine=$1
elf=$2
shift 2
limit=${TESSERA_QEMU_TIMEOUT:-300}
case $machine in
  microbit-test) board="-M microbit -global nrf51-soc.flash-size=0x400000 -global nrf51-soc.sram-size=0x1000000" ;;
  microbit | mps2-an385 | mps2-an386 | mps2-an500 | mps2-an505) board="-M $machine" ;;
  *)
    echo "run-cortex-m.sh: unknown machine '$machine'" >&2
    exit 2
    ;;
esac
# Semihosting output arrives on QEMU's stderr: merge it into stdout so ctest shows it in order.
# No display, monitor or serial port: nothing reads the terminal (CI has no stdin).
# shellcheck disable=SC2086  # $board holds separate words
if [ $# -gt 0 ]; then
  timeout -k 10 "$limit" qemu-system-arm $board -display none -monitor none -serial null \
    -semihosting-config enable=on,target=native -kernel "$elf" -append "$*" </dev/null 2>&1
else
  timeout -k 10 "$limit" qemu-system-arm $board -display none -monitor none -serial null \
    -semihosting-config enable=on,target=native -kernel "$elf" </dev/null 2>&1
fi
status=$?
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
  echo "run-cortex-m.sh: TIMEOUT: $elf did not finish within ${limit} s (killed)" >&2
  exit 124
fi
exit "$status"
