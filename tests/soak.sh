#!/usr/bin/env bash
# soak.sh — a long run (SOAK_MINUTES, default 30) with periodic checkpoints, evaluations
# and samples, watched by the dashboard in a tmux pseudo-terminal (headless when tmux or
# a terminal dashboard is unavailable). Samples the lmlab process's resident memory every
# SOAK_INTERVAL seconds (default 30) into rss.csv (seconds, rss_kb, step) and asserts it
# stays flat: the final value at most 1.2 x the value after warm-up (the first sample at
# or after max(60 s, a tenth of the run)). At the end the run is stopped and the store
# and checkpoints must be consistent. Usage: soak.sh LMLAB [CSV_OUT]. Kept out of the
# default test run: meson test -C build --setup soak --suite soak.
# Not a throughput benchmark (lmlab bench) and not a fault test (tests/e2e_faults.sh).
set -uo pipefail
. "$(dirname "$0")/bounded.sh"   # bwait: every wait on a child is bounded
L=$(realpath "$1")
CSV_OUT=${2:-${SOAK_CSV:-}}
MINUTES=${SOAK_MINUTES:-30}
INTERVAL=${SOAK_INTERVAL:-30}
W=$(mktemp -d /tmp/lmlab_soak_XXXXXX)
SOCK="lmlab-soak-$$"
trap 'tmux -L "$SOCK" kill-server 2>/dev/null; rm -rf "$W"' EXIT
cd "$W" || exit 1
DB=$W/soak.db
export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8
q() { sqlite3 -cmd '.timeout 5000' "$DB" "$1"; }
fail() { echo "FAIL: $*"; exit 1; }

# A realistic small workload: ~100-200 steps/s here, an eval, a sample and a checkpoint
# every 500 steps, a metric row every 10.
RUN="steps=100000000 batch=32 bptt=64 log_every=10 eval_every=500 eval_batches=20
     sample_every=500 sample_tokens=100 checkpoint_every=500 runs_dir=$W/runs"
RUN=$(echo $RUN)

MODE=headless
if command -v tmux >/dev/null; then
    MODE=dashboard
    tmux -L "$SOCK" new-session -d -s s -x 120 -y 40 "exec $L --db $DB"
    for _ in $(seq 1 100); do
        tmux -L "$SOCK" capture-pane -p -t s 2>/dev/null | grep -q "lmlab>" && break
        sleep 0.1
    done
    tmux -L "$SOCK" capture-pane -p -t s | grep -q "lmlab>" || MODE=headless
fi
if [ $MODE = dashboard ]; then
    tmux -L "$SOCK" send-keys -t s "use quick" Enter
    sleep 0.5
    tmux -L "$SOCK" send-keys -t s "train $RUN" Enter
    PID=$(tmux -L "$SOCK" list-panes -t s -F '#{pane_pid}')
else
    tmux -L "$SOCK" kill-server 2>/dev/null
    "$L" --db "$DB" train quick $RUN >run.log 2>&1 &
    PID=$!
fi
echo "soak: $MINUTES min, $MODE, pid $PID, RSS every $INTERVAL s"

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$PID/status" 2>/dev/null; }
echo "seconds,rss_kb,step" >rss.csv
T0=$(date +%s)
END=$((T0 + MINUTES * 60))
while :; do   # bounded: breaks at END (MINUTES from now)
    now=$(date +%s)
    kill -0 "$PID" 2>/dev/null || fail "lmlab died after $((now - T0)) s"
    r=$(rss_kb)
    s=$(q "SELECT coalesce(max(last_step),0) FROM runs" 2>/dev/null || echo "?")
    echo "$((now - T0)),$r,$s" >>rss.csv
    echo "  t=$((now - T0))s rss=${r}kB step=$s"
    [ "$now" -ge "$END" ] && break
    sleep $((INTERVAL < END - now ? INTERVAL : END - now))
done
[ -n "$CSV_OUT" ] && cp rss.csv "$CSV_OUT"

# stop the run cleanly
if [ $MODE = dashboard ]; then
    tmux -L "$SOCK" send-keys -t s "stop" Enter
    for _ in $(seq 1 300); do
        [ "$(q 'SELECT status FROM runs WHERE id=1')" != running ] && break
        sleep 0.1
    done
    tmux -L "$SOCK" send-keys -t s Escape q
    sleep 0.5
    tmux -L "$SOCK" send-keys -t s y
else
    kill -TERM "$PID"
    bwait "$PID" 300 "lmlab after SIGTERM"
fi
sleep 1

# memory: flat after warm-up
warm_at=$((MINUTES * 6 > 60 ? MINUTES * 6 : 60))
warm=$(awk -F, -v w="$warm_at" 'NR > 1 && $1 >= w {print $2; exit}' rss.csv)
final=$(tail -1 rss.csv | cut -d, -f2)
[ -n "$warm" ] || warm=$(sed -n 2p rss.csv | cut -d, -f2)
echo "RSS after warm-up ($warm_at s): $warm kB, final: $final kB"
[ "$final" -le $((warm * 12 / 10)) ] || fail "RSS grew from $warm kB to $final kB (> 1.2x)"

# store and checkpoints
status=$(q "SELECT status FROM runs WHERE id=1")
[ "$status" == stopped ] || fail "run status '$status', expected stopped"
[ "$(q 'PRAGMA integrity_check')" == ok ] || fail "integrity_check"
[ "$(q 'SELECT count(*) - count(DISTINCT step) FROM metrics')" == 0 ] || fail "duplicated metric rows"
evals=$(q "SELECT count(*) FROM evals WHERE run_id=1")
samples=$(q "SELECT count(*) FROM samples WHERE run_id=1")
ckpts=$(q "SELECT count(*) FROM checkpoints WHERE run_id=1")
echo "run: $(q 'SELECT last_step FROM runs WHERE id=1') steps, $evals evals, $samples samples, $ckpts checkpoints recorded"
[ "$evals" -gt 0 ] && [ "$samples" -gt 0 ] && [ "$ckpts" -gt 0 ] || fail "missing evals/samples/checkpoints"
rdir=$(ls -d runs/run-1 runs/run-1-* 2>/dev/null | head -1)
newest=$(ls "$rdir" | grep -E '^step-[0-9]+\.safetensors$' | sort | tail -1)
[ -n "$newest" ] || fail "no checkpoint file"
"$L" --db "$DB" -c "open $rdir/$newest; sample tokens=20" >open.log 2>&1 || { cat open.log; fail "newest checkpoint $newest does not load"; }
[ -f "$rdir/best.safetensors" ] || fail "no best.safetensors"
echo "soak: ok ($newest loads)"
