#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs one bare-metal RISC-V RV32 program (an ELF built with toolchains/riscv32-baremetal.cmake) on QEMU's virt
# board and exits with the program's own exit status (semihosting SYS_EXIT), so a failing test fails ctest.
# A hung program is killed after ${TESSERA_QEMU_TIMEOUT:-300} seconds and reported as a failure (exit 124).
# A CPU fault also fails: picolibc's trap handler exits with a non-zero status.
# Usage: run-riscv32-virt.sh program.elf [arguments passed through semihosting's command line]
# Environment: RISCV_QEMU and RISCV_MACHINE, another QEMU and board (run-riscv64-sifive-u.sh sets them).
set -u
if [ $# -lt 1 ]; then
  echo "usage: $0 program.elf [args...]" >&2
  exit 2
fi
elf=$1
shift
limit=${TESSERA_QEMU_TIMEOUT:-300}
qemu=${RISCV_QEMU:-qemu-system-riscv32}
machine=${RISCV_MACHINE:-virt}
# Semihosting output arrives on QEMU's stderr: merge it into stdout so ctest shows it in order.
# No display, monitor or serial port: nothing reads the terminal (CI has no stdin).
if [ $# -gt 0 ]; then
  timeout -k 10 "$limit" "$qemu" -M "$machine" -bios none -display none -monitor none -serial null \
    -semihosting-config enable=on,target=native -kernel "$elf" -append "$*" </dev/null 2>&1
else
  timeout -k 10 "$limit" "$qemu" -M "$machine" -bios none -display none -monitor none -serial null \
    -semihosting-config enable=on,target=native -kernel "$elf" </dev/null 2>&1
fi
status=$?
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
  echo "${0##*/}: TIMEOUT: $elf did not finish within ${limit} s (killed)" >&2
  exit 124
fi
exit "$status"
