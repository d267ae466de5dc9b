# SPDX-License-Identifier: BSD-3-Clause
"""Named figures: measured or chosen numbers that README.md and docs/ state, each with one home page.

check_docs.py finds every statement of each figure in every page (the patterns below, over each page's prose
with its line breaks joined; the group `v` is the figure) and fails when
  - the home page does not state it (a figure moved or reworded: update its entry here),
  - a page (the home included) states it with another value than the home's first statement,
  - the repository's own count or value differs (`truth`, for figures the sources decide).
Other pages should link to the home rather than repeat a figure; where they repeat it, this keeps them equal.
When you write a figure that a reader may meet in two places, add it here.
"""
import os
import re


def _count(path, pattern):
    """A truth: how many lines of PATH (relative to the repository) match PATTERN."""
    def truth(repo):
        with open(os.path.join(repo, path), encoding="utf-8") as f:
            return str(sum(1 for line in f if re.search(pattern, line)))
    return truth


def _size_budget(image, processor="default"):
    """A truth: the size budget examples/CMakeLists.txt gives IMAGE (tessera_size_budget), in the Cortex-M4's
    default list or in the list of `processor` ("riscv", "m0")."""
    def truth(repo):
        with open(os.path.join(repo, "examples/CMakeLists.txt"), encoding="utf-8") as f:
            text = f.read()
        lists = re.findall(r"set\(_size_budgets ([^)]*)\)", text)
        which = {"default": 0, "riscv": 1, "m0": 2}[processor]
        m = re.search(r"\b" + re.escape(image) + r"=(\d+)", lists[which]) if len(lists) > which else None
        return m.group(1) if m else "no budget for " + image
    return truth


class Figure:
    def __init__(self, name, home, patterns, truth=None):
        self.name = name
        self.home = home
        self.patterns = [re.compile(p) for p in patterns]
        self.truth = truth


NUM = r"[\d,]+"
RANGE = r"\d+(?:\.\d+)? - \d+(?:\.\d+)?"

FIGURES = [
    # TESSERA_MAX_DIMS: the largest ndim, on hosts and on bare metal by default.
    Figure("the largest ndim on hosts", "docs/firmware.md", [
        r"\b(?P<v>\d+) on hosts\b",
        r"\bup to (?P<v>\d+) dimensions on hosts\b",
        r"\bndim 0 to (?P<v>\d+)\b",
        r"`TESSERA_MAX_DIMS`[^|]*\| (?P<v>\d+) \(bare metal",
    ]),
    Figure("the largest ndim on bare metal by default", "docs/firmware.md", [
        r"\b(?P<v>\d+) by default on bare metal\b",
        r"\b(?P<v>\d+) on bare metal by default\b",
        r"\bon hosts, (?P<v>\d+) by default on bare metal\b",
        r"`TESSERA_MAX_DIMS`[^|]*\| \d+ \(bare metal: (?P<v>\d+)\)",
    ]),
    # Code on the Cortex-M4 (Tessera's share of the example images, default configuration).
    Figure("the reader's code (flash_reader, Cortex-M4)", "docs/firmware.md", [
        r"\| `flash_reader` \([^|]*\| \*\*(?P<v>" + NUM + r")\*\*",
        r"`flash_reader` (?P<v>" + NUM + r") ->",
        r"\| code, Tessera's share \| (?P<v>" + NUM + r") B\b",
        r"against `flash_reader`'s in the same build \((?P<v>" + NUM + r") B on the Cortex-M4",
        r"\*\*Cortex-M4\*\* \(`mps2-an386`\):[^*]*?\| Tessera's code \| (?P<v>" + NUM + r") B",
    ]),
    Figure("the logger's code (firmware_logger, Cortex-M4)", "docs/firmware.md", [
        r"\| `firmware_logger` \([^|]*\| \*\*(?P<v>" + NUM + r")\*\*",
        r"`firmware_logger` (?P<v>" + NUM + r") ->",
        r"\| code, Tessera's share \|[^|]*\| (?P<v>" + NUM + r") B\b",
        r"\*\*Cortex-M4\*\* \(`mps2-an386`\):[^*]*?\| Tessera's code \|[^|]*\| (?P<v>" + NUM + r") B \|",
    ]),
    Figure("the reader's code on RV32IMAC (flash_reader)", "docs/firmware.md", [
        r"\| reader image, Tessera's code \|[^|]*\| (?P<v>" + NUM + r") B \(",
        r"against `flash_reader`'s in the same build \([^)]*?, (?P<v>" + NUM + r") B on RV32IMAC",
    ]),
    # The size budgets (tessera_size_budget, examples/CMakeLists.txt).
    Figure("the logger's size budget (Cortex-M4)", "docs/firmware.md", [
        r"\| `firmware_logger` \([^|]*\) \[(?P<v>\d+)\]",
        r"\| logger image, Tessera's code \| (?P<v>" + NUM + r") B",
    ], truth=_size_budget("firmware_logger")),
    Figure("the reader's size budget (Cortex-M4)", "docs/firmware.md", [
        r"\| `flash_reader` \([^|]*\) \[(?P<v>\d+)\]",
        r"\| reader image, Tessera's code \| (?P<v>" + NUM + r") B",
    ], truth=_size_budget("flash_reader")),
    Figure("the LZ4 reader's size budget (Cortex-M4)", "docs/firmware.md", [
        r"\| `flash_reader_lz4` \[(?P<v>\d+)\]",
    ], truth=_size_budget("flash_reader_lz4")),
    Figure("the Zstd reader's size budget (Cortex-M4)", "docs/firmware.md", [
        r"\| `flash_reader_zstd` \[(?P<v>\d+)\]",
    ], truth=_size_budget("flash_reader_zstd")),
    Figure("the NDLZ reader's size budget (Cortex-M4)", "docs/firmware.md", [
        r"\| `flash_reader_ndlz` \[M4 (?P<v>\d+)",
    ], truth=_size_budget("flash_reader_ndlz")),
    Figure("the NDLZ reader's size budget (RV32IMAC)", "docs/firmware.md", [
        r"\| `flash_reader_ndlz` \[M4 \d+, RV32 (?P<v>\d+)\]",
    ], truth=_size_budget("flash_reader_ndlz", "riscv")),
    Figure("the NDCELL reader's size budget (Cortex-M4)", "docs/firmware.md", [
        r"\| `flash_reader_ndcell` \[(?P<v>\d+)\]",
    ], truth=_size_budget("flash_reader_ndcell")),
    Figure("the NDMEAN reader's size budget (Cortex-M4)", "docs/firmware.md", [
        r"\| `flash_reader_ndmean` \[(?P<v>\d+)\]",
    ], truth=_size_budget("flash_reader_ndmean")),
    Figure("the logger's size budget (RV32IMAC)", "docs/firmware.md", [
        r"\| logger image, Tessera's code \|[^|]*\|[^|]*\| (?P<v>" + NUM + r") B \|",
    ], truth=_size_budget("firmware_logger", "riscv")),
    Figure("the reader's size budget (RV32IMAC)", "docs/firmware.md", [
        r"\| reader image, Tessera's code \|[^|]*\|[^|]*\| (?P<v>" + NUM + r") B \|",
    ], truth=_size_budget("flash_reader", "riscv")),
    # RAM of the reader (flash_reader: an element and a slice through array_view).
    Figure("the reader's RAM with BloscLZ or LZ4", "docs/firmware.md", [
        r"slice in (?P<v>" + NUM + r") bytes with BloscLZ or LZ4",
        r"(?P<v>" + NUM + r") B for an element and a slice\b",
    ]),
    Figure("the reader's RAM with Zstd", "docs/firmware.md", [
        r"\band (?P<v>" + NUM + r") with Zstd\b",
        r"(?P<v>" + NUM + r") B with Zstd\b",
    ]),
    Figure("Zstd's decoder context", "docs/firmware.md", [
        r"decoder context,? (?P<v>" + NUM + r") bytes",
        r"decoder context (?P<v>" + NUM + r") B\b",
    ]),
    Figure("BloscLZ's match table at clevel 3 and above", "docs/firmware.md", [
        r"\b(?P<v>\d+ KiB) per encoder worker at clevel 3\b",
        r"match table of (?P<v>\d+ KiB) at clevel 3\b",
    ]),
    Figure("the reader's stack budget", "docs/firmware.md", [
        r"reader's entry points fit (?P<v>\d+ KiB)",
        r"\b(?P<v>\d+ KiB) for the reader's\b",
        r"\| stack \| (?P<v>\d+ KiB)",
    ]),
    Figure("the writers' stack budget", "docs/firmware.md", [
        r"and append fit (?P<v>\d+ KiB)",
        r"\b(?P<v>\d+ KiB) for the writers'",
        r"\| stack \|[^|]*\| (?P<v>\d+ KiB)",
    ]),
    Figure("sizeof(flash_frame) on the Cortex-M4", "docs/firmware.md", [
        r"\b(?P<v>" + NUM + r") bytes on the Cortex-M4, \d+ on x86-64",
        r"`flash_frame`: (?P<v>" + NUM + r") B\b",
    ]),
    # The Cortex-M0's BloscLZ reader on the micro:bit's 16 KiB (Cortex-M cores).
    Figure("the micro:bit reader's static RAM", "docs/firmware.md", [
        r"BloscLZ: (?P<v>" + NUM + r") B of static data",
        r"the image's (?P<v>" + NUM + r") B of static data",
    ]),
    Figure("the micro:bit reader's stack used", "docs/firmware.md", [
        r"B of static data \([^)]*\) and (?P<v>" + NUM + r") B of stack used",
        r"B of static data and (?P<v>" + NUM + r") B of stack used",
    ]),
    Figure("the Cortex-M0 reader's code (flash_reader)", "docs/firmware.md", [
        r"\| Tessera's code \| (?P<v>" + NUM + r") B \(BloscLZ; `flash_reader_lz4`",
    ]),
    # The tool (performance.md's measurements).
    Figure("dump's peak RSS on the 400^3 array", "docs/performance.md", [
        r"\| dump \(2 threads\) \|[^|]*\|[^|]*\| (?P<v>\d+) /",
        r"peak RSS[^.]{0,40}? (?P<v>\d+(?:\.\d+)?) MiB for dump",
    ]),
    Figure("create's peak RSS on the 400^3 array", "docs/performance.md", [
        r"\| create from the raw file \|[^|]*\|[^|]*\| (?P<v>\d+) /",
        r"peak RSS[^.]{0,60}? (?P<v>\d+(?:\.\d+)?) MiB for create",
    ]),
    Figure("dump's allocator peak on a 64 MiB array", "docs/performance.md", [
        r"(?P<v>" + RANGE + r") MiB for dump",
    ]),
    Figure("create's allocator peak on a 64 MiB array", "docs/performance.md", [
        r"(?P<v>" + RANGE + r") MiB for create",
    ]),
    Figure("the slab the tool streams through", "docs/tool.md", [
        r"slabs? of about (?P<v>\d+ MiB)",
        r"in about (?P<v>\d+ MiB) plus a few chunks",
    ]),
    Figure("verify of c-blosc2's array of 10^8 chunks", "docs/performance.md", [
        r"`tessera verify`[^.]{0,100}?10\^8 chunks[^.]{0,100}? (?:takes|in) (?P<v>\d+(?:\.\d+)?) s\b",
    ]),
    # The in-house LZ4 block decoder against liblz4.
    Figure("the in-house LZ4 decoder's speed on shuffled streams", "docs/performance.md", [
        r"(?P<v>" + RANGE + r") times liblz4's speed",
    ]),
    # Rewrites: the plane loop against c-blosc2.
    Figure("the plane loop's time against c-blosc2's", "docs/performance.md", [
        r"(?P<v>" + RANGE + r") of (?:its time|the time c-blosc2)",
    ]),
    Figure("the plane loop's file size against the array written once", "docs/performance.md", [
        r"(?:ends in a file of|ends at) (?P<v>\d+\.\d+) times\b",
    ]),
    # The hostile-file suite: the count is the test source's.
    Figure("the hostile-file cases", "docs/untrusted-input.md", [
        r"hostile-file suite.{0,200}?\b(?P<v>\d+) (?:cases|files)\b",
    ], truth=_count("tests/hostile/test_hostile_files.cpp", r'^\s*\{"[^"]+", k[A-Z]')),
]
