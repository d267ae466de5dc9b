#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs one bare-metal RV64 program (toolchains/riscv64-baremetal-sifive-u.cmake) on QEMU's sifive_u board, as
# run-riscv32-virt.sh runs RV32 ones on `virt`: the program's exit status, a hang killed after
# TESSERA_QEMU_TIMEOUT seconds (exit 124). The boot ROM sends every hart to the image; its start code parks all
# but hart 0.
# Usage: run-riscv64-sifive-u.sh program.elf [arguments passed through semihosting's command line]
RISCV_QEMU=qemu-system-riscv64 RISCV_MACHINE=sifive_u exec sh "$(dirname "$0")/run-riscv32-virt.sh" "$@"
