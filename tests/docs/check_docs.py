# SPDX-License-Identifier: BSD-3-Clause
"""Checks README.md and docs/*.md as a product:

- every fenced code block is an excerpt of a real file that CI builds or runs: the line before the block is
  `<!-- from: PATH -->` (PATH relative to the repository), and the block's lines (leading and trailing spaces
  ignored; a line `...` skips any number of the file's lines) appear in PATH in that order, consecutive unless a
  `...` lies between; a `text` block may instead be `<!-- from: tessera --help -->`, matched against the tool's
  help (TOOL, when given); a `text` block marked `<!-- diagram -->` is a drawing and one marked `<!-- output of: COMMAND -->` a
  program's printed figures, not code;
- every relative link to a file or directory resolves;
- no page speaks of development history or of this machine's paths (words such as "stop 22", "issue 15",
  "before this change", "/tmp/", "/work/");
- README.md has at most 250 lines.

usage: check_docs.py REPO [TOOL]
"""
import os
import re
import subprocess
import sys

REPO = sys.argv[1]
TOOL = sys.argv[2] if len(sys.argv) > 2 else None
HISTORY = [r"\b(at|since|until|before|after|in|from|of) stop \d+", r"\bstop \d+('s|:)", r"\bissue \d+", r"\bissues? \d+", r"before this (change|work)", r"/tmp/", r"/work/",
           r"\bat stop\b", r"\buntil stop\b", r"\bsince stop\b", r"\bwas (tried|measured) in\b"]
failures = []


def pages():
    yield os.path.join(REPO, "README.md")
    docs = os.path.join(REPO, "docs")
    for name in sorted(os.listdir(docs)):
        if name.endswith(".md"):
            yield os.path.join(docs, name)


def norm(line):
    return line.strip()


def excerpt_found(block, source):
    """Whether the block's lines appear in source's lines in order ('...' skips)."""
    src = [norm(l) for l in source]
    groups, cur = [], []
    for l in block:
        if norm(l) == "...":
            if cur:
                groups.append(cur)
            cur = []
        elif norm(l):
            cur.append(norm(l))
    if cur:
        groups.append(cur)
    pos = 0
    for g in groups:
        found = -1
        for i in range(pos, len(src) - len(g) + 1):
            # consecutive non-empty source lines
            j, k = i, 0
            while k < len(g) and j < len(src):
                if src[j] == "":
                    j += 1
                    continue
                if src[j] != g[k]:
                    break
                j += 1
                k += 1
            if k == len(g):
                found = j
                break
        if found < 0:
            return False, g[0]
        pos = found
    return True, None


def help_text():
    if TOOL is None:
        return None
    return subprocess.run([TOOL, "--help"], capture_output=True, text=True).stdout.splitlines()


def main():
    help_lines = None
    for page in pages():
        rel = os.path.relpath(page, REPO)
        with open(page, encoding="utf-8") as f:
            lines = f.read().split("\n")
        if rel == "README.md" and len(lines) > 251:
            failures.append("README.md has %d lines (at most 250)" % (len(lines) - 1))
        for n, line in enumerate(lines, 1):
            for h in HISTORY:
                if re.search(h, line, re.IGNORECASE):
                    failures.append("%s:%d: speaks of history or a machine path (%s): %s" % (rel, n, h, line.strip()))
        # Links.
        for n, line in enumerate(lines, 1):
            for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", line):
                if re.match(r"[a-z]+:", target):
                    continue
                path = os.path.normpath(os.path.join(os.path.dirname(page), target))
                if not os.path.exists(path):
                    failures.append("%s:%d: link to a missing file: %s" % (rel, n, target))
        # Code blocks.
        i = 0
        while i < len(lines):
            m = re.match(r"^\s*```(\w*)\s*$", lines[i])
            if not m:
                i += 1
                continue
            start = i
            j = i + 1
            while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
                j += 1
            block = lines[start + 1:j]
            marker = lines[start - 1].strip() if start > 0 else ""
            mm = re.match(r"^<!-- from: (.+?) -->$", marker)
            where = "%s:%d" % (rel, start + 1)
            if m.group(1) == "text" and (marker == "<!-- diagram -->" or marker.startswith("<!-- output of: ")):
                pass
            elif not mm:
                failures.append("%s: a code block without a '<!-- from: PATH -->' line before it" % where)
            elif mm.group(1) == "tessera --help":
                if help_lines is None:
                    help_lines = help_text()
                if help_lines is not None:
                    ok, first = excerpt_found(block, help_lines)
                    if not ok:
                        failures.append("%s: not in 'tessera --help': %s" % (where, first))
            else:
                path = os.path.join(REPO, mm.group(1))
                if not os.path.isfile(path):
                    failures.append("%s: the block's source %s does not exist" % (where, mm.group(1)))
                else:
                    with open(path, encoding="utf-8") as f:
                        ok, first = excerpt_found(block, f.read().split("\n"))
                    if not ok:
                        failures.append("%s: not found in %s (from its line '%s')" % (where, mm.group(1), first))
            i = j + 1
    if failures:
        for f in failures:
            print("FAIL:", f)
        print("%d problem(s)" % len(failures))
        sys.exit(1)
    print("README.md and docs/: code blocks, links and wording as required")


main()
