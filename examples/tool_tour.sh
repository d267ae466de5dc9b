#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The command-line tool's tour as docs/tool.md shows it: every command there is run here, by ctest
# (example_tool_tour), in a scratch directory, with `tessera` on PATH. Needs Python 3 with NumPy for the .npy
# lines. Usage: tool_tour.sh WORKDIR
set -eu
cd "$1"
"${PYTHON:-python3}" -c 'import numpy as np; np.save("field.npy", (np.sin(np.arange(512 * 512) / 97) * 1000).astype("<f4").reshape(512, 512))'
"${PYTHON:-python3}" -c 'import numpy as np; np.load("field.npy").tofile("field.raw")'

# Make an array from C-order bytes, look at it, read a slice, check it.
tessera create field.b2nd --dtype '<f4' --shape 512,512 --codec zstd --clevel 5 --input field.raw
tessera info field.b2nd
tessera dump field.b2nd --slice 100:102,0:4 --format text
tessera verify field.b2nd

# NumPy files both ways; recompress, rechunk, and make a sparse frame (a directory).
tessera create copy.b2nd --input field.npy --codec lz4
tessera dump copy.b2nd --format npy -o back.npy
tessera convert field.b2nd small.b2nd --codec zstd --clevel 9 --chunks 128,128
tessera convert field.b2nd field.sframe --sparse

# Check with two threads and no progress line; keep a file tight after rewrites; every fact as JSON.
tessera verify field.sframe --threads 2 --quiet
tessera compact small.b2nd
tessera info --json small.b2nd

# Raw bytes out, through a pipe or into a file.
tessera dump small.b2nd -o small.raw
tessera dump field.sframe | cmp - field.raw

"${PYTHON:-python3}" -c 'import numpy as np; a = np.load("field.npy"); assert (np.load("back.npy") == a).all()'
cmp small.raw field.raw
echo "tool tour: every command ran and the data came back exact"
