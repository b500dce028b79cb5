#!/usr/bin/env bash
# e2e_tboard.sh — `export ID ... format=tensorboard dir=D` (issue 48) against the real lmlab
# binary, its files read back independently of lmlab's writer (tests/tboard_check.py: the
# record framing and masked CRC-32C checked in Python, every record through
# `protoc --decode_raw`, the payloads walked by a small wire-format reader):
#   - a Dispatcher run with diagnostics (name with a slash and a non-ASCII letter) and its
#     fork: one folder per run (the name escaped), one events.out.tfevents.* file each, the
#     file version record first, steps never going back;
#   - every series there: every registry series the run has (core/base/series.h; loss equal
#     to the store's, as float32),
#     evaluations, gates and gate histograms, system samples, every named series of the
#     run (diagnostics scalars and histograms, bucket counts summing to num);
#   - the settings and the run's name and lineage as text-plugin summaries (the fork's says
#     which run and step it was forked from);
#   - the CRC check can fail (a flipped byte is found);
#   - dir= that exists, is a file, lies in a missing folder or cannot be created, and an
#     unknown run: refused, non-zero exit, nothing written (the parent folder unchanged).
# Usage: e2e_tboard.sh LMLAB. No timing assertions; every command has a timeout.
set -uo pipefail
. "$(dirname "$0")/e2e_lib.sh"   # ok, bad, check and FAILS
L=$(realpath "$1")
CHECK=$(dirname "$(realpath "$0")")/tboard_check.py
W=$(mktemp -d /tmp/lmlab_tboard_XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
cd "$W" || exit 1
T() { timeout 120 "$@"; }
command -v protoc >/dev/null || { echo "FAIL protoc not found (apt-get install protobuf-compiler)"; exit 1; }
export LMLAB_SYSMETRICS_EVERY=0.05

T "$L" --db a.db train quick steps=20 diagnostics=10 eval_every=10 checkpoint_every=10 \
    sample_every=0 log_every=2 runs_dir=runs "name=odd/name ü" >train.txt 2>&1
T "$L" --db a.db -c "fork 1 step=10 steps=30; wait" >fork.txt 2>&1
check "two runs recorded" [ "$(sqlite3 a.db "select count(*) from runs where status='finished'")" == 2 ]

T "$L" --db a.db export 1 2 format=tensorboard dir=tb >export.txt 2>&1
check "export exits 0 and says what it wrote" bash -c "grep -q 'wrote 2 runs to tb' export.txt"
check "one folder per run, the name escaped" bash -c "[ -d 'tb/1-odd%2Fname%20%C3%BC' ] && [ \$(ls tb | wc -l) == 2 ]"
check "one event file per run" bash -c "for d in tb/*/; do [ \$(ls \$d | grep -c '^events.out.tfevents\.') == 1 ] && [ \$(ls \$d | wc -l) == 1 ] || exit 1; done"
check "no temporary folder left" bash -c "[ \$(ls -a | grep -c 'tb.tmp') == 0 ]"

python3 "$CHECK" tb/*/events.out.tfevents.* >decoded.jsonl 2>check.err
check "every record's framing and CRC-32C, decode_raw of every record, version first" \
    bash -c "[ \$(wc -l <decoded.jsonl) == 2 ] && [ ! -s check.err ]"
[ -s check.err ] && sed 's/^/     /' check.err

python3 - a.db decoded.jsonl >content.txt 2>&1 <<'EOF'
import json, sqlite3, struct, sys, math
db = sqlite3.connect(sys.argv[1])
files = [json.loads(l) for l in open(sys.argv[2])]
by_run = {}
for f in files:
    run = int(f["file"].split("/")[1].split("-")[0])
    by_run[run] = f["events"]
def say(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
ev = by_run[1]
tags = {e[2] for e in ev}
f32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]
loss = {e[0]: e[4] for e in ev if e[2] == "loss"}
want = dict(db.execute("select step, loss from metrics where run_id=1"))
say(loss and all(loss[s] == f32(want[s]) for s in want) and set(loss) == set(want),
    "loss: every logged step, equal to the store's as float32 (%d points)" % len(loss))
for t in ["lr", "grad_norm", "tokens_per_s", "val_loss", "val_ppl", "best_val", "gate/0/0",
          "hist/gate/1/2", "sys/cpu", "sys/rss_mb", "grad/encoder.weight",
          "weight/blocks.0.linear1.weight", "update/decoder.weight", "act/1/std",
          "gate_entropy/1/4", "gate_saturated/0/0", "hist/weight/encoder.weight",
          "hist/grad/blocks.1.linear2.weight"]:
    say(t in tags, "tag %s present" % t)
named = {r[0] for r in db.execute("select name from series_names where run_id=1")}
say(named <= tags, "every named series of the run is exported (%d)" % len(named))
g = [e for e in ev if e[2] == "grad/encoder.weight"]
want = dict(db.execute("select p.step, p.value from series_points p join series_names n"
                       " on n.id=p.series_id where n.run_id=1 and n.name='grad/encoder.weight'"))
say([e[0] for e in g] == [10, 20] and all(e[4] == f32(want[e[0]]) for e in g),
    "a diagnostic's values at steps 10 and 20 equal the store's")
hs = [e for e in ev if e[3] == "histo"]
say(hs and all(abs(sum(e[4][5]) - e[4][2]) < 0.5 and len(e[4][4]) == len(e[4][5]) and
               all(a <= b for a, b in zip(e[4][4], e[4][4][1:])) and e[4][0] <= e[4][1]
               for e in hs), "histograms: counts sum to num, limits ascending (%d)" % len(hs))
say(all(len(e[4][4]) == 64 for e in hs if e[2].startswith("hist/weight/") and e[4][0] < e[4][1]),
    "weight histograms have 64 buckets")
texts = {e[2]: e[4] for e in ev if e[3] == "text"}
say(set(texts) == {"run", "settings"} and all(v[0] == "text" and v[2] == 7 for v in texts.values()),
    "run and settings as text-plugin summaries (DT_STRING)")
say("diagnostics | 10" in texts["settings"][1], "the settings hold diagnostics=10")
say("#1 odd/name ü" in texts["run"][1] and "trained from scratch" in texts["run"][1],
    "the run's name and lineage")
t2 = {e[2]: e[4] for e in by_run[2] if e[3] == "text"}
say("forked from #1 at step 10" in t2["run"][1], "the fork's lineage names its parent and step")
steps2 = sorted({e[0] for e in by_run[2] if e[2] == "loss"})
say(steps2 and steps2[0] > 10 and steps2[-1] == 30, "the fork's steps after 10 up to 30 (%s..%s)" %
    (steps2[0] if steps2 else "-", steps2[-1] if steps2 else "-"))
walls = [e[1] for e in ev if e[2] == "loss"]
say(all(w > 1.5e9 for w in walls) and walls == sorted(walls), "wall times: unix seconds, in order")
EOF
cat content.txt
check "the content checks" bash -c "! grep -q '^FAIL' content.txt && grep -q '^ok' content.txt"

# the CRC check can fail: one flipped byte in a copy of a file
f=$(ls tb/2-*/events.out.tfevents.* | head -1)
mkdir -p flip && cp "$f" flip/events.out.tfevents.1.x
printf '\x55' | dd of=flip/events.out.tfevents.1.x bs=1 seek=300 conv=notrunc status=none
check "a flipped byte fails the CRC check" bash -c "! python3 '$CHECK' flip/events.out.tfevents.1.x 2>flip.err && grep -q CRC flip.err"

# bad dir=: refused, non-zero exit, nothing written
refused() {   # refused WHAT DIR PATTERN
    local before after
    : >out.txt
    before=$(ls -a "$(dirname "$2")" 2>/dev/null | sort | tr '\n' ' ')
    T "$L" --db a.db export 1 format=tensorboard "dir=$2" >out.txt 2>&1
    local rc=$?
    after=$(ls -a "$(dirname "$2")" 2>/dev/null | sort | tr '\n' ' ')
    check "$1: refused ($(head -c 120 out.txt))" bash -c "[ $rc != 0 ] && grep -q '$3' out.txt && [ '$before' == '$after' ]"
}
refused "dir= an existing folder" tb "tb exists"
touch afile
refused "dir= an existing file" afile "exists and is not a folder"
refused "dir= in a missing folder" nowhere/tb "nowhere is not a folder"
refused "dir= that cannot be created" /sys/lmlab_tb_test "cannot"
T "$L" --db a.db export 1 77 format=tensorboard dir=tb3 >out.txt 2>&1
check "an unknown run: refused before anything is written" bash -c "[ $? != 0 ] && grep -q 'no run 77' out.txt && [ ! -e tb3 ] && [ \$(ls -a | grep -c 'tb3') == 0 ]"
T "$L" --db a.db export 1 format=tensorboard >out.txt 2>&1
check "format=tensorboard without dir=: says what to give" grep -q "needs dir=FOLDER" out.txt
T "$L" --db a.db export 1 format=tensorboard file=x >out.txt 2>&1
check "format=tensorboard with file=: says dir=" grep -q "give dir=FOLDER" out.txt
if [ "$(id -u)" != 0 ]; then
    mkdir ro && chmod 555 ro
    refused "dir= in a read-only folder" ro/tb "cannot write in"
fi

echo "e2e_tboard: $FAILS failed"
[ $FAILS == 0 ]
