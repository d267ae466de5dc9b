# SPDX-License-Identifier: BSD-3-Clause
"""The `tessera` tool's progress line and `info --json`.

Progress: with stderr a terminal (a pty here) and TESSERA_PROGRESS_DELAY_MS=0 (shown from the first update),
dump, create, convert and verify draw "tessera CMD: done/total MB (P%), R MB/s..." lines with \\r and clear the
line at the end; with --quiet, or with stderr a pipe, nothing is written to stderr. info --json: parses as JSON
and says what info's text says. dump without --format writes text to a terminal and raw bytes into a pipe.

usage: progress_json.py TOOL WORKDIR [EMULATOR...]
"""
import json
import os
import pty
import shutil
import subprocess
import sys

TOOL = sys.argv[1]
WORK = os.path.join(sys.argv[2], "progress")
EMU = [w for w in sys.argv[3:] if w]
ENV = dict(os.environ, TESSERA_PROGRESS_DELAY_MS="0")
failures = []


def on_tty(args):
    """Runs the tool with stderr on a pty; returns (exit status, what it wrote to stderr)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(EMU + [TOOL] + args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave,
                         env=ENV)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(), out.decode(errors="replace")


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    raw = os.path.join(WORK, "in.raw")
    with open(raw, "wb") as f:
        f.write(bytes(range(256)) * (8 * 4096))  # 8 MiB
    arr = os.path.join(WORK, "a.b2nd")
    commands = {
        "create": ["create", arr, "--dtype", "<u4", "--shape", "2048,1024", "--chunks", "256,256", "--blocks",
                   "64,64", "--codec", "lz4", "--input", raw],
        "dump": ["dump", arr, "-o", os.path.join(WORK, "out.raw")],
        "convert": ["convert", arr, os.path.join(WORK, "b.b2nd"), "--codec", "zstd"],
        "verify": ["verify", arr],
    }
    for name, args in commands.items():
        rc, err = on_tty(args)
        if rc != 0:
            failures.append("%s on a terminal: exit %d: %r" % (name, rc, err))
            continue
        if ("\rtessera %s: " % name) not in err or "MB/s" not in err or "%)" not in err:
            failures.append("%s on a terminal: no progress line in %r" % (name, err[:300]))
        elif not err.endswith("\r\x1b[K"):
            failures.append("%s on a terminal: the progress line is not cleared at the end: %r" % (name, err[-60:]))
        rc, err = on_tty(args + ["--quiet"])
        if rc != 0 or err:
            failures.append("%s --quiet on a terminal: exit %d, stderr %r" % (name, rc, err[:200]))
        r = subprocess.run(EMU + [TOOL] + args, capture_output=True, env=ENV)
        if r.returncode != 0 or r.stderr:
            failures.append("%s with stderr a pipe: exit %d, stderr %r" % (name, r.returncode, r.stderr[:200]))
    # dump without --format: text when stdout is a terminal, raw bytes into a pipe.
    small = os.path.join(WORK, "small.b2nd")
    with open(os.path.join(WORK, "small.raw"), "wb") as f:
        f.write(bytes([1, 0, 2, 0, 255, 255]))
    subprocess.run(EMU + [TOOL, "create", small, "--dtype", "<i2", "--shape", "3", "--input",
                          os.path.join(WORK, "small.raw")], check=True)
    master, slave = pty.openpty()
    p = subprocess.Popen(EMU + [TOOL, "dump", small], stdin=subprocess.DEVNULL, stdout=slave,
                         stderr=subprocess.DEVNULL)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    if p.wait() != 0 or out.replace(b"\r\n", b"\n") != b"1 2 -1\n":
        failures.append("dump to a terminal: expected the text '1 2 -1', got %r" % out)
    r = subprocess.run(EMU + [TOOL, "dump", small], capture_output=True)
    if r.returncode != 0 or r.stdout != bytes([1, 0, 2, 0, 255, 255]):
        failures.append("dump into a pipe: expected the raw bytes, got %r" % r.stdout)
    # info --json against info's text.
    r = subprocess.run(EMU + [TOOL, "info", "--json", arr], capture_output=True)
    text = subprocess.run(EMU + [TOOL, "info", arr], capture_output=True).stdout.decode()
    try:
        j = json.loads(r.stdout)
        want = {"file": arr, "frame": "contiguous", "ndim": 2, "shape": [2048, 1024], "chunks": [256, 256],
                "blocks": [64, 64], "nchunks": 32, "blocks_per_chunk": 16, "dtype": "<u4", "typesize": 4,
                "codec": "lz4", "filters": ["shuffle"], "items": 2048 * 1024, "array_nbytes": 8 << 20}
        for k, v in want.items():
            if j.get(k) != v:
                failures.append("info --json: %s is %r, expected %r" % (k, j.get(k), v))
        for k in ["clevel", "cbytes", "nbytes", "split", "format_version"]:
            line = "\n%s: %s" % (k if k != "format_version" else "frame: %d bytes, format version" % j["frame_bytes"],
                                 j[k])
            if k == "format_version":
                line = "\nframe: %d bytes, format version %d\n" % (j["frame_bytes"], j[k])
            if line not in text:
                failures.append("info --json: %s = %r is not what info says:\n%s" % (k, j[k], text))
        if [m["name"] for m in j["metalayers"]] != ["b2nd"] or j["vlmetalayers"] != []:
            failures.append("info --json: metalayers %r %r" % (j["metalayers"], j["vlmetalayers"]))
        if abs(j["ratio"] - j["nbytes"] / j["cbytes"]) > 1e-3:
            failures.append("info --json: ratio %r" % j["ratio"])
    except (ValueError, KeyError, TypeError) as e:
        failures.append("info --json: %s\n%s" % (e, r.stdout[:500]))
    if failures:
        for f in failures:
            print("FAIL:", f)
        sys.exit(1)
    shutil.rmtree(WORK, ignore_errors=True)
    print("progress lines and info --json as expected")


main()
