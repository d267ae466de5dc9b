#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Worst-case stack of each public entry point of a bare-metal image, from GCC's call graph.

Usage: ci/stack.py [options] IMAGE.elf... (or BUILD_DIR: every image of BUILD_DIR/examples with a map file)

Inputs, per image:
  - the .ci files GCC writes with -fcallgraph-info=su (TESSERA_STACK_USAGE, cmake/TesseraFirmware.cmake), found
    under the build directory (--ci-root, default: the build directory the image is in): every function's own
    frame and its direct and indirect calls;
  - the image itself, linked with --emit-relocs (tessera_firmware_image does when TESSERA_STACK_USAGE is ON):
    its symbols, and its relocations, which tell which functions have their address taken (the callbacks the
    image can reach through a pointer);
  - its disassembly (OBJDUMP), for the functions compiled without call-graph data (the C library, libgcc, the
    codec libraries): their frame is what the instructions push and subtract from the stack pointer, their
    calls are the direct branches to other functions, an indirect branch is an indirect call.

An entry point is a function of Tessera's public API in the image: a global function named tessera::... (not
detail::, anonymous namespaces or *_access helpers) or tessera_... (the C API). Its stack is the deepest path
through the call graph, each function counting its own frame.

Indirect calls are resolved by type. The source text at the call's location names the function pointer called
(allocate, read, task, decompress...); every declaration `R (*name)(params)` in include/, port/ and src/ (and
`using T = R (*)(params)` for a variable of type T) gives the candidate parameter lists, and the candidates are
the functions of the image whose address is taken and whose parameter list is one of them. A call whose pointer
cannot be named, and an indirect call in code without call-graph data, is bounded conservatively: by every
address-taken function of the image. The report says which calls were resolved how.

Recursion (a cycle in the graph) and a frame of dynamic size make the stack unbounded: the image fails.

Options:
  --budget PATTERN=BYTES  an entry point whose name (without namespace) matches the shell pattern may use at most
                          BYTES; repeatable. A pattern that matches no entry point of any image fails.
  --objdump, --nm         the target's tools (default: from the image's compiler prefix, arm-none-eabi-objdump)
  --source-root DIR       where the sources are (default: this repository)
  --quiet                 only the entry points with a budget and the failures
  --paths                 each entry point's deepest path (else the largest frames on it)
Exit status: 0, or 1 when a budget is exceeded or a stack is unbounded (or an input is missing).
"""
import argparse
import fnmatch
import glob
import os
import re
import struct
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNBOUNDED = float("inf")


# ---------------------------------------------------------------- the ELF image: symbols and relocations
class Elf:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF":
            raise ValueError(f"{path}: not an ELF file")
        self.is64 = d[4] == 2
        self.end = "<" if d[5] == 1 else ">"
        e = self.end
        self.machine = struct.unpack_from(e + "H", d, 18)[0]
        if self.is64:
            shoff, = struct.unpack_from(e + "Q", d, 40)
            shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", d, 58)
        else:
            shoff, = struct.unpack_from(e + "I", d, 32)
            shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", d, 46)
        self.sections = []
        for i in range(shnum):
            off = shoff + i * shentsize
            if self.is64:
                name, typ, flags, addr, offset, size, link, info, align, entsize = struct.unpack_from(
                    e + "IIQQQQIIQQ", d, off)
            else:
                name, typ, flags, addr, offset, size, link, info, align, entsize = struct.unpack_from(
                    e + "IIIIIIIIII", d, off)
            self.sections.append(dict(name=name, type=typ, flags=flags, addr=addr, offset=offset, size=size,
                                      link=link, info=info, entsize=entsize))
        strtab = self.sections[shstrndx]
        for s in self.sections:
            s["name"] = self._str(strtab, s["name"])
        self.symbols = []  # (name, value, size, type, bind, shndx)
        for s in self.sections:
            if s["type"] == 2:  # SHT_SYMTAB
                self.symbols = self._symbols(s)
        self.arm = self.machine == 40
        self.riscv = self.machine == 243

    def _str(self, sec, off):
        start = sec["offset"] + off
        return self.data[start:self.data.index(b"\0", start)].decode("utf-8", "replace")

    def _symbols(self, sec):
        out = []
        strtab = self.sections[sec["link"]]
        e = self.end
        for i in range(sec["size"] // sec["entsize"]):
            off = sec["offset"] + i * sec["entsize"]
            if self.is64:
                name, info, other, shndx, value, size = struct.unpack_from(e + "IBBHQQ", self.data, off)
            else:
                name, value, size, info, other, shndx = struct.unpack_from(e + "IIIBBH", self.data, off)
            out.append((self._str(strtab, name), value, size, info & 15, info >> 4, shndx))
        return out

    def function_at(self, address):
        """The name of the function whose code holds address (None outside every function)."""
        if not hasattr(self, "_ranges"):
            self._ranges = sorted(((v & ~1 if self.arm else v), size, name) for name, v, size, typ, bind, shndx
                                  in self.symbols if typ == 2 and shndx != 0 and size > 0)
            self._starts = [r[0] for r in self._ranges]
        import bisect
        i = bisect.bisect_right(self._starts, address) - 1
        if i >= 0 and self._ranges[i][0] <= address < self._ranges[i][0] + self._ranges[i][1]:
            return self._ranges[i][2]
        return None

    def functions(self):
        """address (Thumb bit cleared) -> [names]"""
        out = {}
        for name, value, size, typ, bind, shndx in self.symbols:
            if typ == 2 and shndx != 0:  # STT_FUNC, defined
                out.setdefault(value & ~1 if self.arm else value, []).append(name)
        return out

    def address_taken(self):
        """Addresses that a relocation other than a call or a branch stores (pointers to functions)."""
        if self.arm:
            calls = {0, 1, 10, 28, 29, 30, 40, 42, 51, 102, 103}  # NONE, PC24, THM_CALL, CALL, JUMP24...
        elif self.riscv:
            calls = {0, 16, 17, 18, 19, 24, 25, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 51, 52, 53,
                     54, 55}  # BRANCH, JAL, CALL(_PLT), PCREL_LO12, ADD/SUB*, ALIGN, RVC_*, RELAX, SET*
        else:
            raise ValueError("stack.py: only ARM and RISC-V images")
        taken = {}  # address -> addresses of the relocations (where the address is taken)
        e = self.end
        for sec in self.sections:
            if sec["type"] not in (4, 9):  # SHT_RELA, SHT_REL
                continue
            target = self.sections[sec["info"]]
            if not target["flags"] & 2:  # SHF_ALLOC: not the debug sections
                continue
            rela = sec["type"] == 4
            symtab = self.sections[sec["link"]]
            syms = self._symbols(symtab) if symtab["type"] == 2 else self.symbols
            for i in range(sec["size"] // sec["entsize"]):
                off = sec["offset"] + i * sec["entsize"]
                if self.is64:
                    r_offset, r_info = struct.unpack_from(e + "QQ", self.data, off)
                    typ, symi = r_info & 0xffffffff, r_info >> 32
                    addend = struct.unpack_from(e + "q", self.data, off + 16)[0] if rela else 0
                else:
                    r_offset, r_info = struct.unpack_from(e + "II", self.data, off)
                    typ, symi = r_info & 0xff, r_info >> 8
                    addend = struct.unpack_from(e + "i", self.data, off + 8)[0] if rela else 0
                if typ in calls:
                    continue
                if self.arm and typ == 2 and target["type"] == 1:  # R_ARM_ABS32: the linked word is the address
                    pos = target["offset"] + r_offset - target["addr"]
                    taken.setdefault(struct.unpack_from(e + "I", self.data, pos)[0] & ~1, set()).add(r_offset)
                elif symi < len(syms):
                    taken.setdefault((syms[symi][1] + addend) & (~1 if self.arm else ~0), set()).add(r_offset)
        return taken


# ---------------------------------------------------------------- GCC's call graph (.ci files)
class Function:
    __slots__ = ("key", "name", "label", "frame", "dynamic", "calls", "indirect", "source")

    def __init__(self, key, name, label, frame, dynamic, source):
        self.key, self.name, self.label, self.frame, self.dynamic = key, name, label, frame, dynamic
        self.source = source
        self.calls = []      # (key, source location of the call), keys resolved later
        self.indirect = []   # source locations of indirect calls


NODE = re.compile(r'^node: \{ title: "([^"]*)" label: "([^"]*)"')
EDGE = re.compile(r'^edge: \{ sourcename: "([^"]*)" targetname: "([^"]*)"(?: label: "([^"]*)")?')
FRAME = re.compile(r"^(\d+) bytes \(([a-z,]+)\)$")


def mangled(title):
    return title.rsplit(":", 1)[1] if ":" in title else title


def load_ci(files):
    funcs = {}  # title -> Function (definitions)
    for path in files:
        edges = []
        with open(path, errors="replace") as f:
            for line in f:
                m = NODE.match(line)
                if m:
                    title, label = m.groups()
                    parts = label.split("\\n")
                    fm = FRAME.match(parts[-1]) if len(parts) >= 3 else None
                    if fm and re.match(r"^(constprop|isra|part|cold|\d+)\(", parts[0]):
                        # GCC labels a clone by its suffix: name it after the function it clones.
                        base = mangled(title).split(".")[0]
                        named = subprocess.run(["c++filt", base], capture_output=True, text=True).stdout.strip()
                        named = named.replace("(anonymous namespace)", "{anonymous}")
                        parts[0] = re.sub(r"\(.*$", "", named) + parts[0][parts[0].index("("):]
                    if fm:
                        funcs[title] = Function(title, mangled(title), parts[0], int(fm.group(1)),
                                                "dynamic" in fm.group(2) and "bounded" not in fm.group(2),
                                                parts[1])
                    continue
                m = EDGE.match(line)
                if m:
                    edges.append(m.groups())
        for src, dst, loc in edges:
            fn = funcs.get(src)
            if fn is None:
                continue
            if dst == "__indirect_call":
                fn.indirect.append(loc or "")
            else:
                fn.calls.append((dst, loc or ""))
    return funcs


# ---------------------------------------------------------------- function pointer types in the sources
def norm_params(params):
    """'void* context, size_t i' or 'void*, tessera::size_t' -> 'void*,size_t' (names and namespaces dropped)"""
    out = []
    depth = 0
    cur = ""
    for ch in params:
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    res = []
    for p in out:
        p = re.sub(r"\b(tessera|std|detail|capi|\{anonymous\})::", "", p.strip())
        p = re.sub(r"\s*([*&])\s*", r"\1 ", p).strip()
        m = re.match(r"^(.*[\s*&])([A-Za-z_]\w*)$", p)
        if m and m.group(1).strip() and m.group(2) not in ("int", "char", "long", "short", "unsigned", "signed",
                                                              "const", "double", "float"):
            p = m.group(1)
        p = re.sub(r"\s+", "", p)
        if p == "void":
            continue
        res.append(p)
    return ",".join(res)


def norm_return(text):
    """'static tessera::status' -> 'status'; a template keeps its name only ('result<...>' -> 'result')."""
    text = re.sub(r"\b(static|inline|constexpr|virtual|extern|typedef|noexcept)\b", "", text)
    text = re.sub(r"\b(tessera|std|detail|capi|\{anonymous\})::", "", text)
    text = re.sub(r"<.*>", "", text)
    return re.sub(r"\s+", "", text)


def pointer_types(roots):
    """name -> set of (return type, parameter list), from `R (*name)(params)` and `using T = R (*)(params)` (then
    also for every variable or parameter declared `T name`)."""
    decl = re.compile(r"\(\s*\*\s*([A-Za-z_]\w*)?\s*\)\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)")
    texts = []
    for root in roots:
        for path in glob.glob(os.path.join(root, "**", "*"), recursive=True):
            if re.search(r"\.(h|hpp|c|cpp)$", path) and os.path.isfile(path):
                texts.append(re.sub(r"//[^\n]*|/\*.*?\*/", "", open(path, errors="replace").read(), flags=re.S))
    types = {}
    aliases = {}
    for text in texts:
        for m in decl.finditer(text):
            name, params = m.group(1), norm_params(m.group(2))
            head = text[max(0, m.start() - 160):m.start()]
            head = re.split(r"[;{}()]", head)[-1]
            am = re.search(r"using\s+([A-Za-z_]\w*)\s*=", head)
            ret = norm_return(head.split("=")[-1])
            if name is None and am:
                name = am.group(1)
            if name:
                types.setdefault(name, set()).add((ret, params))
                if am or "typedef" in head:
                    aliases[name] = (ret, params)
    for text in texts:  # variables and parameters of an alias type: `executor_task task`
        for alias_name, sig in aliases.items():
            for m in re.finditer(r"\b%s\s+([A-Za-z_]\w*)\s*(?:[A-Z_]+\s*)?[,;)=]" % re.escape(alias_name), text):
                types.setdefault(m.group(1), set()).add(sig)
    return types


def label_signature(label):
    """(return type, parameter list) of a .ci label 'R ns::f(A, B) const [with T = ...]'."""
    label = re.sub(r"\s*\[clone [^\]]*\]|\s*\[with .*\]$", "", label)
    end = label.rfind(")")
    if end < 0:
        return None
    depth = 0
    for i in range(end, -1, -1):
        if label[i] == ")":
            depth += 1
        elif label[i] == "(":
            depth -= 1
            if depth == 0:
                head = label[:i].rsplit(" ", 1)
                return norm_return(head[0] if len(head) == 2 else ""), norm_params(label[i + 1:end])
    return None


_source_cache = {}


def source_lines(path):
    if path not in _source_cache:
        try:
            _source_cache[path] = open(path, errors="replace").read().split("\n")
        except OSError:
            _source_cache[path] = []
    return _source_cache[path]


def signature(fn):
    """(return type, parameter list) of a function: from its C++ label, or for C (a label without the
    parameters) from its definition in the source."""
    if "(" in fn.label:
        return label_signature(fn.label)
    m = re.match(r"^(.*):(\d+):(\d+)$", fn.source)
    if not m:
        return None
    lines = source_lines(m.group(1))
    line = int(m.group(2))
    text = "\n".join(lines[line - 1:line + 4])
    dm = re.match(r"^\s*(.*?)\b%s\s*\(([^()]*)\)" % re.escape(fn.label), text, re.S)
    return (norm_return(dm.group(1)), norm_params(dm.group(2))) if dm else None


def _args(text, open_at):
    """The number of arguments of the call whose '(' is at open_at (None if it does not close)."""
    depth, commas, empty = 0, 0, True
    for i in range(open_at, len(text)):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return 0 if empty else commas + 1
        elif ch == "," and depth == 1:
            commas += 1
        elif depth >= 1 and not ch.isspace():
            empty = False
    return None


def calls_at(loc):
    """The calls at a call's source location 'file:line:col', as [(identifier, number of arguments)], the
    most likely first: GCC points at the call's '(' or ')', or at the start of a macro around it."""
    m = re.match(r"^(.*):(\d+):(\d+)$", loc or "")
    if not m:
        return []
    path, line, col = m.group(1), int(m.group(2)), int(m.group(3))
    lines = source_lines(path)
    if line > len(lines):
        return []
    first = max(0, line - 6)
    text = "\n".join(lines[first:line + 4])
    pos = sum(len(x) + 1 for x in lines[first:line - 1]) + min(max(col - 1, 0), len(lines[line - 1]))
    out = []
    i = pos
    if i < len(text) and text[i] == ")":  # back to its '('
        depth = 0
        while i >= 0:
            if text[i] == ")":
                depth += 1
            elif text[i] == "(":
                depth -= 1
                if depth == 0:
                    break
            i -= 1
    if 0 <= i < len(text) and text[i] == "(":
        bm = re.search(r"([A-Za-z_]\w*)\s*$", text[:i])
        if bm:
            out.append((bm.group(1), _args(text, i)))
    # Or the calls from the location to the end of its statement (a macro's arguments).
    # Then the rest of the statement, from its start.
    stmt_end = text.find(";", pos)
    stmt_end = len(text) if stmt_end < 0 else stmt_end
    stmt_start = max(text.rfind(c, 0, pos) for c in ";{}") + 1
    for begin in (pos, stmt_start):
        for cm in re.finditer(r"([A-Za-z_]\w*)\s*\(", text[begin:stmt_end]):
            out.append((cm.group(1), _args(text, begin + cm.end() - 1)))
    return out


# ---------------------------------------------------------------- function pointers passed as arguments
_blank_cache = {}


def _remembered(f):
    """f with its results kept per arguments (the graph's walk asks the same questions many times)."""
    seen = {}

    def g(*args):
        if args not in seen:
            seen[args] = f(*args)
        return seen[args]
    g.__doc__ = f.__doc__
    return g


def code_only(path):
    """The file's text with comments and string and character literals blanked (same offsets), and its line
    starts."""
    if path not in _blank_cache:
        text = "\n".join(source_lines(path))
        out = re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                     lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
        starts = [0]
        for line in text.split("\n"):
            starts.append(starts[-1] + len(line) + 1)
        _blank_cache[path] = (out, starts)
    return _blank_cache[path]


def _closing(text, i, pair="()"):
    """The index of the bracket closing the one at text[i] (None if it does not close)."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == pair[0]:
            depth += 1
        elif text[j] == pair[1]:
            depth -= 1
            if depth == 0:
                return j
    return None


def split_args(text):
    """'a, f(b, c), d' -> ['a', 'f(b, c)', 'd'] (top-level commas)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


_definition_cache = {}


def definition(source):
    """(parameter names, body start, body end, path) of the function defined at 'file:line:col' (a name is None
    when the parameter has none), or None when the text there is not a definition this parser follows."""
    if source in _definition_cache:
        return _definition_cache[source]
    result = None
    m = re.match(r"^(.*):(\d+):(\d+)$", source or "")
    if m:
        path, line, col = m.group(1), int(m.group(2)), int(m.group(3))
        text, starts = code_only(path)
        if line < len(starts):
            pos = starts[line - 1] + col - 1
            open_at = text.find("(", pos)
            close = _closing(text, open_at) if open_at >= 0 else None
            if close is not None:
                body = re.match(r"[^;{]*\{", text[close + 1:])  # noexcept, const, a trailing return type
                if body:
                    start = close + body.end() - 1
                    end = _closing(text, start, "{}")
                    if end is not None:
                        names = []
                        for p in split_args(text[open_at + 1:close]):
                            p = p.split("=")[0].strip()
                            nm = re.search(r"[\s*&]([A-Za-z_]\w*)$", p)
                            names.append(nm.group(1) if nm and p != "void" else None)
                        if names == [None] and not text[open_at + 1:close].strip("void \n"):
                            names = []
                        result = (tuple(names), start, end, path)
    _definition_cache[source] = result
    return result


def _declares(text, name):
    """Whether text declares a variable or parameter `name` (a type or declarator before it, then = ; , ) { [ :)."""
    for m in re.finditer(r"([\w>*&\]]+)\s*[*&]*\s*\b%s\s*(=|;|,|\)|\{|\[|:(?!:))" % re.escape(name), text):
        if m.group(1) not in ("return", "case", "goto", "throw", "delete"):
            return True
    return False


@_remembered
def untouched(defn, name):
    """Whether the function's body leaves its parameter `name` as the caller passed it: never assigned, declared
    again (a shadowing variable, a loop's or a lambda's), incremented or having its address taken (then a bound
    value is the value at every call in it)."""
    text, _ = code_only(defn[3])
    body = text[defn[1]:defn[2] + 1]
    n = re.escape(name)
    return not (re.search(r"(?<![\w.>:])%s\s*(=(?!=)|\+\+|--)|(?<![&\w])&\s*%s\b|(\+\+|--)\s*%s\b" % (n, n, n), body)
                or _declares(body, name))


@_remembered
def call_arguments(loc, callee):
    """The argument texts of the call of `callee` (an identifier: a function's or a pointer's name) at GCC's
    location 'file:line:col' of a call, or None when its statement has no such call or several that differ."""
    m = re.match(r"^(.*):(\d+):(\d+)$", loc or "")
    if not m:
        return None
    path, line, col = m.group(1), int(m.group(2)), int(m.group(3))
    text, starts = code_only(path)
    if line >= len(starts):
        return None
    pos = starts[line - 1] + col - 1
    begin = max(text.rfind(c, 0, pos) for c in ";{}") + 1
    end = text.find(";", pos)
    end = len(text) if end < 0 else end
    found = set()
    for cm in re.finditer(r"(?<![\w])%s\s*\(" % re.escape(callee), text[begin:end]):
        open_at = begin + cm.end() - 1
        close = _closing(text, open_at)
        if close is None:
            return None
        found.add(tuple(split_args(text[open_at + 1:close])))
    return list(found.pop()) if len(found) == 1 else None


@_remembered
def in_body(defn, loc):
    """Whether the call at loc is in the definition's own body (not in code inlined into it from elsewhere)."""
    m = re.match(r"^(.*):(\d+):(\d+)$", loc or "")
    if not m or defn is None or os.path.realpath(m.group(1)) != os.path.realpath(defn[3]):
        return False
    _, starts = code_only(defn[3])
    line = int(m.group(2))
    return line < len(starts) and defn[1] <= starts[line - 1] + int(m.group(3)) - 1 <= defn[2]


@_remembered
def declares_variable(path, name):
    """Whether the file declares a variable or parameter `name` anywhere (then the name at a call may be it)."""
    return _declares(code_only(path)[0], name)


# ---------------------------------------------------------------- disassembly of the code without .ci data
class Disassembly:
    def __init__(self, objdump, image, arm):
        self.arm = arm
        out = subprocess.run([objdump, "-d", "--no-show-raw-insn", image], capture_output=True, text=True,
                             check=True).stdout
        self.funcs = {}  # first symbol name -> [(mnemonic, operands)]
        cur = None
        for line in out.split("\n"):
            m = re.match(r"^([0-9a-f]+) <([^>]+)>:$", line)
            if m:
                cur = self.funcs.setdefault(m.group(2), [])
                continue
            m = re.match(r"^\s+[0-9a-f]+:\s+(\S+)\s*(.*)$", line)
            if m and cur is not None:
                cur.append((m.group(1), m.group(2)))

    def analyse(self, name):
        """(frame bytes or None if dynamic, direct callees, indirect call count)"""
        insns = self.funcs.get(name)
        if insns is None:
            return None
        frame, calls, indirect, dynamic = 0, [], 0, False
        for op, args in insns:
            if self.arm:
                if op.startswith(("push", "stmdb")) and ("sp!" in args or op.startswith("push")):
                    regs = re.search(r"\{([^}]*)\}", args)
                    frame += 4 * len(regs.group(1).split(",")) if regs else 0
                elif op.startswith("vpush"):
                    for a, b in re.findall(r"[ds](\d+)(?:-[ds](\d+))?", args):
                        n = int(b) - int(a) + 1 if b else 1
                        frame += n * (8 if "d" in args else 4)
                elif op.startswith(("sub", "subw")) and re.match(r"sp,\s*(sp,\s*)?#", args):
                    frame += int(re.search(r"#(\d+)", args).group(1))
                elif op.startswith("sub") and args.startswith("sp,"):
                    dynamic = True
                elif op.startswith("str") and re.search(r"\[sp, #-(\d+)\]!", args):
                    frame += int(re.search(r"\[sp, #-(\d+)\]!", args).group(1))
                elif op.startswith("bl") and not op.startswith("blx"):
                    t = re.search(r"<([^>+]+)>", args)
                    if t:
                        calls.append(t.group(1))
                elif op.startswith(("b.w", "b")) and op in ("b", "b.w", "b.n") and re.search(r"<([^>+]+)>", args):
                    calls.append(re.search(r"<([^>+]+)>", args).group(1))  # a tail call
                elif op.startswith("blx") or (op == "bx" and args.strip() != "lr"):
                    indirect += 1
            else:
                # objdump writes a compressed addi of sp as "add sp,sp,-16" (RV64 images show it): an immediate.
                if op in ("addi", "c.addi16sp", "c.addi", "add", "c.add") and re.match(r"sp,\s*sp,\s*-\d+$", args):
                    frame += int(re.search(r"-(\d+)", args).group(1))
                elif op in ("add", "c.add") and re.match(r"sp,\s*sp,\s*\d+$", args):
                    pass  # the epilogue's "add sp,sp,16"
                elif op in ("add", "sub", "c.add", "c.sub") and args.startswith("sp,"):
                    dynamic = True
                elif op in ("jal", "call", "tail", "j", "c.j", "c.jal") and re.search(r"<([^>+]+)>", args):
                    calls.append(re.search(r"<([^>+]+)>", args).group(1))
                elif op in ("jalr", "c.jalr") and not re.match(r"^(zero|x0)", args):
                    indirect += 1
        return (None if dynamic else frame), calls, indirect


# ---------------------------------------------------------------- the analysis of one image
def short(name):
    """'tessera::status tessera::array_view_open(array_view&, ...)' -> 'array_view_open'"""
    n = re.sub(r"\s*\[clone [^\]]*\]|\s*\[with .*\]$", "", name)
    depth, i = 0, len(n) - 1
    while i >= 0:  # drop the parameter list
        if n[i] == ")":
            depth += 1
        elif n[i] == "(":
            depth -= 1
            if depth == 0:
                n = n[:i]
                break
        i -= 1
    n = n.split(" ")[-1]
    n = re.sub(r"<[^<>]*>", "", n)
    parts = n.split("::")
    return "::".join(parts[-2:]) if len(parts) > 2 and parts[-2] not in ("tessera", "detail", "{anonymous}") \
        else parts[-1]


def is_public(fn):
    n = fn.label
    if ":" in fn.key:  # a file-local (static, inline or anonymous) function
        return False
    if re.search(r"\btessera_\w+\(", n) and "::" not in n.split("(")[0]:
        return True
    q = re.search(r"(\S+)\(", n)
    q = q.group(1) if q else ""
    return q.startswith("tessera::") and not re.search(r"detail::|\{anonymous\}|_access::|capi::", q)


def analyse_image(image, funcs_by_title, types, objdump, cxxfilt):
    elf = Elf(image)
    addr_names = elf.functions()
    name_addr = {n: a for a, ns in addr_names.items() for n in ns}
    in_image = set(name_addr)
    disasm = Disassembly(objdump, image, elf.arm)
    first_name = {a: None for a in addr_names}
    for a in addr_names:  # objdump labels a function with one of its names: find which
        for n in addr_names[a]:
            if n in disasm.funcs:
                first_name[a] = n
                break

    # Definitions by mangled name: global ones, and file-local ones (one of them: same name, same code).
    defs = {}
    for title, fn in funcs_by_title.items():
        if fn.name in in_image or fn.name.split(".")[0] in in_image:
            if ":" not in title or fn.name not in defs:
                defs.setdefault(fn.name, fn) if ":" in title else defs.__setitem__(fn.name, fn)

    # Address-taken functions of the image, with their parameter lists.
    taken = []
    takers = {}  # candidate name -> names of the functions that take its address
    for a, places in sorted(elf.address_taken().items()):
        if a in addr_names:
            names = addr_names[a]
            fn = next((defs[n] for n in names if n in defs), None)
            taken.append((names[0], fn, signature(fn) if fn else None))
            takers[names[0]] = {elf.function_at(p) for p in places} - {None}
    demangled = {}

    def pretty(n):
        if n not in demangled:
            demangled[n] = subprocess.run([cxxfilt, n], capture_output=True, text=True).stdout.strip() or n
        return demangled[n]

    notes = {}  # how each indirect call was resolved: text -> count

    known = set().union(*types.values()) if types else set()
    # Functions of this build (with call-graph data) whose address is taken but whose type no pointer declared
    # in the sources has: a candidate of every indirect call. Those without call-graph data (the C library's
    # tables, the vector table) are not Tessera's callbacks: only the conservative bound counts them.
    unclassified = [t for t in taken if t[1] is not None and t[2] not in known]

    def nparams(sig):
        return len(sig[1].split(",")) if sig[1] else 0

    pointer_at = {}  # source location of an indirect call -> the pointer's name there

    def candidates(loc):
        where = re.sub(r"^.*/(src|port|include|examples)/", r"\1/", loc)
        for n, nargs in calls_at(loc):
            sigs = {sig for sig in types.get(n, ()) if nargs is None or nparams(sig) == nargs}
            if sigs:
                cands = [t for t in taken if t[2] in sigs] + unclassified
                targets = ", ".join(sorted({short(t[1].label) if t[1] else t[0] for t in cands})) or "none"
                notes[f"{n} ({where}) -> {targets}"] = 1
                pointer_at[loc] = n
                return [t[0] for t in cands]
        notes[f"unnamed pointer at {where}: every address-taken function (conservative)"] = 1
        return [t[0] for t in taken]

    # Node: (key) -> (frame, [callee keys], description)
    graph = {}

    def node(key):
        if key in graph:
            return graph[key]
        fn = funcs_by_title.get(key) or defs.get(mangled(key))
        if fn is not None:
            callees = []
            for c, loc in fn.calls:
                callees.append((c if c in funcs_by_title else mangled(c), loc))
            for loc in fn.indirect:
                callees += [("*" + loc, c) for c in candidates(loc)]
            frame = None if fn.dynamic else fn.frame
            graph[key] = (frame, callees, short(fn.label))
            return graph[key]
        name = mangled(key)
        if name.startswith("__builtin_"):
            name = name[len("__builtin_"):]
        a = name_addr.get(name)
        dn = first_name.get(a) if a is not None else None
        info = disasm.analyse(dn) if dn else None
        if info is None:
            graph[key] = (0, [], name + " (not in the image: inlined or a builtin)")
            return graph[key]
        frame, calls, indirect = info
        callees = [(c, "") for c in calls if c != dn]
        if indirect:  # a library calls what the program hands it (a custom allocator) or its own tables
            notes["indirect call in code without call-graph data (%s): every address-taken function of "
                  "this build (conservative)" % pretty(name)] = 1
            callees += [("*", t[0]) for t in taken if t[1] is not None]
        graph[key] = (frame, callees, pretty(name) + " (from the disassembly)")
        return graph[key]

    # Function pointers bound by the call: a pointer parameter of a function gets, at a call, the functions its
    # argument names there (the call `executor_run(exec, n, pack_task, &j)` binds executor_run's `task` to
    # pack_task), or the binding of the caller's own parameter it passes on (`e.run(e.context, n, task, ctx)`).
    # An indirect call through a bound parameter the function leaves untouched calls only those functions.
    # Anything else (a pointer read from memory, a variable, a call this parser does not follow) binds nothing:
    # the resolution by type (narrowed to the callbacks whose address a function on the path takes) applies.
    named_cache = {}

    def named_functions(arg, path):
        """The address-taken functions an argument's text names (a function, maybe qualified, maybe with &)."""
        arg = re.sub(r"^&\s*", "", arg.strip())
        arg = re.sub(r"^(::)?(tessera::)?", "", arg)
        if not re.match(r"^[A-Za-z_]\w*(::[A-Za-z_]\w*)*$", arg):
            return None
        if (arg, path) not in named_cache:
            parts = arg.split("::")
            found = set()
            for t in taken:
                if t[1] is None:
                    continue
                q = re.sub(r"\s*\[clone [^\]]*\]|\s*\[with .*\]$", "", t[1].label)
                q = re.sub(r"\(.*$", "", q).split(" ")[-1].split("::")
                if q[-len(parts):] == parts:
                    found.add(t[0])
            if not found or (len(parts) == 1 and declares_variable(path, arg)):
                found = None
            named_cache[(arg, path)] = frozenset(found) if found else None
        return named_cache[(arg, path)]

    def definition_of(key):
        fn = funcs_by_title.get(key) or defs.get(mangled(key))
        return definition(fn.source) if fn is not None else None

    bound_calls = {}

    def bind(caller_key, caller_binding, loc, callee, callee_key):
        """The binding of callee_key's pointer parameters at the call of `callee` (its name at loc)."""
        key = (caller_key, caller_binding, loc, callee, callee_key)
        if key not in bound_calls:
            bound_calls[key] = bind_once(caller_key, caller_binding, loc, callee, callee_key)
        return bound_calls[key]

    def bind_once(caller_key, caller_binding, loc, callee, callee_key):
        target = definition_of(callee_key)
        if target is None or not target[0] or not loc:
            return ()
        args = call_arguments(loc, callee)
        if args is None or len(args) != len(target[0]):
            return ()
        path = re.match(r"^(.*):\d+:\d+$", loc).group(1)
        own = definition_of(caller_key)
        out = []
        for name, arg in zip(target[0], args):
            if name is None or not untouched(target, name):
                continue
            bound = None
            plain = arg.strip()
            if plain in dict(caller_binding) and in_body(own, loc):
                bound = dict(caller_binding)[plain]
            elif re.match(r"^[A-Za-z_]", plain) and not (own and plain in own[0] and in_body(own, loc)):
                bound = named_functions(plain, path)
                # A name that several functions end with (`task` in a class): the caller's code takes the
                # address of the one it passes.
                mine = frozenset(c for c in bound or () if mangled(caller_key) in takers.get(c, set()))
                bound = mine or bound
            if bound:
                out.append((name, bound))
        return tuple(sorted(out))

    def callee_name(key):
        fn = funcs_by_title.get(key) or defs.get(mangled(key))
        if fn is None:
            return None
        n = re.sub(r"\s*\[clone [^\]]*\]|\s*\[with .*\]$", "", fn.label)
        n = re.sub(r"\(.*$", "", n).split(" ")[-1].split("::")[-1]
        return n if re.match(r"^[A-Za-z_]\w*$", n) else None

    memo = {}  # (key, binding) -> [(result, the answers it depended on)]
    asked_below = [{}]  # the answers the last depth() call depended on
    on_stack = {}
    on_path_names = set()
    via_now = [False]
    assumed = {}

    def depth(key, stack, via, binding=()):
        """(bytes, path, problem, contextual) of the deepest path from key. stack: the keys on the path, via: for
        each, whether it was reached through a pointer. binding: the functions key's pointer parameters were
        bound to by the call ((name, functions)...). contextual: the result depends on the path (a call through
        a pointer back into a caller on the path was not followed), so it is not remembered. A result that
        depends on which functions are on the path above (the narrowing to callbacks whose address a function
        on the path takes) is remembered with the answers it depended on, and used again where they are the
        same."""
        for result, asked in memo.get((key, binding), ()):
            if all((n in on_path_names) == v for n, v in asked.items()):
                asked_below[0] = asked
                return result
        if key in on_stack:
            at = len(stack) - 1 - stack[::-1].index(key)
            if not any(via[at + 1:]) and not via_now[0]:  # recursion through direct calls only
                cycle = stack[at:] + [key]
                asked_below[0] = {}
                return UNBOUNDED, [node(k)[2] for k in cycle], "recursion", False
            # Through a pointer: entered again (another callback of that type may run there); the pointers'
            # candidates already on the path are left out below, which ends it.
        frame, callees, desc = node(key)
        if frame is None:
            memo[(key, binding)] = [((UNBOUNDED, [desc], "dynamic frame", False), {})]
            asked_below[0] = {}
            return memo[(key, binding)][0][0]
        best, best_path, problem, contextual = 0, [], None, False
        stack.append(key)
        on_path_names.add(mangled(key))
        via.append(via_now[0])
        on_stack[key] = on_stack.get(key, 0) + 1
        bound = dict(binding)
        asked_here = {}  # function name -> whether it is on the path: the answers this result depends on
        # A pointer parameter bound by the call: its call runs only the functions the call named.
        # Else a callback passed down the calls (an executor's task): when functions on the path take the
        # address of some candidates of a pointer, the pointer is one of those.
        pointer_sets = {}
        for c in callees:
            if c[0].startswith("*"):
                pointer_sets.setdefault(c[0], []).append(c[1])
        narrowed = set()  # (group, candidate) left out
        for group, cands in pointer_sets.items():
            name = pointer_at.get(group[1:])
            if name in bound:
                narrowed.update((group, c) for c in cands if c not in bound[name])
                cands = [c for c in cands if c in bound[name]]
            for c in cands:
                for t in takers.get(mangled(c), ()):
                    asked_here[t] = t in on_path_names
            passed = [c for c in cands if takers.get(mangled(c), set()) & on_path_names]
            if passed:
                narrowed.update((group, c) for c in cands if c not in passed)
        calls = []
        for c in callees:
            if c in narrowed:
                continue
            if c[0].startswith("*"):
                name = pointer_at.get(c[0][1:])
                calls.append((True, c[1], bind(key, binding, c[0][1:], name, c[1]) if name else ()))
            else:
                calls.append((False, c[0], bind(key, binding, c[1], callee_name(c[0]), c[0])
                              if callee_name(c[0]) else ()))
        for through_pointer, c, child_binding in dict.fromkeys(calls):
            if through_pointer and c in on_stack:
                # A cycle that only the pointer's type makes (a callback of the type that calls through the
                # same type, as an adapter storage does): not followed, and said.
                assumed[f"{desc} -> {node(c)[2]}"] = 1
                contextual = True
                continue
            via_now[0] = through_pointer
            d, p, pr, ctx = depth(c, stack, via, child_binding)
            asked_here.update(asked_below[0])
            contextual = contextual or ctx
            if d > best or (pr and not problem):
                best, best_path = d, p
                problem = pr or problem
        stack.pop()
        if mangled(key) not in (mangled(k) for k in stack):
            on_path_names.discard(mangled(key))
        via.pop()
        on_stack[key] -= 1
        if not on_stack[key]:
            del on_stack[key]
        result = (frame + best, [f"{desc} {frame}"] + best_path, problem, contextual)
        asked_here.pop(mangled(key), None)  # on the path wherever key's result is used
        if not contextual and key not in on_stack:
            memo.setdefault((key, binding), []).append((result, dict(asked_here)))
        asked_below[0] = asked_here
        return result

    entries = []
    for name, fn in sorted(defs.items(), key=lambda kv: short(kv[1].label)):
        if is_public(fn) and name in in_image:
            via_now[0] = False
            d, path, problem, _ = depth(fn.key, [], [])
            entries.append((short(fn.label), d, path, problem))
    return entries, notes, taken, unclassified, assumed


def ci_files_of(image, root):
    """The .ci files of the objects the image links (from its map file IMAGE.map: an archive member
    <dir>/lib<name>.a(<obj>) is <dir>/CMakeFiles/<name>.dir/.../<obj without .obj>.ci, an object <path>.obj is
    <path>.ci): other programs of the build may compile the same sources with other flags. Without a map, every
    .ci file under root."""
    every = glob.glob(os.path.join(root, "**", "*.ci"), recursive=True)
    if not os.path.exists(image + ".map"):
        return every
    text = open(image + ".map", errors="replace").read()
    wanted = set()
    every_real = {os.path.realpath(f): f for f in every}

    def at_root(path):  # the link runs in the build directory: relative paths are from there
        return os.path.realpath(path if os.path.isabs(path) else os.path.join(root, path))

    for m in set(re.findall(r"(\S+\.a)\(([^)]+)\)", text)):
        archive, member = m
        name = re.sub(r"^lib|\.a$", "", os.path.basename(archive))
        stem = re.sub(r"\.(obj|o)$", "", member)
        base = os.path.join(os.path.dirname(at_root(archive)), "CMakeFiles", name + ".dir") + os.sep
        wanted.update(f for f in every_real if f.startswith(base) and os.path.basename(f) == stem + ".ci")
    for obj in set(re.findall(r"(?:^|\s)([^\s()]+\.(?:obj|o))(?=\s|$)", text, re.M)):
        ci = re.sub(r"\.(obj|o)$", ".ci", at_root(obj))
        if ci in every_real:
            wanted.add(ci)
    return sorted(wanted) or every


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--budget", action="append", default=[])
    ap.add_argument("--objdump")
    ap.add_argument("--cxxfilt")
    ap.add_argument("--ci-root")
    ap.add_argument("--source-root", default=REPO)
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--paths", action="store_true")
    args = ap.parse_args()

    images = []
    for i in args.inputs:
        if os.path.isdir(i):
            images += sorted(m[:-4] for m in glob.glob(os.path.join(i, "examples", "*.map")) if os.path.exists(m[:-4]))
        else:
            images.append(i)
    if not images:
        print("stack.py: no image (give IMAGE.elf or a build directory with examples/*.map)", file=sys.stderr)
        return 1
    budgets = []
    for b in args.budget:
        pat, _, n = b.partition("=")
        budgets.append((pat, int(n)))
    types = pointer_types([os.path.join(args.source_root, d) for d in ("include", "port", "src", "examples")])

    status = 0
    matched = set()
    cache = {}
    for image in images:
        root = args.ci_root or os.path.dirname(os.path.dirname(os.path.abspath(image)))
        files = ci_files_of(image, root)
        if not files:
            print(f"stack.py: no .ci files for {image} under {root}: configure with -DTESSERA_STACK_USAGE=ON",
                  file=sys.stderr)
            return 1
        key = tuple(sorted(files))
        if key not in cache:
            cache[key] = load_ci(files)
        root = key
        with open(image, "rb") as f:
            head = f.read(20)
        prefix = "arm-none-eabi-" if struct.unpack_from("<H", head, 18)[0] == 40 else "riscv64-unknown-elf-"
        objdump = args.objdump or prefix + "objdump"
        cxxfilt = args.cxxfilt or prefix + "c++filt"
        entries, notes, taken, unclassified, assumed = analyse_image(image, cache[root], types, objdump, cxxfilt)
        name = os.path.basename(image)
        print(f"stack of {name}: {len(entries)} public entry points (bytes: the deepest path, each function's "
              f"frame included)")
        failed_here = []
        for short_name, d, path, problem in sorted(entries, key=lambda e: (-e[1], e[0])):
            limit = None
            for pat, n in budgets:
                if fnmatch.fnmatchcase(short_name, pat):
                    limit = n if limit is None else min(limit, n)
                    matched.add(pat)
            verdict = ""
            if problem:
                verdict = f"  UNBOUNDED ({problem})"
                failed_here.append(short_name)
            elif limit is not None:
                if d > limit:
                    verdict = f"  budget {limit}: EXCEEDED by {d - limit}"
                    failed_here.append(short_name)
                else:
                    verdict = f"  budget {limit}: met"
            if args.quiet and limit is None and not problem:
                continue
            size = "unbounded" if d == UNBOUNDED else str(d)
            if args.paths or problem:
                print(f"  {short_name:34} {size:>9}{verdict}\n      " + " > ".join(path))
            else:  # the largest frames on the path
                frames = sorted(((int(p.rsplit(" ", 1)[1]), p.rsplit(" ", 1)[0]) for p in path
                                 if re.search(r" \d+$", p)), reverse=True)[:3]
                big = ", ".join(f"{n} {b}" for b, n in frames if b >= 128)
                print(f"  {short_name:34} {size:>9}{verdict}" + (f"   (largest frames: {big})" if big else ""))
        if not args.quiet:
            print(f"  address-taken functions: {len(taken)}; indirect calls resolved by the pointer's type to:")
            for n in sorted(notes):
                print(f"    {n}")
            for n in sorted(assumed):
                print(f"    not followed: a call through a pointer back into a caller on the path "
                      f"(a cycle only by type): {n}")
            if unclassified:
                print("  address-taken functions of no known pointer type (a candidate of every indirect call): "
                      + ", ".join(sorted(short(t[1].label) if t[1] else t[0] for t in unclassified)))
        if failed_here:
            status = 1
            print(f"  FAILED: {', '.join(failed_here)}")
    for pat, _ in budgets:
        if pat not in matched:
            print(f"stack.py: no entry point matches the budget pattern {pat}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
