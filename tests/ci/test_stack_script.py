#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Unit checks of ci/stack.py's reading of the sources for function pointers passed as arguments: a function
pointer a call names binds the callee's parameter only where that is sure (the parameter is never changed, the
name is a function and not a variable). Exit status 0 when every check holds."""
import importlib.util
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the sources' ci/
HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("stack", os.path.join(HERE, "..", "..", "ci", "stack.py"))
stack = importlib.util.module_from_spec(spec)
spec.loader.exec_module(stack)

SOURCE = """\
using executor_task = void (*)(void* context, size_t index, uint32_t worker) noexcept;
void pack_task(void* context, size_t i, uint32_t) noexcept {}
// a comment with a brace { and a call run(x, pack_task)
void executor_run(const executor& e, size_t n, executor_task task, void* ctx) noexcept {
  if (e.run == nullptr) {
    for (size_t i = 0; i < n; ++i) task(ctx, i, 0);
    return;
  }
  e.run(e.context, n, task, ctx);
}
void changes(executor_task task, void* ctx) noexcept {
  const char* s = "}";
  task = pick(s);
  task(ctx, 0, 0);
}
void takes_address(executor_task task) noexcept { store(&task); }
void shadows(executor_task task) noexcept {
  for (executor_task task : others) task(nullptr, 0, 0);
}
status pack(const job& j) noexcept {
  executor_run(j.exec, j.n, pack_task, &j);
  executor_task chosen = j.delta ? pack_task : other_task;
  executor_run(j.exec, j.n, chosen, &j);
  return TESSERA_TRY(executor_run(j.exec, j.n,
                                  pack_task, &j));
}
"""

failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: {got!r}, expected {want!r}")


with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "source.cpp")
    with open(path, "w") as f:
        f.write(SOURCE)
    lines = SOURCE.split("\n")

    def loc(line_text, col_text):
        n = next(i for i, l in enumerate(lines) if line_text in l) + 1
        return f"{path}:{n}:{lines[n - 1].index(col_text) + 1}"

    run = stack.definition(loc("void executor_run(", "executor_run"))
    check("executor_run's parameters", run and list(run[0]), ["e", "n", "task", "ctx"])
    check("executor_run leaves task as passed", stack.untouched(run, "task"), True)
    changes = stack.definition(loc("void changes(", "changes"))
    check("changes' parameters (a brace in a string literal)", changes and list(changes[0]), ["task", "ctx"])
    check("changes assigns task", stack.untouched(changes, "task"), False)
    taker = stack.definition(loc("void takes_address(", "takes_address"))
    check("takes_address takes task's address", stack.untouched(taker, "task"), False)
    shadow = stack.definition(loc("void shadows(", "shadows"))
    check("shadows declares another task", stack.untouched(shadow, "task"), False)
    check("the arguments of the call naming pack_task",
          stack.call_arguments(loc("executor_run(j.exec, j.n, pack_task, &j);", "executor_run"), "executor_run"),
          ["j.exec", "j.n", "pack_task", "&j"])
    check("the arguments of a call over two lines, GCC pointing at the macro",
          stack.call_arguments(loc("return TESSERA_TRY(executor_run", "TESSERA_TRY"), "executor_run"),
          ["j.exec", "j.n", "pack_task", "&j"])
    check("no such call in the statement",
          stack.call_arguments(loc("executor_task chosen", "chosen"), "executor_run"), None)
    check("pack_task is no variable", stack.declares_variable(path, "pack_task"), False)
    check("chosen is a variable", stack.declares_variable(path, "chosen"), True)
    check("task is a parameter", stack.declares_variable(path, "task"), True)
    pack = stack.definition(loc("status pack(", "pack"))
    check("the call is in pack's body", stack.in_body(pack, loc("executor_run(j.exec, j.n, chosen", "executor_run")),
          True)
    check("a call outside pack's body", stack.in_body(pack, loc("e.run(e.context", "run")), False)

for f in failures:
    print("FAILED:", f)
print(f"test_stack_script: {'all checks hold' if not failures else str(len(failures)) + ' failed'}")
sys.exit(1 if failures else 0)
