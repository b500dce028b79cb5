#!/usr/bin/env python3
"""layers.py — the walls between core/'s folders, checked against the real build.

Reads the layer order from docs/architecture.md (the ```layers block: one tier a line,
lowest first) and the build's compile_commands.json, then checks:
  1. every core source's -I paths name only its own folder and folders of lower tiers;
  2. for every folder, a deliberate include of a header from a folder it may not see
     fails to compile with that folder's real flags, and an include from a folder it may
     see compiles (so the check itself can fail);
  3. no file outside core/<folder>/ includes that folder's private/ headers.
Usage: layers.py SOURCE_ROOT BUILD_ROOT. Exit 0 when all hold, 1 otherwise."""
import json, os, re, shlex, subprocess, sys, tempfile

src, build = sys.argv[1], sys.argv[2]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def read_tiers():
    text = open(os.path.join(src, "docs", "architecture.md")).read()
    m = re.search(r"```layers\n(.*?)```", text, re.S)
    if not m:
        sys.exit("docs/architecture.md has no ```layers block")
    return [line.split() for line in m.group(1).strip().splitlines()]


tiers = read_tiers()
tier_of = {f: i for i, t in enumerate(tiers) for f in t}
folders = sorted(tier_of)
on_disk = sorted(d for d in os.listdir(os.path.join(src, "core"))
                 if os.path.isdir(os.path.join(src, "core", d)))
check(on_disk == folders, "the layers block names every core folder and only those "
      f"(doc: {folders}, disk: {on_disk})")


def allowed(folder):
    return {f for f in folders if f == folder or tier_of[f] < tier_of[folder]}


def core_folder(path):
    """The core folder a path lies in (source or build tree), else None."""
    for root in (src, build):
        rel = os.path.relpath(os.path.normpath(path), os.path.join(root, "core"))
        if not rel.startswith(".."):
            head = rel.split(os.sep)[0]
            return head if head in tier_of else None
    return None


def include_dirs(entry):
    args = shlex.split(entry["command"]) if "command" in entry else entry["arguments"]
    dirs = []
    for i, a in enumerate(args):
        d = a[2:] if a.startswith("-I") and len(a) > 2 else (args[i + 1] if a == "-I" else None)
        if d is not None:
            dirs.append(os.path.normpath(os.path.join(entry["directory"], d)))
    return args, dirs


entries = json.load(open(os.path.join(build, "compile_commands.json")))
example = {}  # folder -> one real compile command of it
sees = {}     # folder -> the core folders on its include path
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
print(f"     include paths of {sum(1 for e in entries if core_folder(os.path.join(e['directory'], e['file'])))} core sources checked")


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

# private/ headers: only their own folder includes them.
inc = re.compile(r'#\s*include\s+"([^"]*private/[^"]+)"')
for top in ("core", "commands", "ui", "app", "plot", "tests"):
    for dirpath, _, files in os.walk(os.path.join(src, top)):
        for name in files:
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, name)
            for m in inc.finditer(open(path, errors="replace").read()):
                owner = os.path.normpath(os.path.join(dirpath, m.group(1)))
                ok = os.path.exists(owner) and core_folder(dirpath) is not None and \
                    core_folder(owner) == core_folder(dirpath)
                check(ok, f"{os.path.relpath(path, src)} includes {m.group(1)} from its own folder")

print(f"layers: {len(failures)} failed")
sys.exit(1 if failures else 0)
