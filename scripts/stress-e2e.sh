#!/usr/bin/env bash
# Runs the whole test suite (meson test: unit, parity, commands, end to end, faults, MPI) N
# times in a row while two busy processes load the machine (a real lmlab training run and
# a CPU burner), and reports every failure and timeout by round. A test that fails here
# depends on the machine's speed: fix the test's synchronisation, never retry it.
#   scripts/stress-e2e.sh [N (default 3)] [meson test arguments, e.g. --suite e2e]
#   BUILD_DIR=build (default): configured and built first when needed.
set -uo pipefail
cd "$(dirname "$0")/.."
N=${1:-3}
shift $(( $# > 0 ? 1 : 0 ))
case "$N" in ''|*[!0-9]*) echo "usage: scripts/stress-e2e.sh [N] [meson test args]" >&2; exit 2 ;; esac
BUILD_DIR=${BUILD_DIR:-build}
[ -f "$BUILD_DIR/build.ninja" ] || meson setup "$BUILD_DIR" >/dev/null || exit 1
ninja -C "$BUILD_DIR" >/dev/null || { ninja -C "$BUILD_DIR"; exit 1; }
LMLAB=$(readlink -f "$BUILD_DIR/app/lmlab")
logs=$(mktemp -d /tmp/lmlab-stress-XXXXXX)
busy=$(mktemp -d /tmp/lmlab-busy-XXXXXX)

# Two busy processes for the whole run: training (store writes, checkpoints, threads)
# and a pure CPU burner.
( cd "$busy" && for _ in $(seq 1 100000); do   # bounded: killed by stop_busy
      "$LMLAB" --db busy.db train quick steps=1000000 batch=64 checkpoint_every=500 \
          runs_dir=runs >/dev/null 2>&1; rm -rf runs busy.db*; done ) &
train_pid=$!
( while :; do :; done ) &   # bounded: killed by stop_busy
burn_pid=$!
stop_busy() {
    local kids
    kids=$(pgrep -P "$train_pid")
    kill -9 "$burn_pid" "$train_pid" $kids 2>/dev/null
    wait 2>/dev/null   # bounded: the processes were just killed
    rm -rf "$busy"
}
trap stop_busy EXIT

failed=0
for i in $(seq 1 "$N"); do
    t0=$SECONDS
    meson test -C "$BUILD_DIR" --no-rebuild --print-errorlogs "$@" >"$logs/round$i.log" 2>&1
    cp "$BUILD_DIR/meson-logs/testlog.json" "$logs/round$i.json" 2>/dev/null
    ok=$(grep -c '"result": "OK"' "$logs/round$i.json" 2>/dev/null)
    bad=$(grep -cE '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$logs/round$i.json" 2>/dev/null)
    skip=$(grep -c '"result": "SKIP"' "$logs/round$i.json" 2>/dev/null)
    failed=$((failed + ${bad:-1}))
    echo "round $i/$N: ${ok:-0} passed, ${bad:-?} failed or timed out, ${skip:-0} skipped" \
         "in $((SECONDS - t0)) s (load $(cut -d' ' -f1-3 /proc/loadavg))"
    grep -E "^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT|ERROR)" "$logs/round$i.log" | sed 's/^/    /'
done
echo "--- the whole suite x $N rounds under load: $failed failures (logs: $logs)"
[ "$failed" -eq 0 ]
