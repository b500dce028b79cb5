#!/usr/bin/env bash
# Runs the end-to-end terminal tests (tests/e2e_*.sh; e2e_faults only with FAULTS=1, it
# takes minutes) N times each while two busy processes load the machine (a real lmlab
# training run and a CPU burner), and reports the failures. A test that fails here
# depends on the machine's speed: fix the test's synchronisation, never retry it.
#   scripts/stress-e2e.sh [N (default 20)]      LMLAB=path/to/lmlab (default build/app/lmlab)
set -uo pipefail
cd "$(dirname "$0")/.."
N=${1:-20}
LMLAB=$(readlink -f "${LMLAB:-build/app/lmlab}")
[ -x "$LMLAB" ] || { echo "build lmlab first (scripts/test.sh)" >&2; exit 2; }
tests=()
for t in tests/e2e_*.sh; do
    [[ $t == *e2e_faults.sh && -z "${FAULTS:-}" ]] && continue
    tests+=("$t")
done
logs=$(mktemp -d /tmp/lmlab-stress-XXXXXX)
busy=$(mktemp -d /tmp/lmlab-busy-XXXXXX)

# Two busy processes for the whole run: training (store writes, checkpoints, threads)
# and a pure CPU burner.
( cd "$busy" && while :; do "$LMLAB" --db busy.db train quick steps=1000000 batch=64 \
      checkpoint_every=500 runs_dir=runs >/dev/null 2>&1; rm -rf runs busy.db*; done ) &
train_pid=$!
( while :; do :; done ) &
burn_pid=$!
stop_busy() {
    local kids
    kids=$(pgrep -P "$train_pid")
    kill -9 "$burn_pid" "$train_pid" $kids 2>/dev/null
    wait 2>/dev/null
    rm -rf "$busy"
}
trap stop_busy EXIT

declare -A fails
total=0 failed=0
for i in $(seq 1 "$N"); do
    for t in "${tests[@]}"; do
        name=$(basename "$t" .sh)
        total=$((total + 1))
        if bash "$t" "$LMLAB" >"$logs/$name.$i.log" 2>&1; then
            rm -f "$logs/$name.$i.log"
        else
            failed=$((failed + 1))
            fails[$name]="${fails[$name]:-} $i"
            echo "round $i: $name FAILED (log: $logs/$name.$i.log)"
        fi
    done
    echo "round $i/$N done ($(cut -d' ' -f1-3 /proc/loadavg) load)"
done
echo "--- ${#tests[@]} end-to-end tests x $N rounds under load"
for t in "${tests[@]}"; do
    name=$(basename "$t" .sh)
    f=${fails[$name]:-}
    echo "$name: $((N - $(echo $f | wc -w))) of $N passed${f:+ (failed in rounds:$f)}"
done
echo "$((total - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
