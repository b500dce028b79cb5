#!/usr/bin/env bash
# e2e_dashboard_sweep.sh — the dashboard's own parallel sweep is visible outside the sweep
# view (issue 33 item 5): on the training view the scrollback says when each trial starts
# and the bar counts the trials running at once; the store marks a trial running as soon
# as its worker is started (not "pending" while it loads); the sweep's end is said in the
# scrollback. Every wait is bounded and polls. Usage: e2e_dashboard_sweep.sh LMLAB_BINARY.
# Exits 77 (skipped) without tmux.
set -u
bin=$(readlink -f "$1")
command -v tmux >/dev/null || { echo "tmux not installed: skipped"; exit 77; }
dir=$(mktemp -d)
sock="lmlab-dsweep-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; sleep 0.5; rm -rf "$dir"' EXIT
cd "$dir"
export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8
db="$dir/t.db"
screen() { tmux -L "$sock" capture-pane -p -t t -S -200; }
fail() { echo "FAIL: $*"; echo "--- screen ---"; screen || true; exit 1; }
wait_for() { # wait_for TEXT [SECONDS]
    for _ in $(seq 1 $(( ${2:-60} * 20 ))); do
        screen | grep -qF -- "$1" && return 0
        sleep 0.05
    done
    fail "expected '$1'"
}
keys() { tmux -L "$sock" send-keys -t t "$@"; }

tmux -L "$sock" new-session -d -s t -x 160 -y 50 "$bin --db $db"
tmux -L "$sock" set-option -t t window-size manual >/dev/null 2>&1 || true
wait_for "lmlab>"
keys "use quick" Enter
wait_for "using quick"
# long trials (stopped below), two at once, the training view on screen throughout
keys "sweep lr=1e-3,3e-3 parallel=2 steps=2000000 eval_every=1000" Enter
wait_for "sweep #1: trial 1/2 (run #" 90
wait_for "sweep #1: trial 2/2 (run #" 90
screen | grep -qE "sweep #1: trial [12]/2 \(run #[0-9]+, lr=[0-9e.-]+\) started" ||
    fail "no trial start lines"
for _ in $(seq 1 600); do
    screen | head -1 | grep -q "sweep #1 2 running, 0/2 done" && break
    sleep 0.1
done
screen | head -1 | grep -q "sweep #1 2 running, 0/2 done" || fail "bar: $(screen | head -1)"
st=$(sqlite3 -cmd '.timeout 5000' "$db" "SELECT group_concat(status) FROM sweep_trials WHERE sweep_id=1")
[ "$st" = "running,running" ] || fail "trials in the store: $st"
echo "parallel sweep: trial lines and '2 running' on the training view; the store says running"
keys "sweep stop" Enter
wait_for "sweep #1 sweep1 stopped" 120
echo "sweep end said in the scrollback"
keys "quit" Enter
echo "e2e_dashboard_sweep: ok"
