#!/usr/bin/env bash
# e2e_analysis.sh — many runs at a glance (issue 28, items 2 3 4 6) against the real
# binary and its dashboard in tmux: a 3-seed group (`train seeds=3`) listed with mean ±
# std and drawn as a band (history view `%`, and `plot group= band=std` to a PNG); a grid
# sweep with a known answer (lr matters, log_every does nothing) whose importance says
# so (`sweep importance --json`) and whose parallel coordinates and importance show in the
# sweep view and `plot sweep`; three runs sampled from one prompt side by side (`sample
# runs=` text and --json, and the samples view); the runs table's columns kept in the
# store and sorted by the smoothed final loss; bad input refused. Every wait polls the
# screen. Usage: e2e_analysis.sh LMLAB_BINARY. Exits 77 (skipped) without tmux/python3.
set -eu
bin=$(readlink -f "$1")
command -v tmux >/dev/null || { echo "tmux not installed: skipped"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed: skipped"; exit 77; }
dir=$(mktemp -d)
sock="lmlab-analysis-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true
      for _ in 1 2 3 4 5 6 7 8 9 10; do rm -rf "$dir" 2>/dev/null && break; sleep 0.2; done' EXIT
cd "$dir"
export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8
db="$dir/a.db"
lm() { "$bin" --db "$db" "$@"; }
fail() { echo "FAIL: $*"; echo "--- screen ---"; tmux -L "$sock" capture-pane -p -t t 2>/dev/null || true; exit 1; }
screen() { tmux -L "$sock" capture-pane -p -t t; }
wait_for() { # wait_for TEXT [SECONDS]
    for _ in $(seq 1 $(( ${2:-30} * 20 ))); do
        screen | grep -qF -- "$1" && return 0
        sleep 0.05
    done
    fail "expected '$1' on the screen"
}
keys() { tmux -L "$sock" send-keys -t t "$@"; }
# starts the dashboard on the store in tmux and shows view $1
dashboard_view() {
    tmux -L "$sock" new-session -d -s t -x 120 -y 40 "$bin --db $db"
    tmux -L "$sock" set-option -t t window-size manual >/dev/null 2>&1 || true
    wait_for "lmlab>"
    keys Escape; keys "$1"
}

# ---- a 3-seed group -------------------------------------------------------------------
out=$(lm -c "use quick; train seeds=3 steps=40 eval_every=10 group=trio; wait")
echo "$out" | grep -q "sweep #1 trio finished: 3 trials: 3 done" || fail "seeds=3: $out"
lm --json -c "runs" | python3 -c '
import json, sys
runs = [json.loads(l) for l in sys.stdin if l.strip()]
seeds = sorted(r["config"]["seed"] for r in runs)
assert len(runs) == 3 and seeds == [seeds[0], seeds[0] + 1, seeds[0] + 2], seeds
diff = {k for r in runs for k, v in r["config"].items() if v != runs[0]["config"][k]}
assert diff <= {"seed", "name"}, diff          # they differ only in their seed (and name)
' || fail "the three runs are not one config with three seeds"
grp=$(lm -c "runs group_by=group")
echo "$grp" | grep -qE "^trio +3 +[0-9.]+ ± [0-9.]+ " || fail "group_by=group: $grp"
lm --json -c "runs group_by=group" | python3 -c '
import json, sys, statistics
g = json.loads(sys.stdin.readline())
assert g["value"] == "trio" and g["n"] == 3 and g["best_std"] > 0, g
' || fail "group JSON"
lm -c "plot group=trio band=std file=band.png" | grep -q "wrote band.png" || fail "plot band"
python3 -c 'import sys; d=open("band.png","rb").read(); sys.exit(d[:8] != b"\x89PNG\r\n\x1a\n" or len(d) < 5000)' \
    || fail "band.png is not a PNG"

# the runs table shaped: columns kept in the store, sorted by the smoothed final loss
lm -c "runs columns=id,group,seed,final_smooth sort=final_smooth keep=true" >cols.txt
head -1 cols.txt | grep -qE "^id +group +seed +final_smooth$" || fail "columns: $(cat cols.txt)"
python3 -c '
v = [float(l.split()[3]) for l in open("cols.txt").read().splitlines()[1:]]
assert len(v) == 3 and v == sorted(v), v' || fail "sort=final_smooth: $(cat cols.txt)"
lm -c "runs" | head -1 | grep -qE "^id +group +seed +final_smooth$" || fail "columns not kept"
lm -c "runs columns=default" | head -1 | grep -q "best val (ppl)" || fail "columns=default"

# the band in the dashboard: history view, filter the group, mark one, %
dashboard_view 2
wait_for "runs: 3"
keys '/'; wait_for "filter>"; keys 'name~trio' Enter
wait_for 'filter "name~trio"'
keys ' '
wait_for "settings that differ"
wait_for "━━ #"                # the marked run's curve, in the plot's legend
dots() { screen | python3 -c '
import sys
print(sum(bin(ord(ch) - 0x2800).count("1") for ch in sys.stdin.read() if 0x2801 <= ord(ch) <= 0x28ff))'; }
line_dots=$(dots)
[ "$line_dots" -gt 20 ] || fail "the marked run's curve is not drawn ($line_dots dots)"
keys '%'
wait_for "groups: mean ±"   # the title may end "…" at 120 columns: the band is checked below
wait_for "trio N=3"
band_dots=$(dots)
echo "history plot: $line_dots braille dots as a line, $band_dots as a band"
# the band fills between mean-std and mean+std: far more dots than the one curve's line
[ "$band_dots" -gt $(( line_dots * 3 / 2 )) ] || fail "no band: $line_dots dots as a line, $band_dots as a band"
echo "3-seed group: listed with mean ± std, drawn as a band"
tmux -L "$sock" kill-server

# ---- a sweep with a known answer: lr matters, log_every does nothing ------------------
lm -c "use quick; sweep name=grid lr=1e-4,1e-3,1e-2 log_every=5,10 steps=40 eval_every=20; sweep wait" \
    | grep -q "sweep #2 grid finished: 6 trials: 6 done" || fail "grid sweep"
lm --json -c "sweep importance 2" | python3 -c '
import json, sys
o = json.loads(sys.stdin.read())
s = {x["key"]: x for x in o["settings"]}
assert o["trials"] == 6, o
assert s["lr"]["share"] > 0.99 and s["lr"]["rho"] < -0.99, s["lr"]   # lower loss with larger lr
assert s["log_every"]["share"] == 0 and s["log_every"]["rho"] == 0, s["log_every"]
assert o["settings"][0]["key"] == "lr"
' || fail "importance: $(lm --json -c 'sweep importance 2')"
lm -c "sweep importance 2" | grep -qE "^  lr +100\.0%" || fail "importance text"
lm -c "plot sweep 2 file=par.png" | grep -q "parallel coordinates of sweep 2 (6 trials, 2 settings" \
    || fail "plot sweep"
python3 -c 'import sys; d=open("par.png","rb").read(); sys.exit(d[:4] != b"\x89PNG")' || fail "par.png"

dashboard_view 4
wait_for "sweep #2 grid"
wait_for "importance: share of variance"
screen | grep -qE "lr +█+ 100\.0%" || fail "importance bars"
screen | grep -qE "log_every +·+ +0\.0%" || fail "log_every's empty bar"
keys '#'; keys '#'
wait_for "parallel coordinates"
wait_for "lr(log)"
echo "sweep: importance and parallel coordinates in the view"

# ---- three runs, one prompt -----------------------------------------------------------
lm -c 'sample runs=1,4,8 prompt="ROMEO:" tokens=40' >side.txt
grep -q "^prompt: ROMEO:" side.txt || fail "sample runs: $(cat side.txt)"
grep -qE "^#1 trio-t1 .*│ #4 grid-t1 .*│ #8 grid-t5" side.txt || fail "no columns: $(cat side.txt)"
lm --json -c 'sample runs=1,4,8 prompt="ROMEO:" tokens=40 seed=7' | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin if l.strip()]
assert [e["run"] for e in ev] == [1, 4, 8] and all(e["event"] == "sample" for e in ev), ev
assert all(e["tokens"] == 40 and e["seed"] == 7 and e["prompt"] == "ROMEO:" for e in ev), ev
assert len({e["text"] for e in ev}) == 3, "three models, three texts"
' || fail "sample --json"
keys Escape; keys 6
wait_for "one prompt, 3 models"
wait_for "#8 grid-t5"
screen | grep -q "│#4 grid-t1" || fail "samples view columns"
echo "one prompt through three runs: text, JSON and the samples view"
tmux -L "$sock" kill-server

# ---- one trial per value: every reader says "cannot tell", none a 100% share --------------
lm -c "use quick; sweep name=single lr=1e-4,1e-3,1e-2 steps=20 eval_every=10; sweep wait" \
    | grep -q "sweep #3 single finished: 3 trials: 3 done" || fail "single-trial sweep"
lm -c "sweep importance 3" | grep -qE "^  lr +- +\(cannot tell\)" || fail "importance text 3"
lm -c "report sweep=3 runs=10,11,12 file=single.html" >/dev/null || fail "report of sweep 3"
grep -q "<td>lr</td><td>cannot tell</td>" single.html || fail "the report gives lr a share"
grep -q "Seed-to-seed noise unknown" single.html && grep -q "cannot tell: one trial per value" single.html || fail "the report does not say the noise is unknown"
lm -c "report sweep=2 runs=4,5 file=grid.html" >/dev/null || fail "report of sweep 2"
grep -q "<td>lr</td><td>100.0%</td>" grid.html || fail "the grid's identified share is missing"
# the report marks an estimated best val as `runs` does (~), and says what ~ means
# (run 12 as a user's stop leaves it: no final whole-split evaluation, so its best is an estimate)
sqlite3 -cmd '.timeout 5000' "$db" "UPDATE runs SET status='stopped', reason='stopped by the user' WHERE id=12"
lm -c "report runs=1,2,3,4,5,6,7,8,9,10,11,12 file=all.html" >/dev/null || fail "report of 12 runs"
lm -c "runs" >runs12.txt
python3 - all.html runs12.txt <<'PY' || fail "the report's ~ marks differ from runs'"
import re, sys
html, txt = open(sys.argv[1]).read(), open(sys.argv[2]).read()
body = html.split('id="runs-table"')[1].split("</table>")[0]
rep = {int(c[0]): c[5].startswith("~") for c in
       (re.findall(r"<td>(.*?)</td>", row) for row in body.split("<tr>")[2:]) if c}
runs = {int(l.split()[0]): "~" in l.split("  ")[0:12].__str__() and bool(re.search(r"\s~\d", l))
        for l in txt.splitlines()[1:] if l.strip()[:1].isdigit()}
assert len(rep) == 12 and rep == runs, (rep, runs)
assert rep[12], "run 12's best is an estimate"
print("report and runs agree on", sum(rep.values()), "estimated best val of 12")
assert any(rep.values()) == ("~ best val is an estimate" in html), "the legend"
PY
dashboard_view 4
wait_for "sweep #3 single"
wait_for "cannot tell: 1 trial/value"
screen | grep -qE "lr +█+ 100\.0%" && fail "the sweep view draws a 100% bar for one trial per value"
echo "one trial per value: cannot tell in text, the report and the sweep view"
tmux -L "$sock" kill-server

# ---- bad input ------------------------------------------------------------------------
bad() { # bad "COMMAND" "expected message"
    set +e; msg=$(lm -c "$1" 2>&1); rc=$?; set -e
    [ "$rc" -ne 0 ] || fail "'$1' was accepted"
    echo "$msg" | grep -qF -- "$2" || fail "'$1': $msg"
}
runs_before=$(lm -c 'runs' | wc -l)
bad "sample runs=999 prompt=x" "no run 999"
bad "sample runs=1,x" "is not a run id"
bad "sample runs=4,4 prompt=x" "run 4 is listed twice"
bad "train seeds=0" "give how many seeds"
bad "train seeds=2 resume=1" "give one or the other"
bad "train group=a,b steps=1" "group=a,b"
bad "sweep importance 99" "no sweep 99"
bad "plot group=nope file=x.png" "no group 'nope'"
bad "plot sweep file=x.png" "plot sweep draws one sweep"
bad "runs columns=," "give names separated by commas"
bad "sweep strategy=halving steps=40 lr=1e-3,1e-2 seeds=2" "not halving"
[ "$runs_before" -eq 14 ] && [ "$(lm -c 'runs' | wc -l)" -eq "$runs_before" ] ||
    fail "bad input changed the store: $runs_before lines of runs before, $(lm -c 'runs' | wc -l) after"
echo "1 passed, 0 failed"
