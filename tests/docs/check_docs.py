# SPDX-License-Identifier: BSD-3-Clause
"""Checks README.md and docs/*.md as a product:

- every fenced code block is an excerpt of a real file that CI builds or runs: the line before the block is
  `<!-- from: PATH -->` (PATH relative to the repository), and the block's lines (leading and trailing spaces
  ignored; a line `...` skips any number of the file's lines) appear in PATH in that order, consecutive unless a
  `...` lies between; a `text` block may instead be `<!-- from: tessera --help -->`, matched against the tool's
  help (TOOL, when given); a `text` block marked `<!-- diagram -->` is a drawing and one marked `<!-- output of: COMMAND -->` a
  program's printed figures, not code;
- an excerpt keeps the file's indentation (the whole block may be shifted left by the same amount), and in C, C++
  and shell each run of lines ends where a statement ends (C and C++: `;`, `{` or `}`; shell: no trailing backslash);
- every relative link to a file or directory resolves;
- no page speaks of development history or of this machine's paths (words such as "stop 22", "issue 15",
  "before this change", "/tmp/", "/work/"), nor as a journal ("it was 15776 ... then", "in one run of three",
  "met in four of five", "on this machine");
- every named figure (figures.py) is stated in its home page and the same wherever it is stated;
- docs/build.md's table of CMake options lists every option and cache variable of the build's CMake files, and
  nothing that is not one;
- docs/tool.md has a section for every command `tessera --help` lists and names every option it shows;
- README.md has at most 250 lines.

usage: check_docs.py REPO [TOOL]
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from figures import FIGURES  # noqa: E402

REPO = sys.argv[1]
TOOL = sys.argv[2] if len(sys.argv) > 2 else None
HISTORY = [r"\b(at|since|until|before|after|in|from|of) stop \d+", r"\bstop \d+('s|:)", r"\bissue \d+", r"\bissues? \d+", r"before this (change|work)", r"/tmp/", r"/work/",
           r"\bat stop\b", r"\buntil stop\b", r"\bsince stop\b", r"\bwas (tried|measured) in\b",
           # A journal instead of what holds today.
           r"\bit was \d", r"\bthen \d+\)", r"\bin one run of\b", r"\bmet in \w+ of \w+\b", r"\bthis machine\b",
           r"\bin every trial\b", r"\bstopped paying\b"]
failures = []


def pages():
    yield os.path.join(REPO, "README.md")
    docs = os.path.join(REPO, "docs")
    for name in sorted(os.listdir(docs)):
        if name.endswith(".md"):
            yield os.path.join(docs, name)


def norm(line):
    return line.strip()


def indent(line):
    return len(line) - len(line.lstrip(" "))


def excerpt_match(block, source):
    """Where the block's lines appear in source's lines in order ('...' skips): (groups, pairs) with the groups
    of block lines and, per matched line, (block line, source line); or (None, first line not found)."""
    src = [norm(l) for l in source]
    groups, cur = [], []
    for l in block:
        if norm(l) == "...":
            if cur:
                groups.append(cur)
            cur = []
        elif norm(l):
            cur.append(l)
    if cur:
        groups.append(cur)
    pos = 0
    pairs = []
    for g in groups:
        found = -1
        for i in range(pos, len(src) - len(g) + 1):
            # consecutive non-empty source lines
            j, k = i, 0
            matched = []
            while k < len(g) and j < len(src):
                if src[j] == "":
                    j += 1
                    continue
                if src[j] != norm(g[k]):
                    break
                matched.append((g[k], source[j]))
                j += 1
                k += 1
            if k == len(g):
                found = j
                pairs += matched
                break
        if found < 0:
            return None, norm(g[0])
        pos = found
    return groups, pairs


def excerpt_found(block, source):
    """Whether the block's lines appear in source's lines in order ('...' skips)."""
    groups, first = excerpt_match(block, source)
    return groups is not None, first


def excerpt_shape(lang, groups, pairs):
    """What is wrong with a found excerpt's shape, or None: its indentation is the file's (shifted by one amount
    for the whole block), and in C, C++ and shell each run of lines ends where a statement ends."""
    shifts = {indent(b) - indent(s) for b, s in pairs}
    if len(shifts) > 1:
        return "its indentation is not the file's (keep each line's indentation, shifted by one amount)"
    for g in groups:
        last = g[-1].rstrip()
        if lang in ("c", "cpp") and not last.endswith((";", "{", "}")) and not last.lstrip().startswith("//"):
            return "a run of lines ends inside a statement: '%s'" % last.strip()
        if lang in ("sh", "bash") and last.endswith("\\"):
            return "a run of lines ends inside a command: '%s'" % last.strip()
    return None


def help_text():
    if TOOL is None:
        return None
    return subprocess.run([TOOL, "--help"], capture_output=True, text=True).stdout.splitlines()


def prose(text):
    """The page's text with fenced blocks blanked and line breaks joined (offsets kept, for line numbers)."""
    out = []
    fenced = False
    for line in text.split("\n"):
        if re.match(r"^\s*```", line):
            fenced = not fenced
            out.append(" " * len(line))
        else:
            out.append(" " * len(line) if fenced else line)
    return " ".join(out)


def norm_figure(v):
    return re.sub(r"[\s,*]", "", v)


def check_figures():
    """Every named figure (figures.py): stated in its home, the same everywhere, and as the sources say."""
    texts = {}
    for page in pages():
        rel = os.path.relpath(page, REPO)
        with open(page, encoding="utf-8") as f:
            text = f.read()
        texts[rel] = (prose(text), text)
    for fig in FIGURES:
        found = []  # (page, line, value as written)
        for rel, (flat, text) in texts.items():
            for pat in fig.patterns:
                for m in pat.finditer(flat):
                    found.append((rel, text.count("\n", 0, m.start("v")) + 1, m.group("v")))
        home = sorted((f for f in found if f[0] == fig.home), key=lambda f: f[1])
        if not home:
            failures.append("figure '%s': not stated in its home %s (reworded or moved? tests/docs/figures.py)"
                            % (fig.name, fig.home))
            continue
        value = home[0][2]
        if fig.truth is not None:
            truth = fig.truth(REPO)
            if norm_figure(value) != truth:
                failures.append("%s:%d: figure '%s' is %s here, the repository says %s"
                                % (home[0][0], home[0][1], fig.name, value, truth))
        for rel, line, v in found:
            if norm_figure(v) != norm_figure(value):
                failures.append("%s:%d: figure '%s' is %s here but %s in its home %s:%d: state it once and link there"
                                % (rel, line, fig.name, v, value, home[0][0], home[0][1]))


OPTIONS_PAGE = "docs/build.md"


def build_options():
    """The options and cache variables the build's CMake files define (the consumer tests' own projects aside)."""
    names = set()
    for root, dirs, files in os.walk(REPO):
        rel = os.path.relpath(root, REPO)
        dirs[:] = [d for d in dirs if not d.startswith((".", "build")) and
                   os.path.join(rel, d) not in ("tests/consumer/package", "tests/consumer/subproject")]
        for name in files:
            if name != "CMakeLists.txt" and not name.endswith(".cmake"):
                continue
            with open(os.path.join(root, name), encoding="utf-8") as f:
                text = f.read()
            for m in re.finditer(r"\boption\(\s*(TESSERA_\w+)", text):
                names.add(m.group(1))
            for m in re.finditer(r"\bset\(\s*(TESSERA_\w+)\b([^)]*?)\bCACHE\s+(\w+)", text, re.S):
                if m.group(3) != "INTERNAL":
                    names.add(m.group(1))
    # Options named through a variable: the codec libraries.
    if "TESSERA_WITH_" in names:
        names.discard("TESSERA_WITH_")
        names |= {"TESSERA_WITH_LZ4", "TESSERA_WITH_ZSTD", "TESSERA_WITH_ZLIB", "TESSERA_WITH_ZFP"}
    return names


def check_options():
    path = os.path.join(REPO, OPTIONS_PAGE)
    if not os.path.isfile(path):
        failures.append("%s: missing (the table of CMake options)" % OPTIONS_PAGE)
        return
    with open(path, encoding="utf-8") as f:
        text = f.read()
    section = re.search(r"^## CMake options\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    if not section:
        failures.append("%s: no '## CMake options' section" % OPTIONS_PAGE)
        return
    rows = [l for l in section.group(1).split("\n") if l.startswith("| `")]
    listed = set()
    for row in rows:
        listed |= set(re.findall(r"`(TESSERA_\w+)`", row.split("|")[1]))
    defined = build_options()
    for name in sorted(defined - listed):
        failures.append("%s: the CMake option %s is not in the table of options" % (OPTIONS_PAGE, name))
    for name in sorted(listed - defined):
        failures.append("%s: the table of options lists %s, which no CMake file defines" % (OPTIONS_PAGE, name))


def check_tool_page():
    """docs/tool.md: a section per command of `tessera --help`, and every option the help shows."""
    help_lines = help_text()
    if not help_lines:
        return
    with open(os.path.join(REPO, "docs/tool.md"), encoding="utf-8") as f:
        page = f.read()
    sections = set(re.findall(r"^## (\w+)\s*$", page, re.M))
    for cmd in sorted(set(re.findall(r"^\s*tessera (\w+) ", "\n".join(help_lines), re.M)) - {"help"}):
        if cmd not in sections:
            failures.append("docs/tool.md: no section '## %s' for the command in tessera --help" % cmd)
    for opt in sorted(set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", "\n".join(help_lines)))):
        if opt in ("-", "--") or not re.search(r"`[^`]*%s\b[^`]*`" % re.escape(opt), page):
            if opt not in ("-", "--"):
                failures.append("docs/tool.md: the option %s of tessera --help is not named (in `code`)" % opt)


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
                        groups, pairs = excerpt_match(block, f.read().split("\n"))
                    if groups is None:
                        failures.append("%s: not found in %s (from its line '%s')" % (where, mm.group(1), pairs))
                    else:
                        shape = excerpt_shape(m.group(1), groups, pairs)
                        if shape:
                            failures.append("%s: excerpt of %s: %s" % (where, mm.group(1), shape))
            i = j + 1
    check_figures()
    check_options()
    check_tool_page()
    if failures:
        for f in failures:
            print("FAIL:", f)
        print("%d problem(s)" % len(failures))
        sys.exit(1)
    print("README.md and docs/: code blocks, links and wording as required")


main()
