#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Coverage tables from gcovr's JSON summaries, and the check against the committed baseline.

  coverage.py measure REPO BUILD_DIR SUMMARY.json    gcovr's JSON summary of the counters in BUILD_DIR (the
                                                     project's own sources; the options below)
  coverage.py table SUMMARY.json                     lines and branches per directory (src/, port/, tools/,
                                                     include/ and each of their components), as baseline rows
  coverage.py fuzzer NAME SUMMARY.json               one fuzzer's corpus alone: its decoder's files, and src/
  coverage.py check BASELINE ROWS...                 exit 1 when a figure of ROWS is more than 0.1 point below
                                                     the baseline's (or a baseline row is missing from ROWS)

A row is "KEY lines PCT (COVERED/TOTAL) branches PCT (COVERED/TOTAL)"; the baseline file holds such rows (and
# comments). Figures are percentages with two decimals.
"""
import json
import os
import subprocess
import sys

# The decoder each fuzzer exists for: its files are what its corpus must keep reaching.
FUZZER_TARGETS = {
    "chunk_decode": ["src/chunk/decoder.cpp", "src/chunk/header.cpp"],
    "chunk_decode_block": ["src/chunk/decoder.cpp", "src/chunk/header.cpp"],
    "b2nd_meta_decode": ["src/format/b2nd_meta.cpp"],
    "msgpack_reader": ["src/format/msgpack.cpp"],
    "blosclz_decompress": ["src/codecs/blosclz.cpp"],
    "frame_read": ["src/frame/frame_format.cpp", "src/frame/frame_index.cpp", "src/frame/frame_reader.cpp"],
    "array_view": ["src/array/array_view.cpp", "src/array/b2nd_geometry.cpp"],
    "lz4_block_decode": ["src/codecs/lz4_block.cpp"],
    "ndlz_decode": ["src/codecs/ndlz_decode.cpp"],
    "ndcell": ["src/filters/ndcell.cpp", "src/filters/nd_cells.hpp"],
    "ndmean": ["src/filters/ndmean.cpp", "src/filters/nd_cells.hpp"],
}
TOLERANCE = 0.1  # points a figure may fall below its baseline (gcov's counts of a few racy lines move)


# gcovr's options: branches the compiler adds for lines without code of their own (a closing brace) and exception
# edges (the core has none; the tool's and the ports' calls into the standard library would count branches no
# input can take) are left out.
GCOVR_OPTIONS = ["--exclude-unreachable-branches", "--exclude-throw-branches",
                 "-f", "src/", "-f", "port/", "-f", "tools/", "-f", "include/"]


def measure(repo, build_dir, out):
    jobs = os.environ.get("TESSERA_JOBS", "2")
    cmd = ["gcovr", "-r", repo, "-j", jobs] + GCOVR_OPTIONS + ["--json-summary", out, build_dir]
    return subprocess.run(cmd, stdout=subprocess.DEVNULL, check=False).returncode


def load(path):
    with open(path, encoding="utf-8") as f:
        return {e["filename"]: e for e in json.load(f)["files"]}


def totals(files, keep):
    t = [0, 0, 0, 0]
    for name, e in files.items():
        if keep(name):
            t[0] += e["line_covered"]
            t[1] += e["line_total"]
            t[2] += e["branch_covered"]
            t[3] += e["branch_total"]
    return t


def pct(covered, total):
    return 100.0 * covered / total if total else 100.0


def row(key, t):
    return (f"{key:<28} lines {pct(t[0], t[1]):6.2f} ({t[0]}/{t[1]})"
            f"  branches {pct(t[2], t[3]):6.2f} ({t[2]}/{t[3]})")


def table(files):
    tops = ["src", "port", "tools", "include"]
    rows = []
    for top in tops:
        names = [n for n in files if n.startswith(top + "/")]
        if not names:
            continue
        rows.append(row(top + "/", totals(files, lambda n, top=top: n.startswith(top + "/"))))
        subs = sorted({n.split("/")[1] for n in names if n.count("/") >= 2})
        for sub in subs:
            prefix = f"{top}/{sub}/"
            rows.append(row("  " + prefix, totals(files, lambda n, p=prefix: n.startswith(p))))
    return rows


def parse(line):
    """KEY lines PCT (C/T) branches PCT (C/T) -> (key, lines, branches, line total, branch total)."""
    words = line.split()
    if len(words) < 7 or words[1] != "lines" or words[4] != "branches":
        return None

    def total(word):
        try:
            return int(word.strip("()").split("/")[1])
        except (IndexError, ValueError):
            return 0
    return words[0], float(words[2]), float(words[5]), total(words[3]), total(words[6])


def allowed_fall(total):
    """Points a figure may fall: TOLERANCE, or one line or branch of its row when that is more (a count that a
    race between threads sets in some runs only moves a small directory's figure by a whole item). Plus 0.01:
    both figures are printed rounded to 0.01."""
    return max(TOLERANCE, 100.0 / total + 0.01) if total else TOLERANCE


def check(baseline_path, rows):
    current = {}
    for line in rows:
        p = parse(line)
        if p:
            current[p[0]] = p
    failures = []
    with open(baseline_path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            p = parse(line)
            if not p:
                failures.append(f"unreadable baseline row: {line.strip()}")
                continue
            key, lines, branches = p[:3]
            if key not in current:
                failures.append(f"{key}: in the baseline, not measured")
                continue
            _, now_lines, now_branches, line_total, branch_total = current[key]
            for what, base, now, total in (("lines", lines, now_lines, line_total),
                                           ("branches", branches, now_branches, branch_total)):
                if now < base - allowed_fall(total):
                    failures.append(f"{key}: {what} {now:.2f}% < baseline {base:.2f}%")
                elif now > base + TOLERANCE:
                    print(f"coverage: {key} {what} {now:.2f}% > baseline {base:.2f}% (raise the baseline)")
    for f in failures:
        print("coverage: FALLEN: " + f)
    return 1 if failures else 0


def main(argv):
    if len(argv) >= 4 and argv[0] == "measure":
        return measure(argv[1], argv[2], argv[3])
    if len(argv) >= 2 and argv[0] == "table":
        for r in table(load(argv[1])):
            print(r)
        return 0
    if len(argv) >= 3 and argv[0] == "fuzzer":
        name, files = argv[1], load(argv[2])
        targets = FUZZER_TARGETS.get(name, [])
        print(row(f"fuzz:{name}", totals(files, lambda n: n in targets)) + "  [" + " ".join(
            t.split("/", 1)[1] for t in targets) + "]")
        print(row(f"  fuzz:{name}:src/", totals(files, lambda n: n.startswith("src/"))))
        return 0
    if len(argv) >= 2 and argv[0] == "check":
        rows = []
        for path in argv[2:]:
            with open(path, encoding="utf-8") as f:
                rows += f.read().splitlines()
        return check(argv[1], [r.strip() for r in rows])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
