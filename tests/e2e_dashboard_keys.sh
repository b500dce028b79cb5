#!/usr/bin/env bash
# e2e_dashboard_keys.sh — the dashboard's interaction traps in a real terminal (tmux),
# while a run trains: after Esc every command name (and the old one-letter shortcuts)
# typed goes to the command line and fires nothing; Ctrl-C clears a typed line and on
# an empty line says how to quit; unknown escape sequences are not typed as text; the
# tokens view without a model says so; `quit`, F10 and F8 ask while training (n keeps
# it training; y on F8 stops it and the status bar says STOPPED, not TRAINING + ETA);
# `quit` when idle leaves; NO_COLOR draws no colour. Every wait polls the screen (no
# fixed sleeps), so a slow machine only makes it slower. Usage: e2e_dashboard_keys.sh
# LMLAB_BINARY. Exits 77 (skipped) without tmux.
set -eu
bin=$(readlink -f "$1")
command -v tmux >/dev/null || { echo "tmux not installed: skipped"; exit 77; }
dir=$(mktemp -d)
sock="lmlab-dkeys-$$"
# (lmlab may still be writing a checkpoint when the server is killed: rm retries)
trap 'tmux -L "$sock" kill-server 2>/dev/null || true
      for _ in 1 2 3 4 5 6 7 8 9 10; do rm -rf "$dir" 2>/dev/null && break; sleep 0.2; done' EXIT
cd "$dir"
export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8

screen() { tmux -L "$sock" capture-pane -p -t t; }
alive() { tmux -L "$sock" has-session -t t 2>/dev/null; }
fail() { echo "FAIL: $*"; echo "--- screen ---"; screen || true; exit 1; }
wait_for() { # wait_for TEXT [SECONDS]: TEXT anywhere on the screen
    for _ in $(seq 1 $(( ${2:-20} * 20 ))); do
        screen | grep -qF -- "$1" && return 0
        sleep 0.05
    done
    fail "expected '$1'"
}
wait_gone() { # wait_gone TEXT [SECONDS]
    for _ in $(seq 1 $(( ${2:-20} * 20 ))); do
        screen | grep -qF -- "$1" || return 0
        sleep 0.05
    done
    fail "'$1' stayed on screen"
}
last_line() { screen | sed -e 's/ *$//' | grep -v '^$' | tail -1; }
wait_line() { # wait_line TEXT [SECONDS]: the command line is TEXT (then maybe " " + hint)
    for _ in $(seq 1 $(( ${2:-20} * 20 ))); do
        case "$(last_line)" in "$1" | "$1 "*) return 0 ;; esac
        sleep 0.05
    done
    fail "expected the command line '$1', have '$(last_line)'"
}
wait_empty() { # the command line is empty
    for _ in $(seq 1 400); do
        [ "$(last_line)" = "lmlab>" ] && return 0
        sleep 0.05
    done
    fail "expected an empty command line, have '$(last_line)'"
}
keys() { tmux -L "$sock" send-keys -t t "$@"; }
status_bar() { screen | head -1; }

names=$("$bin" --db "$dir/names.db" -c help | sed -n 's/^  \([a-z][a-z]*\).*/\1/p' | sort -u)
[ "$(echo "$names" | wc -w)" -ge 20 ] || { echo "FAIL: command names not found: $names"; exit 1; }

tmux -L "$sock" new-session -d -s t -x 120 -y 40 "$bin --db $dir/t.db"
tmux -L "$sock" set-option -t t window-size manual >/dev/null 2>&1 || true
wait_for "lmlab>"
wait_for "IDLE"

# the tokens view without a model
keys F4
wait_for 'no model open: `open ID` or `train`'
screen | grep -q "layer 0 of 0" && fail "the tokens view says 'layer 0 of 0' without a model"
keys F2
wait_gone "no model open"

keys "use quick" Enter
wait_for "using quick"
keys "train steps=200000 batch=64 bptt=64" Enter
wait_for "TRAINING"
wait_for "run #1 started"

# after Esc, every command name types into the line and fires nothing
for name in $names psxqlavot; do
    keys Escape
    wait_for "VIEW KEYS"
    keys -l "$name"
    wait_line "lmlab> $name"
    status_bar | grep -qE "TRAINING|EVALUATING" || fail "typing '$name' after Esc changed the run"
    screen | grep -qE "y: stop|keys \| any key closes" && fail "typing '$name' opened a dialog"
    keys C-c          # Ctrl-C on a typed line clears it
    wait_empty
done
screen | grep '^> ' | grep -vxE "> (use quick|train steps=200000 batch=64 bptt=64)" &&
    fail "a command ran while typing names"
screen | grep -qE "unknown command|sample \(command\)" && fail "a command ran while typing names"
alive || fail "lmlab died while typing command names"
echo "typed $(echo $names | wc -w) command names after Esc: nothing fired"

# Ctrl-C on an empty line says how to quit, and does not quit
keys C-c
wait_for "to quit type \`quit\` or press F10"
alive || fail "Ctrl-C on an empty line quit"

# escape sequences curses does not know are not typed as text (rxvt End, an unknown one)
keys -l "abc"
wait_line "lmlab> abc"
keys -H 1b 5b 38 7e
keys -H 1b 5b 39 39 7e
keys -l "d"
wait_line "lmlab> abcd"
last_line | grep -qF "~" && fail "an escape sequence was typed as text"
keys C-c
wait_empty

# every way to quit asks while training; n keeps it training
keys -l "quit"
keys Enter
wait_for "y: stop and quit"
keys n
wait_for "not quitting: the run keeps training"
wait_gone "y: stop and quit"
keys F10
wait_for "y: stop and quit"
keys n
wait_gone "y: stop and quit"
keys Escape   # Ctrl-D with a view's keys, not the command line, asks too
keys C-d
wait_for "y: stop and quit"
keys n
wait_gone "y: stop and quit"
alive || fail "lmlab quit although the answer was n"
status_bar | grep -qE "TRAINING|EVALUATING" || fail "the run stopped although the answer was n"

# F8 stop asks; y stops; the status bar settles on STOPPED (no TRAINING, no ETA)
keys F8
wait_for "y: stop the run"
status_bar | grep -qE "TRAINING|EVALUATING" || fail "F8 stopped without asking"
keys y
wait_for "STOPPED"
status_bar | grep -qE "TRAINING|EVALUATING" && fail "status bar still says TRAINING after stop"
status_bar | grep -qE "ETA [0-9]" && fail "status bar still shows an ETA after stop"

# idle: `quit` leaves at once
keys -l "quit"
keys Enter
for _ in $(seq 1 200); do alive || break; sleep 0.05; done
alive && fail "\`quit\` with no run training did not leave"
json=$("$bin" --db "$dir/t.db" -c runs --json)
printf '%s\n' "$json" | grep -q '"id":1,.*"status":"stopped"' ||
    { echo "FAIL: run not recorded as stopped: $json"; exit 1; }

# NO_COLOR (no-color.org): colours without it, none with it
colours() { # SGR colour parameters on the captured screen
    tmux -L "$sock" capture-pane -e -p -t t | grep -oP '\x1b\[[0-9;]*m' |
        grep -oP '(?<=[\[;])(3[0-8]|4[0-8]|9[0-7]|10[0-7])(?=[;m])' | wc -l
}
for nc in "" 1; do
    tmux -L "$sock" new-session -d -s t -x 100 -y 30 "env NO_COLOR=$nc $bin --db $dir/t.db"
    wait_for "lmlab>"
    wait_for "IDLE"
    n=$(colours)
    if [ -z "$nc" ]; then
        [ "$n" -gt 0 ] || fail "no colour drawn without NO_COLOR (cannot test NO_COLOR)"
    else
        [ "$n" -eq 0 ] || fail "NO_COLOR=1 still drew $n colour attributes"
    fi
    echo "NO_COLOR='$nc': $n colour attributes on screen"
    keys F10
    for _ in $(seq 1 200); do alive || break; sleep 0.05; done
    alive && fail "F10 did not quit when idle"
done
echo "e2e_dashboard_keys: ok"
echo "1 passed, 0 failed"
