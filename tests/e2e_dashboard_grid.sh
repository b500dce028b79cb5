#!/usr/bin/env bash
# e2e_dashboard_grid.sh — the grid view (issue 48) in a real terminal (tmux): a finished
# dispatcher run attached, key 8 shows small multiples of every series it has (the
# registry's names: step metrics, evaluations, system samples, gate/L/K); arrows pick one
# and Enter enlarges it with its unit and help, Enter again goes back; `/` sets a pattern
# (gate/* keeps the gates only); a pattern that matches nothing says so with the names
# the run has. Every wait polls the screen (no fixed sleeps). Usage:
# e2e_dashboard_grid.sh LMLAB_BINARY. Exits 77 (skipped) without tmux.
set -eu
bin=$(readlink -f "$1")
command -v tmux >/dev/null || { echo "tmux not installed: skipped"; exit 77; }
dir=$(mktemp -d)
sock="lmlab-dgrid-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true
      for _ in 1 2 3 4 5 6 7 8 9 10; do rm -rf "$dir" 2>/dev/null && break; sleep 0.2; done' EXIT
cd "$dir"
export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 LMLAB_SYSMETRICS_EVERY=0.2

screen() { tmux -L "$sock" capture-pane -p -t t; }
fail() { echo "FAIL: $*"; echo "--- screen ---"; screen || true; exit 1; }
wait_for() { # wait_for TEXT [SECONDS]: TEXT anywhere on the screen
    for _ in $(seq 1 $(( ${2:-30} * 20 ))); do
        screen | grep -qF -- "$1" && return 0
        sleep 0.05
    done
    fail "expected '$1'"
}
wait_gone() { # wait_gone TEXT [SECONDS]
    for _ in $(seq 1 $(( ${2:-30} * 20 ))); do
        screen | grep -qF -- "$1" || return 0
        sleep 0.05
    done
    fail "'$1' stayed on screen"
}
keys() { tmux -L "$sock" send-keys -t t "$@"; }

"$bin" --db "$dir/t.db" train quick steps=200 name=gridrun model=dispatcher >train.out 2>&1 ||
    { cat train.out; echo "FAIL: training"; exit 1; }

tmux -L "$sock" new-session -d -s t -x 120 -y 40 "$bin --db $dir/t.db"
wait_for "lmlab>"
keys -l "attach 1"
keys Enter
wait_for "attached run #1"
keys 8
wait_for "run #1  series *:"
for name in "loss" "val_loss" "grad_norm" "tokens_per_s" "best_val"; do
    screen | grep -qE "[┌┏] $name [─━]" || fail "no small chart titled $name"
done
echo "every series as a small chart"

keys Escape
wait_for "VIEW KEYS"
keys Right Right          # epoch, tokens, loss: the third
keys Enter
wait_for "loss [nats/token]: training loss (nats/token) (per step, last)"
keys Enter
wait_gone "loss [nats/token]: training loss"
screen | grep -qE "┏ loss ━" || fail "loss is no longer the picked chart after going back"
echo "arrows pick, Enter enlarges with unit and help, Enter goes back"

keys /
wait_for "series>"
keys BSpace
keys -l "gate/*"
keys Enter
wait_for "run #1  series gate/*: 10"
screen | grep -qE "[┌┏] loss [─━]" && fail "loss still shown under gate/*"
screen | grep -qE "[┌┏] gate/1/4 [─━]" || fail "gate/1/4 not shown under gate/*"
echo "a pattern keeps the matching series"

keys /
wait_for "series>"
for _ in 1 2 3 4 5 6; do keys BSpace; done
keys -l "grd/*"
keys Enter
wait_for "no series of run 1 matches 'grd/*'"
screen | grep -q "it has: epoch" || fail "the refusal does not name the run's series"
echo "a pattern that matches nothing says so"
