#!/usr/bin/env bash
# e2e_dashboard_follow.sh — the dashboard follows runs through the run store (issue 15):
# a run that a second process (`lmlab --db X train ...`) trains shows on the dashboard on
# the same store, its step advancing, marked "(followed)"; `status` reports it instead of
# "no run is training"; when that process stops the run, the dashboard shows it stopped;
# `attach ID` and `open ID` put a finished run on screen, replayed from the store
# ("(stored)", its curves and evaluations). Every wait polls the screen, or the lines
# the output pane got as --transcript keeps them (no fixed sleeps); --transcript to a path
# that cannot be written stops before the dashboard starts.
# Usage: e2e_dashboard_follow.sh LMLAB_BINARY. Exits 77 (skipped) without tmux.
set -eu
. "$(dirname "$0")/bounded.sh"   # bwait: every wait on a child is bounded
bin=$(readlink -f "$1")
command -v tmux >/dev/null || { echo "tmux not installed: skipped"; exit 77; }
dir=$(mktemp -d)
sock="lmlab-dfollow-$$"
bg=""
trap 'tmux -L "$sock" kill-server 2>/dev/null || true
      [ -n "$bg" ] && kill "$bg" 2>/dev/null || true
      for _ in 1 2 3 4 5 6 7 8 9 10; do rm -rf "$dir" 2>/dev/null && break; sleep 0.2; done' EXIT
cd "$dir"
export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8

tgt=t    # the tmux session the helpers look at
tr=$dir/t.txt   # its output pane's lines (--transcript)
screen() { tmux -L "$sock" capture-pane -p -t "$tgt"; }
fail() { echo "FAIL: $*"; echo "--- screen ---"; screen || true
         echo "--- the output pane's last lines ($tr) ---"; tail -n 40 "$tr" 2>/dev/null; exit 1; }
wait_for() { # wait_for TEXT [SECONDS]: TEXT anywhere on the screen
    for _ in $(seq 1 $(( ${2:-30} * 20 ))); do
        screen | grep -qF -- "$1" && return 0
        sleep 0.05
    done
    fail "expected '$1'"
}
keys() { tmux -L "$sock" send-keys -t "$tgt" "$@"; }
said() { # said TEXT [SECONDS]: TEXT among the output pane's lines, as --transcript keeps
    # them: a line that scrolled off the pane before a poll saw it is still there (the
    # pane holds 4 lines; a followed run's evaluations came at 20 a second in CI)
    for _ in $(seq 1 $(( ${2:-30} * 20 ))); do
        grep -qF -- "$1" "$tr" 2>/dev/null && return 0
        sleep 0.05
    done
    fail "expected the output pane to say '$1'"
}
status_bar() { screen | head -1; }
bar_step() { status_bar | sed -n 's/.* step \([0-9][0-9]*\)\/.*/\1/p'; }

# --transcript to a path that cannot be written: said, exit 2, no dashboard
tmux -L "$sock" new-session -d -s bad -x 120 -y 10 \
    "$bin --db $dir/f.db --transcript $dir/no/such/t.txt; echo \"exit \$?\"; sleep 60"
tgt=bad
wait_for "exit 2"
screen | grep -qF -- "--transcript $dir/no/such/t.txt: cannot open it for appending" ||
    fail "an unwritable transcript path is not named"
screen | grep -q "lmlab>" && fail "the dashboard started without its transcript"
tgt=t
tmux -L "$sock" new-session -d -s t -x 120 -y 40 "$bin --db $dir/f.db --transcript $tr"
tmux -L "$sock" set-option -t t window-size manual >/dev/null 2>&1 || true
tmux -L "$sock" kill-session -t bad
wait_for "lmlab>"
wait_for "IDLE"

# a second process trains on the same store: the dashboard follows it
"$bin" --db "$dir/f.db" train quick steps=2000000 >"$dir/bg.log" 2>&1 &
bg=$!
wait_for "(followed)" 60
said "another process's, followed through the run store" 60   # the follow's first line
first=$(bar_step)
[ -n "$first" ] || fail "no step on the status bar"
advanced=""
for _ in $(seq 1 600); do
    s=$(bar_step)
    if [ -n "$s" ] && [ "$s" -gt "$first" ]; then advanced=$s; break; fi
    sleep 0.05
done
[ -n "$advanced" ] || fail "the followed run's step stayed at $first"
status_bar | grep -qE "TRAINING|EVALUATING" || fail "the followed run does not show as training"
said "eval   step" 60          # its evaluations reach the scrollback as they are stored
echo "followed the other process's run: step $first -> $advanced"

# `status` in a third process reports it (not "no run is training")
st=$("$bin" --db "$dir/f.db" -c status)
echo "$st" | grep -q "^run #1 running" || fail "status does not report the other run: $st"
echo "$st" | grep -qF "(another process; followed from the run store)" ||
    fail "status does not say where the run is from: $st"

# the other process stops it (SIGTERM: stopped cleanly): the dashboard settles
kill -TERM "$bg"
bwait "$bg" 60 "the other process after SIGTERM" || true
bg=""
wait_for "STOPPED" 60
status_bar | grep -qE "TRAINING|EVALUATING" && fail "still TRAINING after the other process stopped"
wait_for "(stored)"

# two finished runs; attach and open replay them
"$bin" --db "$dir/f.db" -c "use quick; train steps=300 lr=0.002; wait" >/dev/null 2>&1 ||
    fail "a headless run failed"
"$bin" --db "$dir/f.db" -c "use quick; train steps=200 lr=0.004; wait" >/dev/null 2>&1 ||
    fail "a headless run failed"
keys -l "attach 2"
keys Enter
said "attached run #2"
grep -qxF "> attach 2" "$tr" || fail "the transcript lacks the typed command '> attach 2'"
wait_bar() { # wait_bar REGEX [SECONDS]: the status bar matches
    for _ in $(seq 1 $(( ${2:-30} * 20 ))); do
        status_bar | grep -qE -- "$1" && return 0
        sleep 0.05
    done
    fail "expected the status bar to match '$1'"
}
wait_bar "#2 .*\(stored\).*step 300/300"
wait_for "FINISHED"
screen | grep -q "val" || fail "no validation curve in the replay"
keys -l "open 3"
keys Enter
said "opened "
wait_bar "#3 .*\(stored\).*step 200/200"
wait_for "sample @ step"
echo "attach and open replayed finished runs"

# three runs compared at 80x24: validation curves and a readable diff (one row per
# setting, every run's value on it)
# (the new session first: killing the server's last session would end the server)
tmux -L "$sock" new-session -d -s u -x 80 -y 24 "$bin --db $dir/f.db --transcript $dir/u.txt"
tmux -L "$sock" set-option -t u window-size manual >/dev/null 2>&1 || true
tmux -L "$sock" kill-session -t t
tgt=u tr=$dir/u.txt
wait_for "lmlab>"
keys F3
wait_for "runs: 3"
keys Escape
wait_for "VIEW KEYS"
keys Space Down Space Down Space
wait_for "settings that differ"
for _ in $(seq 1 200); do
    screen | grep -q "│ *#[0-9] *#[0-9] *#[0-9]" && break
    sleep 0.05
done
screen | grep -q "│ *#[0-9] *#[0-9] *#[0-9]" || fail "the diff is not headed by the three runs"
keys '#'
wait_for "validation loss | smooth"
screen | grep -E "│lr +[0-9.e-]+ +[0-9.e-]+ +[0-9.e-]+" | grep -q "0.002" ||
    fail "no lr row with the three runs' values on one line"
screen | grep -E "│lr " | grep -q "0.004" || fail "the lr row lacks run 3's value"
keys '~'
wait_for "validation loss | smooth EMA 5"
echo "three runs compared at 80x24: validation curves, a readable diff"

# Issue 27 item 1: following resumes after the session's own sweep, and its own run, end.
keys Escape
keys -l "use quick"
keys Enter
keys -l "sweep base=quick lr=1e-3,3e-3 steps=60 name=sw"
keys Enter
# the sweep has ended, as the store says (which of its lines is still on screen depends on
# how fast its two trials ran: a line can scroll off before a screen poll sees it)
st=""
for _ in $(seq 1 600); do
    st=$(sqlite3 -cmd '.timeout 5000' "$dir/f.db" "SELECT status FROM sweeps WHERE id=1" 2>/dev/null)
    [ "$st" = finished ] && break
    sleep 0.2
done
[ "$st" = finished ] || fail "the session's sweep did not finish within 120 s (status '$st')"
quiet="eval_every=0 sample_every=0"   # the followed runs from here on: what they say is not tested
"$bin" --db "$dir/f.db" train quick steps=2000000 $quiet >"$dir/bg.log" 2>&1 &
bg=$!
wait_bar "#6 .*\(followed\)" 60   # the ended sweep's trial #5 no longer holds the screen
keys -l "attach"
keys Enter
said "following the newest running run: #6"
wait_bar "#6 .*\(followed\)"
kill -TERM "$bg"; bwait "$bg" 60 "the other process after SIGTERM" || true; bg=""
wait_bar "#6 .*STOPPED|STOPPED.*#6" 60
keys -l "train steps=40"
keys Enter
wait_bar "#7 " 60
wait_bar "FINISHED" 120
"$bin" --db "$dir/f.db" train quick steps=2000000 $quiet >"$dir/bg.log" 2>&1 &
bg=$!
wait_bar "#8 .*\(followed\)" 60   # after the session's own run ended
st=$("$bin" --db "$dir/f.db" -c status)
echo "$st" | grep -q "^run #8 running" || fail "status: $st"
kill -TERM "$bg"; bwait "$bg" 60 "the other process after SIGTERM" || true; bg=""
echo "following resumed after the session's own sweep and run"
