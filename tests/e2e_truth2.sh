#!/usr/bin/env bash
# e2e_truth2.sh — the same fact about a run read from every place that shows it agrees
# (docs/truth2.md): a run started with init_from= is not a fork of the run it took its
# weights from (run ID, runs, --json, compare's tokens/s, report, TensorBoard lineage);
# a fork's best is its own (best.safetensors written, compare and --json name its step);
# an ended run's `status` gives its own speed and time, as its end did, and says
# "interrupted" as runs does; the dashboard's line at a fork's end states its own work.
# Usage: e2e_truth2.sh LMLAB_BINARY
set -u
. "$(dirname "$0")/bounded.sh"   # bwait: every wait on a child is bounded
bin=$(readlink -f "$1")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
export LMLAB_DB="$dir/t.db"
fail() { echo "FAIL: $*"; exit 1; }
# the "N steps in Xs (...), T tokens/s" line of a training's summary: T
summary_speed() { grep -E '^  [0-9]+ steps .* tokens/s' "$1" | grep -oE '[0-9]+ tokens/s' | cut -d' ' -f1; }

"$bin" train quick steps=200 >o1 2>&1 || fail "train: $(cat o1)"
"$bin" train quick steps=200 init_from=1 name=ft >o2 2>&1 || fail "init_from: $(cat o2)"
"$bin" -c 'fork 1 step=100 lr=0.05; wait' >o3 2>&1 || fail "fork: $(cat o3)"

# 1. init_from: its lineage says what it is, everywhere
"$bin" run 2 >r2.txt || fail "run 2"
grep -q "^  initialised from: run #1 at step 200$" r2.txt ||
    fail "run 2 (init_from=1): $(grep -E 'from' r2.txt)"
"$bin" --json runs id=2 | grep -q '"parent":1,"parent_step":200,"parent_kind":"init_from"' ||
    fail "--json runs: $("$bin" --json runs id=2 | grep -oE '"parent[a-z_]*":[^,]*' | tr '\n' ' ')"
"$bin" --json runs id=3 | grep -q '"parent":1,"parent_step":100,"parent_kind":"fork"' ||
    fail "--json runs of the fork: $("$bin" --json runs id=3 | grep -oE '"parent[a-z_]*":[^,]*')"
"$bin" runs | grep -qE '^   2  ft .* init #1@200$' || fail "runs: $("$bin" runs)"
"$bin" runs | grep -qE '^   3  .* #1@100$' || fail "runs (the fork): $("$bin" runs)"
# its speed is its own, as its summary said, not its parent's counters subtracted ("-")
want=$(summary_speed o2)
[ -n "$want" ] || fail "no speed in the summary: $(tail -3 o2)"
"$bin" compare 1 2 | grep -qE "^tokens/s +[0-9]+ +$want$" ||
    fail "compare's tokens/s of run 2, its summary says $want: $("$bin" compare 1 2 | grep tokens/s)"
want=$(summary_speed o3)
"$bin" compare 1 3 | grep -qE "^tokens/s +[0-9]+ +$want$" ||
    fail "compare's tokens/s of the fork, its summary says $want: $("$bin" compare 1 3 | grep tokens/s)"
"$bin" report runs=1,2 file=r.md >/dev/null 2>&1 || fail "report"
grep -qF '| init\_from \#1 at step 200 |' r.md || fail "report: $(grep '^| 2 ' r.md)"
"$bin" export 2 format=tensorboard dir=tb >/dev/null 2>&1 || fail "tensorboard export"
grep -aq 'initialised from the weights of #1 at step 200' tb/*/events.* ||
    fail "tensorboard lineage: $(grep -ao 'forked from[^|]*' tb/*/events.* | head -1)"

# 2. a fork's best is its own: its evaluations (all worse than its parent's best before
# the fork point) choose best.safetensors, which compare and --json name
ls runs/run-3-*/best.safetensors >/dev/null 2>&1 || fail "the fork wrote no best.safetensors: $(ls runs/run-3-*/)"
"$bin" --json runs id=3 | grep -q '"best_step":200,' ||
    fail "--json best_step of the fork: $("$bin" --json runs id=3 | grep -oE '"best_step":[^,]*')"
"$bin" compare 1 3 | grep -qE '^best checkpoint +step 200 +step 200$' ||
    fail "compare: $("$bin" compare 1 3 | grep 'best checkpoint')"
grep -qE '^  step 200 .*best\.safetensors  \* best$' <("$bin" run 3) ||
    fail "run 3: $("$bin" run 3 | sed -n '/^checkpoints/,/^samples/p')"
# 3. an ended run's `status`: its own speed and time, as its end said (not its last logged
# window's speed; a fork's seconds since its fork point, not its parent's before it)
for r in 1:o1 3:o3; do
    id=${r%%:*} f=${r#*:}
    want=$(summary_speed "$f") secs=$(grep -oE ' in [^ ]+ \(' "$f" | tail -1 | cut -d' ' -f3)
    line=$("$bin" -c "attach $id; status" 2>&1 | grep "^run #$id ")
    echo "$line" | grep -qE " $want tok/s  elapsed $secs  ETA -$" ||
        fail "status of run $id: '$line'; its end said $want tokens/s in $secs"
done
# 4. a run whose process died is "interrupted" in `status` as in runs and run ID
"$bin" train quick steps=1000000 name=killed >o4 2>&1 &
pid=$!
for _ in $(seq 1 600); do   # bounded: 60 s; waits for its first logged step
    "$bin" --json runs name=killed 2>/dev/null | grep -qE '"status":"running","steps":[1-9]' && break
    sleep 0.1
done
kill -9 $pid
bwait $pid 10 "the killed training" 2>/dev/null
id=$("$bin" --json runs name=killed | grep -oE '"id":[0-9]+' | head -1 | cut -d: -f2)
"$bin" runs id=$id | grep -qE "^ +$id +killed .* interrupted " || fail "runs: $("$bin" runs id=$id)"
line=$("$bin" -c "attach $id; status" 2>&1 | grep "^run #$id ")
echo "$line" | grep -q "^run #$id interrupted " || fail "status of the interrupted run: $line"

# 5. the dashboard's line at a fork's end: its own steps, time and speed, as compare says
if command -v tmux >/dev/null; then
    sock="lmlab-truth2-$$"
    trap 'tmux -L "$sock" kill-server 2>/dev/null; rm -rf "$dir"' EXIT
    export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8
    tmux -L "$sock" new-session -d -s t -x 200 -y 50 "$bin --db $LMLAB_DB"
    screen() { tmux -L "$sock" capture-pane -p -t t -S -200; }
    for _ in $(seq 1 300); do screen | grep -q 'lmlab>' && break; sleep 0.1; done
    tmux -L "$sock" send-keys -t t "fork 1 step=100 lr=0.05 name=dashfork" Enter
    for _ in $(seq 1 600); do screen | grep -q 'dashfork finished after' && break; sleep 0.1; done
    end=$(screen | grep -oE 'dashfork finished after [^(]*\([^)]*\) in [^:]*: [0-9]+ tokens/s')
    fid=$("$bin" --json runs name=dashfork | grep -oE '"id":[0-9]+' | head -1 | cut -d: -f2)
    want=$("$bin" compare 1 "$fid" | grep -E '^tokens/s ' | awk '{print $3}')
    echo "$end" | grep -qE "after 100 steps \(#1@100 to 200\) in [^:]*: $want tokens/s" ||
        fail "the dashboard's end of the fork: '$end'; compare says $want tokens/s"
fi
echo "e2e_truth2: ok"
