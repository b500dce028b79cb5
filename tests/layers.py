#!/usr/bin/env python3
"""layers.py — the walls between lmlab's rooms, checked on what the code needs.

A room is a folder of core/ (its own static library) or one of plot/, commands/, ui/,
app/. docs/architecture.md holds the order: the ```layers block (core's tiers, one a
line, lowest first: a folder sees itself and the folders on earlier lines) and the
```walls block (each outer room and the rooms it may see). Checked against the build:
  1. symbols: every undefined symbol of a room's object files (`nm`) is defined by that
     room, by a room it may see, or by no room at all (libc, BLAS, SQLite, ...): an
     upward call is a failure here whatever the link line does;
  2. includes: no `#include "..."` anywhere in the tree names `..`, and every quoted
     include of a room's source names a header of itself or of a room it may see;
  3. every core source's -I paths name only its own folder and folders of lower tiers,
     and a probe including a header of a folder above fails to compile with that
     folder's real flags while one below compiles (so the flags check can fail);
  4. no file outside core/<folder>/ includes that folder's private/ headers;
  5. every function a room exports (a global T symbol) is used by another object file
     (another source of lmlab or a test): a function used only in its own file is
     static, one used nowhere is deleted;
  6. one clock: only core/base/sysinfo.c reads CLOCK_MONOTONIC (sysinfo_now);
  7. no function body is longer than 80 lines;
  8. commands/ in modules: the ```commands block of docs/architecture.md names its
     modules (one a line, lowest first, each with its files); every file of commands/
     is in one, a module includes and calls (`nm`) only itself and modules on earlier
     lines, so no two files of different modules include or call each other in a loop;
     and no handler (a function of the COMMANDS table's type) calls another handler,
     directly or through functions of commands/ (a source-level call graph).
tests/layers_mutation.py breaks a copy of the tree on purpose and expects failures.
Usage: layers.py SOURCE_ROOT BUILD_ROOT. Exit 0 when all hold, 1 otherwise."""
import json, os, re, shlex, subprocess, sys, tempfile

src, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
failures = []
OUTER = ("plot", "commands", "ui", "app")


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def block(name):
    text = open(os.path.join(src, "docs", "architecture.md")).read()
    m = re.search(r"```" + name + r"\n(.*?)```", text, re.S)
    if not m:
        sys.exit(f"docs/architecture.md has no ```{name} block")
    return [line.split() for line in m.group(1).strip().splitlines()]


tiers = block("layers")
tier_of = {f: i for i, t in enumerate(tiers) for f in t}
folders = sorted(tier_of)
on_disk = sorted(d for d in os.listdir(os.path.join(src, "core"))
                 if os.path.isdir(os.path.join(src, "core", d)))
check(on_disk == folders, "the layers block names every core folder and only those "
      f"(doc: {folders}, disk: {on_disk})")

sees_rooms = {f: {g for g in folders if g == f or tier_of[g] < tier_of[f]} for f in folders}
for words in block("walls"):
    room = words[0].rstrip(":")
    unknown = [w for w in words[1:] if w not in tier_of and w not in OUTER]
    check(room in OUTER and not unknown, f"walls line for {room} names known rooms {unknown}")
    sees_rooms[room] = {room, *words[1:]}
check(all(r in sees_rooms for r in OUTER), f"the walls block names every outer room {OUTER}")


def allowed(folder):
    return sees_rooms[folder]


def room_dir(room):
    return os.path.join(src, "core", room) if room in tier_of else os.path.join(src, room)


def room_of(path):
    """The room a path lies in (source tree, or the build tree's mirror of it), else None;
    "tests" for the tests."""
    path = os.path.normpath(path)
    for root in (src, build):
        rel = os.path.relpath(path, root)
        if rel.startswith(".."):
            continue
        parts = rel.split(os.sep)
        if parts[0] == "core" and len(parts) > 1 and parts[1] in tier_of:
            return parts[1]
        if parts[0] in OUTER or parts[0] == "tests":
            return parts[0]
        if root == build:
            return None
    return None


def core_folder(path):
    r = room_of(path)
    return r if r in tier_of else None


def include_dirs(entry):
    args = shlex.split(entry["command"]) if "command" in entry else entry["arguments"]
    dirs = []
    for i, a in enumerate(args):
        d = a[2:] if a.startswith("-I") and len(a) > 2 else (args[i + 1] if a == "-I" else None)
        if d is not None:
            dirs.append(os.path.normpath(os.path.join(entry["directory"], d)))
    return args, dirs


entries = json.load(open(os.path.join(build, "compile_commands.json")))

# ---- 1. symbols -------------------------------------------------------------------------
objects = []  # (room, object path, source path relative to src)
for e in entries:
    source = os.path.normpath(os.path.join(e["directory"], e["file"]))
    room = room_of(source)
    if room is None or "output" not in e:
        continue
    objects.append((room, os.path.join(e["directory"], e["output"]), os.path.relpath(source, src)))
check(len({r for r, _, _ in objects} - {"tests"}) == len(folders) + len(OUTER),
      "every room has compiled objects in the build")

defined, undefined = {}, {}   # object -> set of global symbols
owner = {}                    # symbol -> (room, source) defining it
functions = {}                # object -> global functions (T) it defines
r = subprocess.run(["nm", "-A"] + [o for _, o, _ in objects], capture_output=True, text=True)
check(r.returncode == 0, "nm reads every object file " + r.stderr.strip()[:200])
by_obj = {o: (room, s) for room, o, s in objects}
for line in r.stdout.splitlines():
    loc, _, rest = line.rpartition(":")
    p = rest.split()
    if loc not in by_obj or not p:
        continue
    if len(p) == 2 and p[0] in "Uw":
        undefined.setdefault(loc, set()).add(p[1])
    elif len(p) == 3 and p[1] in "TDBRCVWGSi":
        defined.setdefault(loc, set()).add(p[2])
        if p[1] == "T":
            functions.setdefault(loc, set()).add(p[2])
        if by_obj[loc][0] != "tests":
            prev = owner.setdefault(p[2], by_obj[loc])
            check(prev == by_obj[loc] or p[1] in "VWC",
                  f"{p[2]} is defined once ({prev[1]} and {by_obj[loc][1]})")
n_sym = 0
for obj, syms in sorted(undefined.items()):
    room, source = by_obj[obj]
    if room == "tests":
        continue
    for sym in sorted(syms):
        n_sym += 1
        if sym in owner and owner[sym][0] not in allowed(room):
            check(False, f"{source} calls {sym} of {owner[sym][1]}: {room} may not use "
                  f"{owner[sym][0]} (it sees {' '.join(sorted(allowed(room)))})")
print(f"     {n_sym} undefined symbols of {len(undefined)} objects checked")

# ---- 2. includes ------------------------------------------------------------------------
headers = {}  # header name -> the rooms that hold it (top level of the room's folder)
for room in sees_rooms:
    for name in os.listdir(room_dir(room)):
        if name.endswith((".h", ".inc", ".def")):
            headers.setdefault(name, set()).add(room)
inc = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
n_inc = 0
for top in ("core", "commands", "ui", "app", "plot", "tests"):
    for dirpath, dirs, files in os.walk(os.path.join(src, top)):
        dirs[:] = [d for d in dirs if d != "build"]
        for name in files:
            if not name.endswith((".c", ".h", ".inc", ".def")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, src)
            room = room_of(path)
            for m in inc.finditer(open(path, errors="replace").read()):
                target = m.group(1)
                n_inc += 1
                if ".." in target.split("/"):
                    check(False, f"{rel} includes {target}: a relative path up is a hole in "
                          "the wall (name the header; the build's include path finds it)")
                    continue
                if room in (None, "tests") or "private/" in target:
                    continue
                held = headers.get(target)
                if held and room not in held and not (held & allowed(room)):
                    check(False, f"{rel} includes {target} of {'/'.join(sorted(held))}: "
                          f"{room} may not see it")
print(f"     {n_inc} includes checked")

# ---- 3. include paths of core ------------------------------------------------------------
example, sees = {}, {}
for e in entries:
    path = os.path.normpath(os.path.join(e["directory"], e["file"]))
    folder = core_folder(path)
    if folder is None:
        continue
    args, dirs = include_dirs(e)
    seen = {core_folder(d) for d in dirs} - {None}
    bad = seen - allowed(folder)
    if bad:
        check(False, f"{os.path.relpath(path, src)} sees {sorted(bad)} (above core/{folder})")
    example.setdefault(folder, e)
    sees.setdefault(folder, set()).update(seen)
check(set(example) == set(folders), "every core folder has compiled sources in the build")


def public_header(folder):
    d = os.path.join(src, "core", folder)
    return sorted(h for h in os.listdir(d) if h.endswith(".h"))[0]


def compiles(entry, header):
    args, _ = include_dirs(entry)
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "probe.c")
        open(probe, "w").write(f'#include "{header}"\nint layers_probe;\n')
        cmd = [args[0]]
        skip = False
        for i, a in enumerate(args[1:], 1):
            if skip:
                skip = False
                continue
            if a in ("-o", "-MF", "-MQ", "-MT"):
                skip = True
                continue
            if a in ("-c", "-MD") or os.path.normpath(os.path.join(entry["directory"], a)) == \
                    os.path.normpath(os.path.join(entry["directory"], entry["file"])):
                continue
            cmd.append(a)
        cmd += ["-fsyntax-only", probe]
        r = subprocess.run(cmd, cwd=entry["directory"], capture_output=True, text=True)
        return r.returncode == 0


for folder in folders:
    entry = example.get(folder)
    if entry is None:
        continue
    above = [f for f in folders if f not in allowed(folder)]
    if above:
        target = min(above, key=lambda f: tier_of[f])
        h = public_header(target)
        check(not compiles(entry, h), f"core/{folder} cannot include {h} (core/{target})")
    h = public_header(folder)
    check(compiles(entry, h), f"core/{folder} can include its own {h}")
    below = [f for f in sees.get(folder, ()) if f != folder]
    if below:
        target = max(below, key=lambda f: tier_of[f])
        h = public_header(target)
        check(compiles(entry, h), f"core/{folder} can include {h} (core/{target}, below)")

# ---- 4. private/ headers: only their own folder includes them. ---------------------------
pinc = re.compile(r'#\s*include\s+"([^"]*private/[^"]+)"')
for top in ("core", "commands", "ui", "app", "plot", "tests"):
    for dirpath, _, files in os.walk(os.path.join(src, top)):
        for name in files:
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, name)
            for m in pinc.finditer(open(path, errors="replace").read()):
                owner_h = os.path.normpath(os.path.join(dirpath, m.group(1)))
                ok = os.path.exists(owner_h) and core_folder(dirpath) is not None and \
                    core_folder(owner_h) == core_folder(dirpath)
                check(ok, f"{os.path.relpath(path, src)} includes {m.group(1)} from its own folder")

# ---- one clock: monotonic time is sysinfo_now (core/base/sysinfo.c), never a private copy
n_clock = 0
for top in ("core", "commands", "ui", "app", "plot"):
    for dirpath, _, files in os.walk(os.path.join(src, top)):
        for name in files:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, src)
            if name.endswith((".c", ".h")) and rel != os.path.join("core", "base", "sysinfo.c"):
                n_clock += 1
                if "CLOCK_MONOTONIC" in open(path, errors="replace").read():
                    check(False, f"{rel} reads CLOCK_MONOTONIC itself: use sysinfo_now()")
print(f"     {n_clock} files checked for a private monotonic clock")

# ---- functions of at most 80 lines (house style): a body opens with "{" alone on a line
# and closes with "}" alone on a line, both at column 0
n_fn_len = 0
for top in ("core", "commands", "ui", "app", "plot"):
    for dirpath, _, files in os.walk(os.path.join(src, top)):
        for name in files:
            if not name.endswith(".c"):
                continue
            path = os.path.join(dirpath, name)
            lines = open(path, errors="replace").read().split("\n")
            i = 0
            while i < len(lines):
                if lines[i] == "{" and i > 0:
                    j = i + 1
                    while j < len(lines) and lines[j] != "}":
                        j += 1
                    k = i - 1
                    while k > 0 and "(" not in lines[k]:
                        k -= 1
                    m = re.search(r"(\w+)\s*\(", lines[k])
                    n_fn_len += 1
                    if j - i + 1 > 80:
                        check(False, f"{os.path.relpath(path, src)}: {m.group(1) if m else '?'} "
                              f"is {j - i + 1} lines (at most 80: split it)")
                    i = j
                i += 1
print(f"     {n_fn_len} function bodies checked for length")

# ---- 8. commands/ in modules; handlers never call handlers ------------------------------
cmd_dir = os.path.join(src, "commands")
module_of, module_rank = {}, {}
for rank, words in enumerate(block("commands")):
    name = words[0].rstrip(":")
    module_rank[name] = rank
    for f in words[1:]:
        check(f not in module_of, f"commands/{f} is in one module of the commands block")
        module_of[f] = name
cmd_files = sorted(f for f in os.listdir(cmd_dir) if f.endswith((".c", ".h")))
for f in cmd_files:
    if f not in module_of:
        check(False, f"commands/{f} is in a module of docs/architecture.md's commands block")
for f in sorted(set(module_of) - set(cmd_files)):
    check(False, f"the commands block names commands/{f}, which does not exist")
mod_edges = {}   # (from module, to module) -> [why]


def mod_edge(a_file, b_file, why):
    a, b = module_of.get(a_file), module_of.get(b_file)
    if a and b and a != b:
        mod_edges.setdefault((a, b), []).append(why)


for f in cmd_files:
    for m in inc.finditer(open(os.path.join(cmd_dir, f), errors="replace").read()):
        if m.group(1) in cmd_files:
            mod_edge(f, m.group(1), f"{f} includes {m.group(1)}")
for obj, syms in undefined.items():
    room, source = by_obj[obj]
    if room != "commands":
        continue
    for sym in syms:
        if sym in owner and owner[sym][0] == "commands":
            mod_edge(os.path.basename(source), os.path.basename(owner[sym][1]),
                     f"{os.path.basename(source)} calls {sym} of {os.path.basename(owner[sym][1])}")
# loops: strongly connected sets of modules (Tarjan)
graph = {}
for a, b in mod_edges:
    graph.setdefault(a, set()).add(b)
index, low, stack, on, sccs = {}, {}, [], set(), []


def strong(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on.add(v)
    for w in graph.get(v, ()):
        if w not in index:
            strong(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        sccs.append(sorted(comp))


sys.setrecursionlimit(10000)
for v in sorted(graph):
    if v not in index:
        strong(v)


def shortest_cycle(comp):
    best = None
    for v in comp:
        prev, todo = {v: None}, [v]
        while todo:
            nxt = []
            for u in todo:
                for w in sorted(graph.get(u, ())):
                    if w not in comp:
                        continue
                    if w == v:
                        path = [u]
                        while prev[path[-1]] is not None:
                            path.append(prev[path[-1]])
                        cyc = [v] + path[::-1][1:] + [v]
                        if best is None or len(cyc) < len(best):
                            best = cyc
                    elif w not in prev:
                        prev[w] = u
                        nxt.append(w)
            todo = nxt if best is None else []
    return best


for comp in sccs:
    if len(comp) > 1:
        cyc = shortest_cycle(comp)
        steps = "; ".join(mod_edges[(a, b)][0] for a, b in zip(cyc, cyc[1:]))
        check(False, f"commands/ modules {' -> '.join(cyc)} include or call each other in a "
              f"loop ({steps}); the loop's set: {' '.join(comp)}")
for (a, b), why in sorted(mod_edges.items()):
    if a in module_rank and b in module_rank and module_rank[b] > module_rank[a]:
        check(False, f"commands/ module {a} uses {b}, a module on a later line of the commands "
              f"block ({why[0]})")
print(f"     {len(cmd_files)} commands/ files in {len(module_rank)} modules, "
      f"{len(mod_edges)} module dependencies checked")

# handlers: functions of the table's type; a source-level call graph of commands/
handler_sig = re.compile(r"^int (\w+)\(Session \*\w+, int \w+, const LexWord \*\w+\)$", re.M)
bodies = {}      # (file, function) -> body text
defined_in = {}  # function -> files defining it
handlers = set()
for f in cmd_files:
    if not f.endswith(".c"):
        continue
    text = open(os.path.join(cmd_dir, f), errors="replace").read()
    handlers |= set(handler_sig.findall(text))
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i] == "{" and i > 0:
            j = i + 1
            while j < len(lines) and lines[j] != "}":
                j += 1
            k = i - 1
            while k > 0 and "(" not in lines[k]:
                k -= 1
            m = re.search(r"(\w+)\s*\(", lines[k])
            if m:
                bodies[(f, m.group(1))] = "\n".join(lines[i:j])
                defined_in.setdefault(m.group(1), []).append(f)
            i = j
        i += 1
calls = {}
call_re = re.compile(r"\b(\w+)\s*\(")
for (f, fn), body in bodies.items():
    out = set()
    for name in set(call_re.findall(body)):
        where = defined_in.get(name)
        if where and name != fn:
            out.add((f if f in where else where[0], name))
    calls[(f, fn)] = out
n_handlers = 0
for (f, fn) in sorted(bodies):
    if fn not in handlers:
        continue
    n_handlers += 1
    seen, todo = {(f, fn)}, [((f, fn), [])]
    while todo:
        node, path = todo.pop()
        for nxt in sorted(calls.get(node, ())):
            if nxt in seen:
                continue
            seen.add(nxt)
            if nxt[1] in handlers:
                via = "".join(f" through {p}" for p in path)
                check(False, f"handler {fn} ({f}) calls handler {nxt[1]} ({nxt[0]}){via}: "
                      "what two handlers share moves below them")
                continue
            todo.append((nxt, path + [nxt[1]]))
print(f"     {n_handlers} handlers checked for calls to other handlers")

# ---- 5. exports used outside their file --------------------------------------------------
used_by = {}
# The fuzz targets (tests/fuzz, built by scripts/fuzz.sh, not by meson) use some too.
for name in os.listdir(os.path.join(src, "tests", "fuzz")):
    if name.endswith(".c"):
        for word in set(re.findall(r"\w+", open(os.path.join(src, "tests", "fuzz", name)).read())):
            used_by.setdefault(word, set()).add("tests/fuzz/" + name)
for obj, syms in undefined.items():
    for sym in syms:
        used_by.setdefault(sym, set()).add(obj)
n_fn = 0
for obj, fns in sorted(functions.items()):
    room, source = by_obj[obj]
    if room in ("tests", "app"):
        continue
    for fn in sorted(fns):
        n_fn += 1
        if not used_by.get(fn, set()) - {obj}:
            check(False, f"{source} exports {fn}, which no other file uses "
                  "(make it static, or delete it)")
print(f"     {n_fn} exported functions checked")

print(f"layers: {len(failures)} failed")
sys.exit(1 if failures else 0)
