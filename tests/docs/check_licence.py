#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every source, header, script, CMake file and page names its licence in its first lines, and LICENSE exists.

Usage: check_licence.py REPO. Files are the repository's tracked files (git ls-files), or, outside a git
checkout, every file under REPO but build directories. Data files (test corpora, arrays, JSON) carry no
comment syntax and are listed with their origin in LICENSE instead.
"""
import os
import subprocess
import sys

TAG = "SPDX-License-Identifier: BSD-3-Clause"
DATA_DIRS = ("tests/fuzz/corpus/", "tests/hostile/", "tests/data/")
DATA_SUFFIXES = (".json", ".b2nd", ".b2frame", ".npy", ".bin", ".sha256")


def tracked(repo):
    try:
        out = subprocess.run(["git", "-C", repo, "ls-files"], capture_output=True, text=True, check=True).stdout
        return out.split()
    except (OSError, subprocess.CalledProcessError):
        files = []
        for root, dirs, names in os.walk(repo):
            dirs[:] = [d for d in dirs if d != ".git" and not d.startswith("build")]
            files += [os.path.relpath(os.path.join(root, n), repo) for n in names]
        return files


def is_data(path):
    name = path.rsplit("/", 1)[-1]
    return path.startswith(DATA_DIRS) or name.endswith(DATA_SUFFIXES) or ".b2frame" in name or name == "LICENSE"


def main():
    repo = sys.argv[1]
    if not os.path.isfile(os.path.join(repo, "LICENSE")):
        print("LICENSE: missing")
        return 1
    missing = []
    count = 0
    for path in tracked(repo):
        if is_data(path):
            continue
        full = os.path.join(repo, path)
        if not os.path.isfile(full):
            continue
        with open(full, encoding="utf-8", errors="replace") as f:
            head = [f.readline() for _ in range(3)]
        count += 1
        if not any(TAG in line for line in head):
            missing.append(path)
    for path in missing:
        print(f"{path}: no '{TAG}' line in its first three lines")
    print(f"licence: {count - len(missing)} of {count} files carry the SPDX line")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
