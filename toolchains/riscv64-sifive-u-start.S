/* SPDX-License-Identifier: BSD-3-Clause */
/* The first instructions of a bare-metal image on QEMU's sifive_u board (toolchains/riscv64-baremetal-sifive-u.cmake
   links it ahead of picolibc's crt0, so it lands at RAM's base, where the boot ROM sends every hart). All harts
   start at once (the E51 monitor core, hart 0, and the U54 application cores): hart 0 goes on to picolibc's
   _start, the others wait for an interrupt for ever, with interrupts off, before they touch the stack or RAM
   (crt0 would run on each of them with the same stack). */
  .section .text.init.enter, "ax", @progbits
  .globl __tessera_sifive_u_start
  .type __tessera_sifive_u_start, @function
__tessera_sifive_u_start:
  .option push
  .option arch, +zicsr
  csrr t0, mhartid
  .option pop
  beqz t0, 2f
1:
  wfi
  j 1b
2:
  j _start
  .size __tessera_sifive_u_start, . - __tessera_sifive_u_start
