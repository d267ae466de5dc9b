#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Unit checks of ci/coverage.py's check against the baseline: a figure fails when it falls by more than 0.1 point
and by more than one line or branch of its row (a racy count moves a small directory by a whole item); a rise
passes. Exit status 0 when every check holds."""
import contextlib
import importlib.util
import io
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the sources' ci/
HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("coverage", os.path.join(HERE, "..", "..", "ci", "coverage.py"))
coverage = importlib.util.module_from_spec(spec)
spec.loader.exec_module(coverage)

BASELINE = """\
# a comment
src/                         lines  99.33 (10262/10331)  branches  93.03 (8067/8671)
src/base/                  lines 100.00 (173/173)  branches  98.18 (108/110)
"""

failures = 0


def row(key, lc, lt, bc, bt):
    return coverage.row(key, (lc, lt, bc, bt))


def expect(rows, status, why):
    global failures
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(BASELINE)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        got = coverage.check(f.name, rows)
    os.unlink(f.name)
    if got != status:
        failures += 1
        print(f"FAILED: {why}: status {got}, expected {status}\n{out.getvalue()}")


big = row("src/", 10262, 10331, 8067, 8671)
expect([big, row("  src/base/", 173, 173, 108, 110)], 0, "the baseline itself")
expect([big, row("  src/base/", 173, 173, 107, 110)], 0, "one branch less in a row of 110 (a racy count)")
expect([big, row("  src/base/", 173, 173, 106, 110)], 1, "two branches less in a row of 110")
expect([big, row("  src/base/", 172, 173, 108, 110)], 0, "one line less in a row of 173")
expect([big, row("  src/base/", 171, 173, 108, 110)], 1, "two lines less in a row of 173")
expect([row("src/", 10262, 10331, 8060, 8671), row("  src/base/", 173, 173, 108, 110)], 0,
       "seven branches less of 8671 (0.08 point)")
expect([row("src/", 10262, 10331, 8055, 8671), row("  src/base/", 173, 173, 108, 110)], 1,
       "twelve branches less of 8671 (0.14 point)")
expect([big, row("  src/base/", 173, 173, 110, 110)], 0, "a rise")
expect([big], 1, "a baseline row not measured")
sys.exit(1 if failures else 0)
