# SPDX-License-Identifier: BSD-3-Clause
"""NumPy .npy round trips of the `tessera` tool, checked by NumPy itself (Debian's python3-numpy).

For every dtype B2ND stores (bool, signed and unsigned integers, floats, complex, both byte orders, S, U,
datetime and timedelta, void, structured records with nested fields, subarrays and padding), numpy writes a .npy
file (format versions 1.0, 2.0 and 3.0), `tessera create --input x.npy` makes an array of it (dtype and shape
from the header), `tessera dump --format npy` writes it back, and numpy.load must give the same dtype, shape and
bytes; `info` must show the dtype string python-blosc2 stores (str(dtype.descr) for records, dtype.str
otherwise). Also: slices, stdin with --format npy, a raw-created array dumped as .npy, and a Fortran-ordered file
refused with one line on stderr and nothing left under the target name.

usage: npy_roundtrip.py TOOL WORKDIR [EMULATOR...]
"""
import os
import shutil
import subprocess
import sys

import numpy as np

TOOL = sys.argv[1]
WORK = os.path.join(sys.argv[2], "npy")
EMU = [w for w in sys.argv[3:] if w]
failures = []


def run(*args, stdin=None, ok=True):
    r = subprocess.run(EMU + [TOOL] + list(args), stdin=stdin, capture_output=True)
    if ok and (r.returncode != 0 or r.stderr):
        raise AssertionError("tessera %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr.decode(errors="replace")))
    return r


def b2nd_dtype(dt):
    """The dtype string python-blosc2 stores."""
    return str(dt.descr) if dt.names is not None else dt.str


def check(name, a, version=None, chunks=None):
    src = os.path.join(WORK, name + ".npy")
    with open(src, "wb") as f:
        np.lib.format.write_array(f, a, version=version)
    out = os.path.join(WORK, name + ".b2nd")
    back = os.path.join(WORK, name + ".back.npy")
    args = ["create", out, "--input", src, "--codec", "zstd"]
    if chunks:
        args += ["--chunks", chunks]
    run(*args)
    info = run("info", out).stdout.decode()
    want = "\ndtype: %s\n" % b2nd_dtype(a.dtype)
    if want not in info:
        raise AssertionError("%s: info does not show %r:\n%s" % (name, want, info))
    run("dump", out, "--format", "npy", "-o", back)
    b = np.load(back)
    if b.dtype != a.dtype or b.shape != a.shape or b.tobytes() != a.tobytes():
        raise AssertionError("%s: round trip differs: %s %s -> %s %s" % (name, a.dtype, a.shape, b.dtype, b.shape))
    raw = run("dump", out).stdout
    if raw != a.tobytes():
        raise AssertionError("%s: dump --format raw is not the items" % name)
    return out


def filled(dt, shape, seed):
    """Deterministic bytes of every kind (NaNs and odd bit patterns included: compared as bytes)."""
    n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=n, dtype=np.uint8)
    if dt.kind == "b":
        raw &= 1
    a = np.frombuffer(raw.tobytes(), dtype=dt) if n else np.zeros(0, dtype=dt)
    return a.reshape(shape)


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    simple = ["?", "i1", "<i2", "<i4", "<i8", "u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8", "<c8", "<c16",
              ">i2", ">i4", ">i8", ">u2", ">u4", ">u8", ">f2", ">f4", ">f8", ">c8", ">c16",
              "S1", "S7", "<U1", "<U5", ">U3", "V6", "<M8[ns]", "<M8[D]", ">M8[s]", "<m8[us]", ">m8[h]"]
    if np.dtype(np.longdouble).itemsize in (12, 16):
        simple += [np.dtype(np.longdouble).str, np.dtype(np.clongdouble).str]
    shapes = [(), (0,), (17,), (30, 41)]
    for i, ds in enumerate(simple):
        dt = np.dtype(ds)
        for j, shape in enumerate([(5, 6, 7), shapes[i % len(shapes)]]):  # every dtype in 3-d, the rest in turn
            name = "d%02d_s%d" % (i, j)
            try:
                check(name, filled(dt, shape, i * 10 + j))
            except AssertionError as e:
                failures.append(str(e))
    records = [
        np.dtype([("a", "<i4"), ("b", ">f8"), ("c", "S3")]),
        np.dtype([("p", [("x", "<f4"), ("y", "<f4")]), ("n", "<u2", (2, 3)), ("t", "<M8[ms]")]),
        np.dtype({"names": ["a", "b"], "formats": ["u1", "<i4"], "offsets": [0, 4], "itemsize": 12}),  # padding
        np.dtype([("flag", "?"), ("name", "<U4"), ("z", "<c8")]),
    ]
    for i, dt in enumerate(records):
        for j, shape in enumerate([(13,), (4, 9)]):
            try:
                check("r%d_s%d" % (i, j), filled(dt, shape, 100 + i * 10 + j))
            except AssertionError as e:
                failures.append(str(e))
    # Text: records of simple fields print as tuples of their values, strings as numpy shows them.
    text_cases = [
        (np.array([(1, -2.5, b"ab"), (-3, 4.25, b"")], dtype=[("a", "<i4"), ("b", ">f8"), ("c", "S3")]),
         "(1, -2.5, b'ab') (-3, 4.25, b'')\n"),
        (np.array([["ab", "h\u00e9llo"], ["x'y", ""]], dtype="<U6"), "'ab' 'h\u00e9llo'\n'x\\'y' ''\n"),
        (np.array([((1.0, 2.0), 3)], dtype=[("p", [("x", "<f4"), ("y", "<f4")]), ("n", "<u2")]),
         "0x0000803f000000400300\n"),  # a nested record: its bytes
    ]
    for i, (a, want) in enumerate(text_cases):
        src = os.path.join(WORK, "text%d.npy" % i)
        np.save(src, a)
        out = os.path.join(WORK, "text%d.b2nd" % i)
        try:
            run("create", out, "--input", src)
            got = run("dump", out, "--format", "text").stdout.decode("utf-8")
            if got != want:
                failures.append("dump --format text of %s: got %r, want %r" % (a.dtype, got, want))
        except AssertionError as e:
            failures.append(str(e))
    # Format versions: 2.0 and 3.0 asked for; 3.0 as numpy writes it for a field name latin-1 cannot hold; a
    # latin-1 name in a 1.0 header.
    for version in [(1, 0), (2, 0), (3, 0)]:
        try:
            check("v%d" % version[0], filled(np.dtype("<i4"), (20, 3), 7), version=version)
        except AssertionError as e:
            failures.append(str(e))
    for name, field in [("utf8", "\u03c0"), ("latin1", "\u00e9t\u00e9")]:
        try:
            check("name_" + name, filled(np.dtype([(field, "<f8"), ("k", "<i2")]), (11,), 3))
        except AssertionError as e:
            failures.append(str(e))
    # Several chunks (given), and a slice of them as .npy.
    a = np.arange(60 * 70 * 3, dtype=">f8").reshape(60, 70, 3)
    out = check("chunked", a, chunks="16,20,3")
    sl = os.path.join(WORK, "slice.npy")
    run("dump", out, "--slice", "5:47,:,1:3", "--format", "npy", "-o", sl)
    b = np.load(sl)
    if b.dtype != a.dtype or not np.array_equal(b, a[5:47, :, 1:3]):
        failures.append("dump --slice --format npy differs from numpy's slice")
    # stdin with --format npy.
    src = os.path.join(WORK, "chunked.npy")
    with open(src, "rb") as f:
        run("create", os.path.join(WORK, "stdin.b2nd"), "--format", "npy", "--input", "-", stdin=f)
    if run("dump", os.path.join(WORK, "stdin.b2nd")).stdout != a.tobytes():
        failures.append("create --format npy --input - (stdin) differs")
    # An array created from raw bytes, dumped as .npy: numpy reads its dtype and shape.
    raw = os.path.join(WORK, "plain.raw")
    c = np.arange(24, dtype="<u2").reshape(2, 3, 4)
    c.tofile(raw)
    run("create", os.path.join(WORK, "plain.b2nd"), "--dtype", "<u2", "--shape", "2,3,4", "--input", raw)
    run("dump", os.path.join(WORK, "plain.b2nd"), "--format", "npy", "-o", os.path.join(WORK, "plain.npy"))
    d = np.load(os.path.join(WORK, "plain.npy"))
    if d.dtype != c.dtype or not np.array_equal(d, c):
        failures.append("a raw-created array dumped as .npy differs")
    # Fortran order: refused, one line, nothing left under the target name.
    fo = os.path.join(WORK, "fortran.npy")
    np.save(fo, np.asfortranarray(np.arange(12, dtype="<i4").reshape(3, 4)))
    target = os.path.join(WORK, "fortran.b2nd")
    r = run("create", target, "--input", fo, ok=False)
    err = r.stderr.decode()
    if r.returncode != 1 or err.count("\n") != 1 or "Fortran order" not in err:
        failures.append("Fortran-ordered input: exit %d, stderr %r" % (r.returncode, err))
    if os.path.exists(target) or any(n.startswith(".fortran.b2nd") for n in os.listdir(WORK)):
        failures.append("Fortran-ordered input left a file behind")
    # A .npy input and --dtype: a usage error.
    r = run("create", target, "--input", src, "--dtype", "<f8", ok=False)
    if r.returncode != 2 or "a .npy input gives the dtype and shape itself" not in r.stderr.decode():
        failures.append("--dtype with a .npy input: exit %d, %r" % (r.returncode, r.stderr))
    if failures:
        for f in failures:
            print("FAIL:", f)
        sys.exit(1)
    shutil.rmtree(WORK, ignore_errors=True)
    print("all .npy round trips exact")


main()
