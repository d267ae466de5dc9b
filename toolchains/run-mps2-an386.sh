#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs one bare-metal Cortex-M4 program (an ELF built with toolchains/cortex-m4.cmake) on QEMU's MPS2-AN386
# board and exits with the program's own exit status (semihosting SYS_EXIT), so a failing test fails ctest.
# A hung program is killed after ${TESSERA_QEMU_TIMEOUT:-300} seconds and reported as a failure (exit 124).
# A CPU fault also fails: picolibc's fault handler prints the registers and exits with status 1.
# Usage: run-mps2-an386.sh program.elf [arguments passed through semihosting's command line]
set -u
if [ $# -lt 1 ]; then
  echo "usage: $0 program.elf [args...]" >&2
  exit 2
fi
elf=$1
shift
limit=${TESSERA_QEMU_TIMEOUT:-300}
# Semihosting output arrives on QEMU's stderr: merge it into stdout so ctest shows it in order.
# No display, monitor or serial port: nothing reads the terminal (CI has no stdin).
if [ $# -gt 0 ]; then
  timeout -k 10 "$limit" qemu-system-arm -M mps2-an386 -cpu cortex-m4 -display none -monitor none -serial null \
    -semihosting-config enable=on,target=native -kernel "$elf" -append "$*" </dev/null 2>&1
else
  timeout -k 10 "$limit" qemu-system-arm -M mps2-an386 -cpu cortex-m4 -display none -monitor none -serial null \
    -semihosting-config enable=on,target=native -kernel "$elf" </dev/null 2>&1
fi
status=$?
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
  echo "run-mps2-an386.sh: TIMEOUT: $elf did not finish within ${limit} s (killed)" >&2
  exit 124
fi
exit "$status"
