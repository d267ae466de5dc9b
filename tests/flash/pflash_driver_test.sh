#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ctest driver of flash_cfi_pflash: the CFI driver on QEMU's riscv32 `virt` pflash
# (tests/flash/test_flash_cfi_pflash.cpp says what the image checks). Creates the backing file erased (all 0xFF:
# the model stores what is programmed, it does not AND it into what is there), runs the image on a writable
# bank, finds the pattern it programmed in block 126 of the host file, then runs it again on the same file given
# read-only and checks that the file did not change. The file is removed when everything passed.
# Usage: pflash_driver_test.sh IMAGE.elf WORK_FILE
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
image=$1
file=$2
# shellcheck source=tests/flash/pflash_lib.sh
. "$here/pflash_lib.sh"

pflash_erased "$file"
pflash_run "$file" rw "$image" || { echo "pflash_driver_test: the image failed on a writable bank"; exit 1; }

# Block 126 (256 KiB blocks): "TESSERA-CFI-OK!!" at its start (word programs), then erased up to 4096, then a
# 4096-byte buffer window of the image's fill(.., 6): byte i = (i * 131 + 42 + (i >> 8)) & 255.
block=$((126 * 262144))
head_bytes=$(dd if="$file" bs=1 skip=$block count=16 status=none)
[[ $head_bytes == "TESSERA-CFI-OK!!" ]] || { echo "pflash_driver_test: block 126 starts with '$head_bytes'"; exit 1; }
want=$(awk 'BEGIN { for (i = 0; i < 4096; ++i) printf "%02x", (i * 131 + 42 + int(i / 256)) % 256; }')
got=$(dd if="$file" bs=4096 skip=$(((block + 4096) / 4096)) count=1 status=none | od -An -v -tx1 | tr -d ' \n')
[[ $got == "$want" ]] || { echo "pflash_driver_test: the buffered window is not in the host file"; exit 1; }
gap=$(dd if="$file" bs=1 skip=$((block + 16)) count=$((4096 - 16)) status=none | od -An -v -tx1 | tr -d ' \nf')
[[ -z $gap ]] || { echo "pflash_driver_test: bytes between the two writes are not erased"; exit 1; }
echo "pflash_driver_test: the word and buffered programs are in the host file"

sum=$(cksum <"$file")
if ! pflash_run "$file" ro "$image" --readonly; then
  echo "pflash_driver_test: the image failed on a read-only bank"
  exit 1
fi
[[ $(cksum <"$file") == "$sum" ]] || { echo "pflash_driver_test: the read-only run changed the file"; exit 1; }
rm -f "$file"
echo "pflash_driver_test: passed"
