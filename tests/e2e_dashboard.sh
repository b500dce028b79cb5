#!/usr/bin/env bash
# e2e_dashboard.sh — the dashboard in a real terminal (tmux, 120x40): `use quick`,
# `train steps=300` (with larger batches, so it lasts ~3 s); the status bar's step advances and the run finishes, the loss plot
# has braille points, the gates heatmap is filled; the window is resized to 80x24, to
# 60x20 (the "too small" message) and back without a crash; F10 quits (y if asked) and the
# run is recorded as finished in the store. Usage: e2e_dashboard.sh LMLAB_BINARY.
# Exits 77 (skipped) without tmux.
set -eu
bin=$(readlink -f "$1")
command -v tmux >/dev/null || { echo "tmux not installed: skipped"; exit 77; }
dir=$(mktemp -d)
sock="lmlab-dash-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$dir"' EXIT
cd "$dir"
export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8

screen() { tmux -L "$sock" capture-pane -p -t t; }
alive() { tmux -L "$sock" has-session -t t 2>/dev/null; }
fail() { echo "FAIL: $*"; echo "--- screen ---"; screen || true; exit 1; }
wait_for() { # wait_for TEXT [SECONDS]
    for _ in $(seq 1 $(( ${2:-60} * 20 ))); do
        screen | grep -qF -- "$1" && return 0
        sleep 0.05
    done
    fail "expected '$1'"
}
wait_gone() { # wait_gone TEXT [SECONDS]
    for _ in $(seq 1 $(( ${2:-10} * 20 ))); do
        screen | grep -qF -- "$1" || return 0
        sleep 0.05
    done
    fail "'$1' stayed on screen"
}
keys() { tmux -L "$sock" send-keys -t t "$@"; }

tmux -L "$sock" new-session -d -s t -x 120 -y 40 "$bin --db $dir/t.db"
tmux -L "$sock" set-option -t t window-size manual >/dev/null 2>&1 || true
wait_for "lmlab>"
wait_for "IDLE"
keys "use quick" Enter
wait_for "using quick"
# quick trains 300 steps in ~0.2 s: larger batches (~3 s) let the screen show progress
keys "train steps=300 batch=64 bptt=64" Enter

# the status bar's step advances until the run finishes (poll every 20 ms)
steps=""
for _ in $(seq 1 3000); do
    s=$(screen | head -1)
    n=$(printf '%s\n' "$s" | grep -o 'step [0-9]*/300' | head -1 | sed 's/step \([0-9]*\).*/\1/' || true)
    [ -n "$n" ] && case " $steps " in *" $n "*) ;; *) steps="$steps $n" ;; esac
    printf '%s\n' "$s" | grep -q FINISHED && break
    sleep 0.02
done
screen | head -1 | grep -q "FINISHED" || fail "the run did not finish within 60 s"
echo "steps seen in the status bar:$steps"
[ "$(echo $steps | wc -w)" -ge 2 ] || fail "the step never advanced on screen (saw:$steps)"
wait_for "finished after 300 steps"
s=$(screen)
printf '%s\n' "$s" | grep -qP '[\x{2801}-\x{28FF}]' || fail "no braille points in the plot"
printf '%s\n' "$s" | grep -q "gates @300: layer x shift" || fail "no gates heatmap"
printf '%s\n' "$s" | grep -Eq "L0 .*[0-9]\.[0-9][0-9] .*[0-9]\.[0-9][0-9]" || fail "heatmap row L0 empty"
printf '%s\n' "$s" | grep -Eq "L1 .*[0-9]\.[0-9][0-9]" || fail "heatmap row L1 empty"
printf '%s\n' "$s" | grep -q "[░▒▓█]" || fail "no shaded heatmap cell"

# resize: minimum size, too small, back
tmux -L "$sock" resize-window -t t -x 80 -y 24
for _ in $(seq 1 200); do   # redrawn at 80 columns (poll, up to 10 s)
    [ "$(screen | head -1 | wc -L)" -le 80 ] && screen | head -1 | grep -q FINISHED && break
    sleep 0.05
done
alive || fail "lmlab died on resize to 80x24"
[ "$(screen | head -1 | wc -L)" -le 80 ] || fail "not redrawn at 80 columns"
wait_for "FINISHED"
# the gate values stay at 80x24 (6 levels in 5-column cells: ".42")
screen | grep -Eq "L0 .*(\.[0-9][0-9]|1\.0)" || fail "gate values vanished at 80x24"
wait_for "lmlab>"
tmux -L "$sock" resize-window -t t -x 60 -y 20
wait_for "terminal too small (need 80x24"
alive || fail "lmlab died on resize to 60x20"
tmux -L "$sock" resize-window -t t -x 120 -y 40
wait_for "gates @300: layer x shift"
alive || fail "lmlab died on resize back"

# help overlay (any key closes it), then quit with F10 (y if asked)
keys F1
wait_for "keys | any key closes"
keys Escape
wait_gone "keys | any key closes"
keys Escape
wait_for "VIEW KEYS"
keys F10
for _ in $(seq 1 600); do
    alive || break
    screen | grep -q "y: stop and quit" && keys y
    sleep 0.1
done
alive && fail "lmlab did not quit"

json=$("$bin" --db "$dir/t.db" -c runs --json)
printf '%s\n' "$json" | grep -q '"id":1,.*"status":"finished","steps":300' ||
    { echo "run not recorded as finished: $json"; exit 1; }
[ ! -s "$dir/lmlab.log" ] || { echo "note: lmlab.log:"; cat "$dir/lmlab.log"; }
echo "e2e_dashboard: ok"
echo "1 passed, 0 failed"
