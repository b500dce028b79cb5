#!/usr/bin/env python3
"""series_mutation.py — the registry of named series is the one list (issue 48, meson test
series_mutation).

In a scratch copy of the tree (its build folder copied beside it, so ninja rebuilds only
what the change touches) it adds one series the way the issue says a contributor would:
ONE registry line (core/base/metrics.def: `probe_metric`, alias `probe`, shown on the
console line) plus THE line that produces it (core/train/trainer.c's step event: half the
training loss). Nothing else is edited. It rebuilds lmlab there, trains a tiny run with an
alert rule on the new series set by configuration (alerts=probe>0.5), and expects the new
name in every consumer:
  alerts    the rule parses by the alias and fires (`alert 1`), and `alert 1 on=...` takes it
  filters   `runs probe_metric>0.5` keeps the run, `runs probe_metric>50` does not
  columns   `runs columns=id,probe_metric` and `sort=-probe_metric`
  compare   `compare 1 1` has a "probe_metric (last)" row
  grid      `series 1 probe*` (the grid's list), `plot 1 series=probe* file=...` (the
            grid figure), and the dashboard's grid view in tmux when tmux is installed
  report    the report's series section and table
  export    the CSV's rows and the TensorBoard event file's tag
  console   `log 1` shows the console line's "probe ..." field
and the untouched tree knows none of it (`series` lists no probe_metric), so each check can
fail. Usage: series_mutation.py SOURCE_ROOT BUILD_ROOT."""
import os, shutil, subprocess, sys, tempfile, time

src, build = (os.path.abspath(a) for a in sys.argv[1:3])
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


REGISTRY_LINE = ('STEP_METRIC(probe_metric, float, REAL, "probe", "nats/token", LAST, 0, '
                 '"probe %.3f",\n            "a probe series added by tests/series_mutation.py")\n')
PRODUCER_ANCHOR = "    s->grad_norm = t->last_gnorm;\n"
PRODUCER_LINE = "    s->probe_metric = 0.5f * s->loss;\n"


def run(lmlab, db, *args, ok=True):
    r = subprocess.run([lmlab, "--db", db, *args], capture_output=True, text=True, timeout=300)
    if ok and r.returncode != 0:
        print("lmlab", *args, "->", r.returncode, r.stdout, r.stderr)
    return r.returncode, r.stdout + r.stderr


def grid_view(lmlab, db, tmp):
    """The dashboard's grid view, pattern probe*, in tmux; None when tmux is missing."""
    if not shutil.which("tmux"):
        return None
    sock = "lmlab-probe-%d" % os.getpid()
    env = dict(os.environ, TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    tm = lambda *a: subprocess.run(["tmux", "-L", sock, *a], env=env, capture_output=True,
                                   text=True, timeout=30)
    screen = lambda: tm("capture-pane", "-p", "-t", "t").stdout

    def wait_for(text, seconds=60):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if text in screen():
                return True
            time.sleep(0.05)
        return False
    try:
        tm("new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "%s --db %s" % (lmlab, db))
        ok = wait_for("lmlab>")
        tm("send-keys", "-t", "t", "-l", "attach 1")
        tm("send-keys", "-t", "t", "Enter")
        ok = ok and wait_for("attached run #1")
        tm("send-keys", "-t", "t", "8")
        ok = ok and wait_for("series *:")
        tm("send-keys", "-t", "t", "Escape")
        tm("send-keys", "-t", "t", "/")
        ok = ok and wait_for("series>")
        tm("send-keys", "-t", "t", "BSpace")
        tm("send-keys", "-t", "t", "-l", "probe*")
        tm("send-keys", "-t", "t", "Enter")
        ok = ok and wait_for("series probe*: 1") and wait_for(" probe_metric ")
        if not ok:
            print(screen())
        return ok
    finally:
        tm("kill-server")


with tempfile.TemporaryDirectory(prefix="lmlab-series-") as tmp:
    tree = os.path.join(tmp, "tree")
    same_place = os.path.dirname(build) == src   # build.ninja names sources as ../core/...
    skip = shutil.ignore_patterns(".git", "meson-logs", "fixtures", "*.db", "*.db-wal",
                                  "*.db-shm", "runs")
    shutil.copytree(src, tree, symlinks=True, ignore=skip)   # copy2: mtimes kept
    tbuild = os.path.join(tree, os.path.basename(build)) if same_place else os.path.join(tree, "b")
    if not same_place:   # a build folder elsewhere: a fresh one (slower)
        shutil.rmtree(tbuild, ignore_errors=True)
        subprocess.run(["meson", "setup", tbuild, tree], check=True, capture_output=True)
        subprocess.run(["ninja", "-C", tbuild, "app/lmlab"], check=True, capture_output=True,
                       timeout=1500)   # the untouched tree's lmlab, before the edit
    old = os.path.join(tbuild, "app", "lmlab")
    db0 = os.path.join(tmp, "before.db")
    rc, out = run(old, db0, "series", ok=False)
    check(rc == 0 and "probe_metric" not in out, "the untouched tree has no probe_metric")

    mdef = os.path.join(tree, "core", "base", "metrics.def")
    with open(mdef, "a") as f:
        f.write(REGISTRY_LINE)
    tr = os.path.join(tree, "core", "train", "trainer.c")
    text = open(tr).read()
    check(text.count(PRODUCER_ANCHOR) == 1, "the step event's grad_norm line, to add after")
    open(tr, "w").write(text.replace(PRODUCER_ANCHOR, PRODUCER_ANCHOR + PRODUCER_LINE))
    r = subprocess.run(["ninja", "-C", tbuild, "app/lmlab"], capture_output=True, text=True,
                       timeout=1500)
    check(r.returncode == 0, "the scratch tree builds with the two lines")
    if r.returncode:
        print(r.stdout[-3000:], r.stderr[-2000:])
        sys.exit(1)
    lmlab = old
    db = os.path.join(tmp, "t.db")
    os.chdir(tmp)
    os.environ["LMLAB_SYSMETRICS_EVERY"] = "0.2"
    rc, out = run(lmlab, db, "train", "quick", "steps=60", "name=probe", "alerts=probe>0.5")
    check(rc == 0, "a run trains with the new series")
    rc, out = run(lmlab, db, "series")
    check("probe_metric" in out and "probe" in out, "`series` lists it with its alias")

    rc, out = run(lmlab, db, "alert", "1")
    check("probe_metric>0.5" in out and "fired" in out and "probe_metric" in out.split("fired", 1)[-1],
          "alerts: alerts=probe>0.5 parsed by the alias and fired")
    rc, out = run(lmlab, db, "alert", "1", "on=probe_metric<0.1", ok=False)   # the rule parses;
    check("unknown" not in out and ((rc == 0 and "probe_metric<0.1" in out) or   # a finished
          "never trains again" in out), "alerts: `alert 1 on=probe_metric<0.1` parsed: " + out)  # run refuses new rules
    rc, out = run(lmlab, db, "alert", "1", "on=probe_metrc<0.1", ok=False)
    check(rc != 0 and "did you mean 'probe_metric'" in out, "alerts: did you mean")

    rc, out = run(lmlab, db, "runs", "probe_metric>0.5")
    check(rc == 0 and "probe" in out and "no runs" not in out, "filters: probe_metric>0.5 keeps it")
    rc, out = run(lmlab, db, "runs", "probe_metric>50")
    check(rc == 0 and "no runs" in out, "filters: probe_metric>50 keeps nothing")
    rc, out = run(lmlab, db, "runs", "columns=id,probe_metric,probe_metric.min", "sort=-probe_metric")
    lines = out.strip().splitlines()
    check(rc == 0 and len(lines) >= 2 and "probe_metric" in lines[0] and
          lines[1].split()[0] == "1" and len(lines[1].split()) == 3 and
          all(c[0].isdigit() for c in lines[1].split()[1:]), "columns and sort: %r" % lines[:2])

    rc, out = run(lmlab, db, "compare", "1", "1")
    check("probe_metric (last)" in out, "compare: a probe_metric row")
    rc, out = run(lmlab, db, "--json", "compare", "1", "1")
    check('"probe_metric"' in out, "compare --json: series.probe_metric")

    rc, out = run(lmlab, db, "series", "1", "probe*")
    check(rc == 0 and "probe_metric" in out, "grid: the run's series list has it")
    svg = os.path.join(tmp, "g.svg")
    rc, out = run(lmlab, db, "plot", "1", "series=probe*", "file=" + svg)
    check(rc == 0 and "1 series" in out and os.path.getsize(svg) > 1000, "grid: plot series=probe*")
    g = grid_view(lmlab, db, tmp)
    if g is None:
        print("skip the dashboard's grid view: tmux is not installed")
    else:
        check(g, "grid: the dashboard's grid view shows probe_metric under probe*")

    html = os.path.join(tmp, "r.html")
    rc, out = run(lmlab, db, "report", "runs=1", "file=" + html)
    doc = open(html).read() if rc == 0 else ""
    check("<td>probe_metric (last)</td>" in doc, "report: the series table has it")

    csv = os.path.join(tmp, "e.csv")
    rc, out = run(lmlab, db, "export", "1", "file=" + csv)
    check(rc == 0 and ",probe_metric," in open(csv).read(), "export: CSV rows of probe_metric")
    tb = os.path.join(tmp, "tb")
    rc, out = run(lmlab, db, "export", "1", "format=tensorboard", "dir=" + tb)
    ev = b"".join(open(os.path.join(d, f), "rb").read() for d, _, fs in os.walk(tb) for f in fs
                  if f.startswith("events.out.tfevents")) if rc == 0 else b""
    check(b"probe_metric" in ev, "export: the TensorBoard event file has its tag")

    rc, out = run(lmlab, db, "log", "1")
    check("probe " in out, "console: the progress line shows probe")

if failures:
    print("%d failed" % len(failures))
    sys.exit(1)
print("the new series reached every consumer")
