#!/usr/bin/env bash
# e2e_rm_ask.sh — `rm ID` asks y/N at an interactive prompt (issue 49): in line mode at a
# terminal and in the dashboard it shows the plan and asks; n keeps the run, y deletes it.
# From the shell without yes it still only prints the plan and deletes nothing. Leaving
# line mode (`quit`, Ctrl-D) while a run trains asks first too, as the dashboard does: n
# keeps it training, y stops it (recorded as stopped) and quits.
# Every wait is for the text it needs (no fixed sleeps). Exits 77 without tmux.
# Usage: e2e_rm_ask.sh LMLAB_BINARY.
set -eu
bin=$(readlink -f "$1")
command -v tmux >/dev/null || { echo "tmux not installed: skipped"; exit 77; }
dir=$(mktemp -d)
sock="lmlab-rmask-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$dir"' EXIT
cd "$dir"
export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8
screen() { tmux -L "$sock" capture-pane -p -t t; }
fail() { echo "FAIL: $*"; echo "--- screen ---"; screen || true; exit 1; }
wait_for() { # wait_for TEXT [SECONDS]
    for _ in $(seq 1 $(( ${2:-60} * 10 ))); do
        screen | grep -qF -- "$1" && return 0
        sleep 0.1
    done
    fail "expected: $1"
}
keys() { tmux -L "$sock" send-keys -t t "$@"; }
has_run() { "$bin" --db t.db -c "run $1" >/dev/null 2>&1; }

for _ in 1 2 3; do
    "$bin" --db t.db train quick steps=2 runs_dir=runs >/dev/null 2>&1 || fail "train"
done
has_run 3 || fail "three runs expected"

# the shell: the plan, an error, nothing deleted
if "$bin" --db t.db rm 1 </dev/null >shell.txt 2>&1; then fail "rm without yes succeeded"; fi
grep -q "rm would delete 1 run" shell.txt || { cat shell.txt; fail "no plan from the shell"; }
has_run 1 || fail "rm without yes deleted run 1 from the shell"

# line mode at a terminal: asks; n keeps, y deletes
tmux -L "$sock" new-session -d -s t -x 120 -y 40 "$bin --plain --db $dir/t.db"
wait_for "lmlab>"
keys "rm 1" Enter
wait_for "delete 1 run for good? (y/N)"
screen | grep -qF "rm would delete 1 run" || fail "no plan before the question"
keys "n" Enter
wait_for "not done"
has_run 1 || fail "answer n deleted run 1"
keys "rm 1" Enter
wait_for "delete 1 run for good? (y/N)"
keys "y" Enter
wait_for "deleted run 1"
has_run 1 && fail "answer y kept run 1"
keys "quit" Enter
for _ in $(seq 1 300); do tmux -L "$sock" has-session -t t 2>/dev/null || break; sleep 0.1; done

# the dashboard: the question over the screen; a key other than y keeps, y deletes
tmux -L "$sock" new-session -d -s t -x 120 -y 40 "$bin --db $dir/t.db"
wait_for "lmlab>"
keys "rm 2" Enter
wait_for "delete 1 run for good? (y/N)"
keys "n"
wait_for "not done: rm 2 yes"
has_run 2 || fail "dashboard: n deleted run 2"
keys "rm 2" Enter
wait_for "delete 1 run for good? (y/N)"
keys "y"
wait_for "deleted run 2"
has_run 2 && fail "dashboard: y kept run 2"
has_run 3 || fail "run 3 was deleted"
keys F10   # nothing trains: it quits at once
for _ in $(seq 1 300); do tmux -L "$sock" has-session -t t 2>/dev/null || break; sleep 0.1; done

# line mode: quit and Ctrl-D while a run trains ask; n goes on, y stops and quits
tmux -L "$sock" new-session -d -s t -x 150 -y 40 "$bin --plain --db $dir/t.db; echo EXIT=\$?; sleep 60"
wait_for "lmlab>"
keys "train quick steps=1000000 time_budget=120 runs_dir=runs" Enter
wait_for "started"
keys "quit" Enter
wait_for "is training: stop it (checkpointed and recorded) and quit? (y/N)"
keys "n" Enter
wait_for "not quitting: run #4 goes on"
"$bin" --db t.db runs 2>/dev/null | grep -q " running " || fail "answer n: the run is not running"
keys C-d
wait_for "run #4 is training: stop it"
keys "y" Enter
wait_for "EXIT=0"
"$bin" --db t.db -c "run 4" 2>/dev/null | grep -q "stopped" || fail "answer y: run 4 not recorded as stopped"
echo "ok: rm asks y/N in line mode and the dashboard, not from the shell; quit asks while a run trains"
