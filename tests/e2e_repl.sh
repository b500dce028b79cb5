#!/usr/bin/env bash
# e2e_repl.sh — the line-mode prompt in a real terminal (tmux): Tab completes a command
# name, a config key and an enumerated value; the command runs and its answer is read
# from the screen; lines typed ahead or pasted while a command runs all run, in order;
# history survives a restart; Ctrl-C clears the line; quit exits. Every step waits for
# the text it needs (no fixed sleeps), so the result does not depend on the machine's speed.
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
scrollback() { tmux -L "$sock" capture-pane -p -S - -t t; }
# Generous limits: a passing test returns as soon as the text is there, and a loaded
# machine must not turn a slow answer into a failure.
wait_for() { # wait_for TEXT [SECONDS]
    for _ in $(seq 1 $(( ${2:-60} * 10 ))); do
        screen | grep -qF -- "$1" && return 0
        sleep 0.1
    done
    echo "--- screen ---"; screen; echo "--- expected: $1"; return 1
}
keys() { tmux -L "$sock" send-keys -t t "$@"; }

tmux -L "$sock" new-session -d -s t -x 100 -y 70 "$bin --plain --db $dir/t.db"
tmux -L "$sock" set-option -t t history-limit 10000 >/dev/null
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
scrollback | grep -q "model  *dispatcher-mh  *\*" || { echo "model not set"; scrollback; exit 1; }

# an error points at the word
keys "set lrr=1" Enter
wait_for "did you mean 'lr'"

# Ctrl-C clears the line, the prompt stays
keys "this is abandoned" C-c
keys "help train" Enter
wait_for "resume=ID continues"

# Typeahead: five lines pasted at once (one paste, as a terminal sends it), the second a
# blocking `wait` on a training run, so the other three arrive while it runs; then five
# typed in one send-keys. Every line runs, in order.
printf 'train steps=200\nwait\nset seed=7\nhelp quit\nhelp use\n' >"$dir/paste.txt"
tmux -L "$sock" load-buffer "$dir/paste.txt"
tmux -L "$sock" paste-buffer -t t
wait_for "key=value a line" 120
keys "set seed=9" Enter "set lr=0.002" Enter "show config" Enter "help runs" Enter "status" Enter
wait_for "lmlab> status" 60
wait_for "no run is training" 60
order=$(scrollback | grep -nE "^lmlab> (train steps=200|wait|set seed=7|help quit|help use|set seed=9|set lr=0.002|show config|help runs|status)\$" |
        sed 's/^[0-9]*:lmlab> //' | sed -n '/^train steps=200$/,$p' | tr '\n' '|')
want="train steps=200|wait|set seed=7|help quit|help use|set seed=9|set lr=0.002|show config|help runs|status|"
[ "$order" = "$want" ] || { echo "typeahead: lines ran as '$order', want '$want'"; scrollback | tail -80; exit 1; }
scrollback | grep -q "finished 200 steps" || { echo "wait did not report the run"; scrollback | tail -60; exit 1; }
scrollback | grep -q "seed  *9  *\*" || { echo "typed 'set seed=9' not applied before show config"; exit 1; }
scrollback | grep -qE "lr  *0.002  *\*" || { echo "typed 'set lr=0.002' not applied"; exit 1; }

keys "quit" Enter
for _ in $(seq 1 300); do tmux -L "$sock" has-session -t t 2>/dev/null || break; sleep 0.1; done
if tmux -L "$sock" has-session -t t 2>/dev/null; then echo "lmlab did not quit"; exit 1; fi

# history persisted next to the database
grep -q "set model=dispatcher-mh" "$dir/.lmlab_history" || { echo "history not saved"; exit 1; }
tmux -L "$sock" new-session -d -s t -x 100 -y 70 "$bin --plain --db $dir/t.db"
wait_for "lmlab>"
keys Up Up
wait_for "lmlab> status"
keys C-c "quit" Enter
for _ in $(seq 1 300); do tmux -L "$sock" has-session -t t 2>/dev/null || break; sleep 0.1; done
tmux -L "$sock" kill-server 2>/dev/null || true

# Ctrl-Z suspends like any terminal program (the shell reports a stopped job) and `fg`
# brings the prompt back; a history file that is a FIFO gives one warning, no hang, and
# is left a FIFO.
mkdir "$dir/z" && mkfifo "$dir/z/.lmlab_history"
tmux -L "$sock" new-session -d -s t -x 250 -y 30 "bash --norc --noprofile -i"
keys "PS1='sh\$ '" Enter
wait_for "sh\$"
keys "$bin --plain --db $dir/z/t.db" Enter
wait_for "command history is off"
wait_for "lmlab>"
keys C-z
wait_for "Stopped"
keys "fg" Enter
keys "help quit" Enter
wait_for "leave lmlab"
keys "quit" Enter
wait_for "sh\$ "
[ -p "$dir/z/.lmlab_history" ] || { echo "the FIFO history file was replaced"; exit 1; }
echo "e2e_repl: ok"
echo "1 passed, 0 failed"
