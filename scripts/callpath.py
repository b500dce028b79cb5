#!/usr/bin/env python3
"""Static call path of a command from the prompt, from the objects (objdump -dr, x86-64):
the functions reached on the main thread from session_run_line, with the calls the
dispatcher makes through pointers put in by name: the command's handler(s) given here
and the session's reap (session_job_reap, the per-command step; NO_STEP=1 leaves it out,
for a tree from before the dispatcher had one). core/ and plot/ functions are leaves
(their walls are layer_walls'). Prints the files entered, in the order first entered,
and every call that comes back to a file the call stack has already left.
usage: scripts/callpath.py BUILD HANDLER [HANDLER...]
  e.g. scripts/callpath.py build cmd_train     (`train` from the prompt)
       scripts/callpath.py build cmd_control   (`pause ID`)"""
import json, os, re, subprocess, sys
build = os.path.abspath(sys.argv[1]); handlers = sys.argv[2:]
src = os.path.dirname(build)
entries = json.load(open(os.path.join(build, "compile_commands.json")))
objs = {}
for e in entries:
    f = os.path.normpath(os.path.join(e["directory"], e["file"]))
    rel = os.path.relpath(f, src)
    if rel.startswith(("commands/", "core/", "plot/")) and "output" in e:
        objs[os.path.join(e["directory"], e["output"])] = rel
file_of, calls = {}, {}
fn_re = re.compile(r"^[0-9a-f]+ <([\w.]+)>:$")
call_re = re.compile(r"\s(?:call|jmp)\s+[0-9a-f]+ <([\w.]+)(?:\+0x[0-9a-f]+)?>")
rel_re = re.compile(r"R_X86_64_(?:PLT32|PC32)\s+([\w.]+)-0x4")
for o, rel in objs.items():
    out = subprocess.run(["objdump", "-dr", "--no-show-raw-insn", o], capture_output=True,
                         text=True).stdout
    cur = None
    for line in out.splitlines():
        m = fn_re.match(line)
        if m:
            cur = m.group(1).split(".")[0]
            file_of.setdefault(cur, rel)
            calls.setdefault((rel, cur), set())
            continue
        if cur is None:
            continue
        for r in (call_re, rel_re):
            m = r.search(line)
            if m and not m.group(1).startswith((".", "_GLOBAL")):
                calls[(rel, cur)].add(m.group(1).split(".")[0])
nm = subprocess.run(["nm", "-A", "--defined-only"] + list(objs), capture_output=True, text=True).stdout
glob = {}
for line in nm.splitlines():
    loc, _, rest = line.rpartition(":")
    p = rest.split()
    if len(p) == 3 and p[1] == "T":
        glob[p[2]] = objs[loc]


def where(caller_file, name):
    if (caller_file, name) in calls:
        return caller_file
    if name in glob:
        return glob[name]
    if name == "reap_step":   # the dispatcher's step, a static of commands.c
        return "commands/commands.c"
    return None


files, order, backs = set(), [], []


def walk(f, name, stack, seen):
    key = (f, name)
    if f not in files:
        files.add(f); order.append(f)
    if not f.startswith("commands/") or key in seen:
        return
    seen = seen | {key}
    out = set(calls.get(key, ()))
    if name in ("cmdtable_run", "cmdtable_dispatch_each", "cmdtable_dispatch"):
        out |= set(handlers) | ({"session_job_reap"} if not os.environ.get("NO_STEP") else set())
    for c in sorted(out):
        g = where(f, c)
        if g is None:
            continue
        if g != f and g in [s for s in stack[:-1]] and stack[-1] == f:
            backs.append(f"{name} ({f}) -> {c} ({g})")
        walk(g, c, stack + ([g] if g != f else []), seen)


start = glob["session_run_line"]
walk(start, "session_run_line", [start], frozenset())
cmd = [f for f in order if f.startswith("commands/")]
print(f"files entered ({len(order)}; commands/: {len(cmd)}):")
for f in order:
    print("  " + f)
print(f"calls that come back to a file already left: {len(set(backs))}")
for b in sorted(set(backs))[:40]:
    print("  " + b)
