#!/usr/bin/env python3
"""layers_mutation.py — the walls test must see a wall broken (meson test layer_walls_mutation).

Copies the sources into a scratch tree whose build/ mirrors the real build (its
compile_commands.json pointed at the copy, its object files linked to the real ones),
checks that layers.py passes there untouched, then breaks two walls the way a hurried
engineer would and rebuilds only the changed objects with their real compile commands:
  1. core/base/strdist.c includes "../train/schedule.h" by a relative path and calls
     schedule_kind_name (base is the lowest floor, train far above it);
  2. commands/cmd_bench.c includes "gemm_bf16.h" and calls gemm_bf16_select_kernel
     (commands/ reaches the kernels only through core/run, train or bench).
Both compile (that is the hole: the C compiler and the linker cannot tell), and layers.py
must then fail, naming each include and each call. Not a test of the real tree (that is
layer_walls). Usage: layers_mutation.py LAYERS_PY SOURCE_ROOT BUILD_ROOT."""
import json, os, shlex, shutil, subprocess, sys, tempfile

layers, src, build = (os.path.abspath(a) for a in sys.argv[1:4])
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run_layers(tree):
    r = subprocess.run([sys.executable, layers, tree, os.path.join(tree, "build")],
                       capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


MUTATIONS = [
    ("core/base/strdist.c",
     '\n#include "../train/schedule.h"\n'
     "const char *strdist_wall_probe(void);\n"
     "const char *strdist_wall_probe(void) { return schedule_kind_name(0); }\n",
     ["FAIL core/base/strdist.c includes ../train/schedule.h",
      "FAIL core/base/strdist.c calls schedule_kind_name of core/train/schedule.c"]),
    ("commands/cmd_bench.c",
     '\n#include "gemm_bf16.h"\n'
     "int cmd_bench_wall_probe(void);\n"
     "int cmd_bench_wall_probe(void) { return (int)gemm_bf16_select_kernel(); }\n",
     ["FAIL commands/cmd_bench.c includes gemm_bf16.h of nn",
      "FAIL commands/cmd_bench.c calls gemm_bf16_select_kernel of core/nn/gemm_bf16.c"]),
]

with tempfile.TemporaryDirectory(prefix="lmlab-walls-") as tmp:
    tree = os.path.join(tmp, "tree")
    skip = shutil.ignore_patterns("build", "fixtures", "corpus", ".git", "*.txt", "*.md")
    for top in ("core", "commands", "ui", "plot", "app", "tests"):
        shutil.copytree(os.path.join(src, top), os.path.join(tree, top), ignore=skip)
    os.makedirs(os.path.join(tree, "docs"))
    shutil.copy(os.path.join(src, "docs", "architecture.md"), os.path.join(tree, "docs"))
    tbuild = os.path.join(tree, "build")

    def moved(path):
        """A path of the real sources, made absolute (against the real build folder) and
        moved into the copy; any other path absolute and unchanged."""
        path = os.path.normpath(os.path.join(build, path))
        rel = os.path.relpath(path, src)
        return path if rel.startswith("..") else os.path.join(tree, rel)

    entries = json.load(open(os.path.join(build, "compile_commands.json")))
    for e in entries:
        if os.path.normpath(e["directory"]) != os.path.normpath(build):
            continue
        out = os.path.join(tbuild, e["output"])
        os.makedirs(os.path.dirname(out), exist_ok=True)
        if os.path.exists(os.path.join(build, e["output"])):
            os.symlink(os.path.join(build, e["output"]), out)
        # the build folder may lie anywhere (CI: build-asan; by hand: /tmp/x): every
        # source path and -I of the command is made absolute, into the copy
        args = shlex.split(e["command"]) if "command" in e else e["arguments"]
        for i, a in enumerate(args):
            if a.startswith("-I") and len(a) > 2:
                args[i] = "-I" + moved(a[2:])
            elif i > 0 and args[i - 1] == "-I":
                args[i] = moved(a)
            elif a == e["file"]:
                args[i] = moved(a)
        e.pop("arguments", None)
        e["command"] = shlex.join(args)
        e["file"] = moved(e["file"])
        e["directory"] = tbuild
    json.dump(entries, open(os.path.join(tbuild, "compile_commands.json"), "w"))

    rc, text = run_layers(tree)
    check(rc == 0, "the untouched copy passes the walls test" + ("" if rc == 0 else ":\n" + text))

    by_file = {os.path.normpath(os.path.join(e["directory"], e["file"])): e for e in entries}
    for rel, code, _ in MUTATIONS:
        path = os.path.join(tree, rel)
        open(path, "a").write(code)
        e = by_file[os.path.normpath(os.path.join(tree, rel))]
        os.unlink(os.path.join(tbuild, e["output"]))
        args = shlex.split(e["command"]) if "command" in e else e["arguments"]
        r = subprocess.run(args, cwd=tbuild, capture_output=True, text=True, timeout=120)
        check(r.returncode == 0, f"{rel} with an upward include and call compiles (the hole "
              "the walls test closes)" + ("" if r.returncode == 0 else ":\n" + r.stderr[-2000:]))

    rc, text = run_layers(tree)
    check(rc == 1, f"the walls test fails on the broken copy (exit {rc})")
    for _, _, expected in MUTATIONS:
        for line in expected:
            check(any(l.startswith(line) for l in text.splitlines()), f"it says: {line}")
    if failures:
        print(text)

print(f"layers_mutation: {len(failures)} failed")
sys.exit(1 if failures else 0)
