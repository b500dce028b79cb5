#!/usr/bin/env bash
# e2e_repl.sh — the line-mode prompt in a real terminal (tmux): Tab completes a command
# name, a config key and an enumerated value; the command runs and its answer is read
# from the screen; history survives a restart; Ctrl-C clears the line; quit exits.
# Usage: e2e_repl.sh LMLAB_BINARY. Exits 77 (skipped) without tmux.
set -eu
bin=$(readlink -f "$1")
command -v tmux >/dev/null || { echo "tmux not installed: skipped"; exit 77; }
dir=$(mktemp -d)
sock="lmlab-repl-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$dir"' EXIT
cd "$dir"
export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8

screen() { tmux -L "$sock" capture-pane -p -t t; }
wait_for() { # wait_for TEXT [SECONDS]
    for _ in $(seq 1 $(( ${2:-10} * 10 ))); do
        screen | grep -qF -- "$1" && return 0
        sleep 0.1
    done
    echo "--- screen ---"; screen; echo "--- expected: $1"; return 1
}
keys() { tmux -L "$sock" send-keys -t t "$@"; }

tmux -L "$sock" new-session -d -s t -x 100 -y 70 "$bin --plain --db $dir/t.db"
wait_for "lmlab>"

# Tab completes the command name: "us<Tab>" -> "use "
keys "us" Tab
wait_for "lmlab> use"
keys "quick" Enter
wait_for "using quick"

# a config key and an enumerated value: "set mod<Tab>" -> "model=", "dispatcher-m<Tab>"
keys "set mod" Tab
wait_for "lmlab> set model="
keys "dispatcher-m" Tab
wait_for "set model=dispatcher-mh"
keys Enter
keys "show config" Enter
wait_for "experiment: quick"
screen | grep -q "model  *dispatcher-mh  *\*" || { echo "model not set"; screen; exit 1; }

# an error points at the word
keys "set lrr=1" Enter
wait_for "did you mean 'lr'"

# Ctrl-C clears the line, the prompt stays
keys "this is abandoned" C-c
keys "help train" Enter
wait_for "resume=ID continues"

keys "quit" Enter
for _ in $(seq 1 50); do tmux -L "$sock" has-session -t t 2>/dev/null || break; sleep 0.1; done
if tmux -L "$sock" has-session -t t 2>/dev/null; then echo "lmlab did not quit"; exit 1; fi

# history persisted next to the database
grep -q "set model=dispatcher-mh" "$dir/.lmlab_history" || { echo "history not saved"; exit 1; }
tmux -L "$sock" new-session -d -s t -x 100 -y 70 "$bin --plain --db $dir/t.db"
wait_for "lmlab>"
keys Up Up
wait_for "lmlab> help train"
keys C-c "quit" Enter
echo "e2e_repl: ok"
echo "1 passed, 0 failed"
