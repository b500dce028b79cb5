#!/usr/bin/env bash
# e2e_sweep_parallel.sh — parallel sweeps against the real lmlab binary (issue 17):
#   1. `sweep ... parallel=2` (worker processes sharing the store) on a tiny grid records
#      every trial once, each with the losses the one-by-one sweep gives it (1e-6 rel,
#      threads=1)
#   2. successive halving with parallel=2: the same survivors (statuses, steps) and losses
#   3. a parallel sweep stopped part-way and resumed ends as the uninterrupted one (1e-3);
#      a worker killed with kill -9 leaves its trial interrupted and the sweep resumable
#   4. bad input: parallel=0, parallel=x, parallel=ranks without mpirun
#   5. under `mpirun --oversubscribe -np 2` with parallel=ranks: grid and halving as in 1
#      and 2, stop and resume as in 3, rank 1 prints nothing, and a data-parallel `train`
#      still works afterwards
#      (skipped when mpirun is absent or lmlab was built without MPI)
# Usage: e2e_sweep_parallel.sh LMLAB. No timing assertions.
set -uo pipefail
. "$(dirname "$0")/e2e_lib.sh"   # ok, bad, check and FAILS
. "$(dirname "$0")/bounded.sh"   # bwait: every wait on a child is bounded
L=$(realpath "$1")
W=$(mktemp -d /tmp/lmlab_psweep_XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
cd "$W" || exit 1
q() { sqlite3 -cmd '.timeout 5000' "$1" "$2"; }
# trials FILE: one line per trial of `sweep show`'s JSON: "trial status steps best final"
trials() {
    grep '"event":"sweep_trial"' "$1" | sed -E 's/.*"trial":([0-9]+).*"status":"([^"]*)","steps":([0-9]+).*/\1|\2|\3/' |
        tr ' |' '_ ' >"$1.a"
    grep '"event":"sweep_trial"' "$1" | while read -r l; do
        b=$(sed -nE 's/.*"best_val":([-0-9.eE+]+).*/\1/p' <<<"$l"); f=$(sed -nE 's/.*"final_val":([-0-9.eE+]+).*/\1/p' <<<"$l")
        echo "${b:-nan} ${f:-nan}"; done >"$1.b"
    paste -d' ' "$1.a" "$1.b" | sort -n
}
# same A B TOL: the same trials, statuses and steps, losses within TOL relative
same() {
    paste -d' ' <(trials "$1") <(trials "$2") | awk -v t="$3" '
        { n++; if ($1 != $6 || $2 != $7 || $3 != $8) { print "     trial " $1 ": " $2 "/" $3 " vs " $7 "/" $8; bad++ }
          for (k = 4; k <= 5; k++) { a = $k; b = $(k + 5); if (a == "nan" && b == "nan") continue;
              d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b;
              if (a == "nan" || b == "nan" || d > t * m) { print "     trial " $1 ": " a " vs " b; bad++ } } }
        END { if (n == 0) { print "     no trials"; exit 1 } exit bad > 0 }'
}
GRID="base=quick steps=40 lr=1e-3,3e-3 d=32,48 threads=1 runs_dir=runs name=g"
HALV="base=quick strategy=halving steps=60 min_steps=20 eta=2 lr=1e-3,2e-3,3e-3,5e-3 threads=1 runs_dir=runs name=h"
# finished FILE: the sweep ended as finished (else the lines that say why are shown)
finished() {
    grep -q '"event":"sweep_end".*"status":"finished"' "$1" && return 0
    grep -E 'sweep_end|error|lmlab rank|rror' "$1" | cut -c1-300 | sed 's/^/     /'; return 1
}
run() { local dir=$1; shift; mkdir -p "$dir"; (cd "$dir" && timeout 300 "$@"); }
sweep() { echo "sweep $1; sweep wait; sweep show"; }

# 1. grid
run s1 "$L" --json --db a.db -c "$(sweep "$GRID")" >s1.txt 2>&1
run p1 "$L" --json --db a.db -c "$(sweep "$GRID parallel=2")" >p1.txt 2>&1
check "grid parallel=2: finished" finished p1.txt
check "grid parallel=2: 4 trials done" [ "$(q p1/a.db "select count(*) from sweep_trials where status='done'")" == 4 ]
check "grid parallel=2: one run per trial" [ "$(q p1/a.db "select count(*) || '/' || count(distinct name) from runs")" == 4/4 ]
check "grid parallel=2: every run finished" [ "$(q p1/a.db "select count(*) from runs where status='finished'")" == 4 ]
check "grid parallel=2: each trial as the one-by-one sweep (1e-6)" same p1.txt s1.txt 1e-6

# 2. halving
run s2 "$L" --json --db a.db -c "$(sweep "$HALV")" >s2.txt 2>&1
run p2 "$L" --json --db a.db -c "$(sweep "$HALV parallel=2")" >p2.txt 2>&1
check "halving: some trials stopped early (the test means something)" grep -q '"status":"stopped early at step 20"' s2.txt
check "halving parallel=2: same survivors and losses (1e-6)" same p2.txt s2.txt 1e-6
check "halving parallel=2: one run per trial" [ "$(q p2/a.db "select count(*) from runs")" == 4 ]

# 3. stop part-way, resume
LONG="base=quick steps=4000 checkpoint_every=100 lr=1e-3,3e-3 threads=1 runs_dir=runs name=l"
# waits (at most 60 s) until a trial of the sweep in store $1 has its first checkpoint: the
# stop then comes part-way whatever the machine's speed (a fixed sleep let a fast machine
# finish the sweep first, and hid that a sweep typed at a piped prompt started no worker
# until the next line came), 39 checkpoints before its end
until_checkpoint() {
    for _ in $(seq 1 300); do
        [ "$(q "$1" "select count(*) from checkpoints" 2>/dev/null || echo 0)" -ge 1 ] && return
        sleep 0.2
    done
}
run s3 "$L" --json --db a.db -c "$(sweep "$LONG")" >s3.txt 2>&1
mkdir -p p3 && (cd p3 && { echo "sweep $LONG parallel=2"; until_checkpoint a.db; echo "sweep stop"; } |
    timeout 300 "$L" --json --db a.db >a.txt 2>&1)
check "stopped: the sweep is stored as stopped" [ "$(q p3/a.db "select status from sweeps where id=1")" == stopped ]
check "stopped part-way: its trials had started (a checkpoint)" [ "$(q p3/a.db "select count(*) from checkpoints")" -ge 1 ]
check "stopped: no worker left behind" bash -c "! pgrep -f '^$L --db a.db -c sweep worke[r]=1 ' >/dev/null"
(cd p3 && timeout 300 "$L" --json --db a.db -c "sweep resume 1; sweep wait; sweep show" >b.txt 2>&1)
check "resumed: finished" finished p3/b.txt
check "resumed: still one run per trial" [ "$(q p3/a.db "select count(*) from runs")" == 2 ]
check "resumed: ends as the uninterrupted sweep (1e-3)" same p3/b.txt s3.txt 1e-3

# 3b. a worker killed with kill -9 once its trial has a checkpoint: the trial and its run
#     are interrupted (not failed), the sweep ends `interrupted`, and `sweep resume`
#     continues the trial as the same run and ends as the uninterrupted sweep
KILL="base=quick steps=1000 checkpoint_every=100 lr=1e-3,3e-3 threads=1 runs_dir=runs name=k"
run s6 "$L" --json --db a.db -c "$(sweep "$KILL")" >s6.txt 2>&1
mkdir -p p6 && cd p6 && {
    timeout 300 "$L" --json --db a.db -c "$(sweep "$KILL parallel=2")" >a.txt 2>&1 &
    lp=$! w= killed= sess=
    # Until trial 1 has a checkpoint (this sweep's own worker). The worker is frozen (SIGSTOP)
    # while the store is read, so the trial cannot end between the read and the kill (its
    # 1000 steps take about a second: a poll that read the checkpoint and then killed could
    # land after the trial's end, and a poll slower than the trial never saw the worker and
    # spun its 300 s); once seen it trains only in the 20 ms between two polls.
    end=$((SECONDS + 120))
    for _ in $(seq 1 6000); do   # bounded: 120 s (SECONDS), well under the test's 300
        [ $SECONDS -lt $end ] || break
        [ -n "$sess" ] || sess=$(pgrep -P $lp -x lmlab)   # the session under timeout
        w=$([ -n "$sess" ] && pgrep -P "$sess" -f "trial=1 ")
        if [ -n "$w" ] && kill -STOP $w 2>/dev/null; then
            c=$(q a.db "select count(*) from checkpoints c join sweep_trials t on t.run_id = c.run_id where t.trial = 1" 2>/dev/null)
            if [ "${c:-0}" -ge 1 ]; then kill -9 $w && killed=$w; break; fi
            kill -CONT $w
        fi
        kill -0 $lp 2>/dev/null || break   # the sweep ended: trial 1 was never caught
        sleep 0.02
    done
    [ -n "$killed" ] || echo "     trial 1's worker was not killed: no worker with a checkpoint within 120 s (found '${w}')"
    bwait $lp 320 "the sweep whose worker was killed"; cd ..; }
check "killed worker: trial 1's worker was killed once its trial had a checkpoint" [ -n "$killed" ]
check "killed worker: its trial is interrupted, not failed" [ "$(q p6/a.db "select status from sweep_trials where trial=1")" == interrupted ]
check "killed worker: its run is interrupted, saying why" bash -c "sqlite3 p6/a.db \"select r.status || ': ' || r.reason from runs r join sweep_trials t on t.run_id = r.id where t.trial=1\" | grep -q '^interrupted: its worker process was killed by signal 9'"
check "killed worker: the sweep is interrupted (resumable), not finished" [ "$(q p6/a.db "select status from sweeps where id=1")" == interrupted ]
check "killed worker: the other trial finished" [ "$(q p6/a.db "select status from sweep_trials where trial=2")" == done ]
(cd p6 && timeout 300 "$L" --json --db a.db -c "sweep resume 1; sweep wait; sweep show" >b.txt 2>&1)
check "killed worker, resumed: finished" finished p6/b.txt
check "killed worker, resumed: still one run per trial" [ "$(q p6/a.db "select count(*) from runs")" == 2 ]
check "killed worker, resumed: ends as the uninterrupted sweep (1e-3)" same p6/b.txt s6.txt 1e-3

# 4. bad input
"$L" --db x.db -c "sweep base=quick lr=1e-3 parallel=0" >b1.txt 2>&1
check "parallel=0 refused with the range" grep -q "parallel=0: expected how many trials" b1.txt
"$L" --db x.db -c "sweep base=quick lr=1e-3 parallel=x" >b2.txt 2>&1
check "parallel=x refused" grep -q "or ranks (one per rank under mpirun)" b2.txt
"$L" --db x.db -c "sweep base=quick lr=1e-3 parallel=ranks" >b3.txt 2>&1
check "parallel=ranks without mpirun refused" grep -q "start lmlab with .mpirun -np N" b3.txt
check "nothing recorded for refused sweeps" [ "$(q x.db "select count(*) from sweeps" 2>/dev/null || echo 0)" == 0 ]

# 5. under mpirun
export OMPI_MCA_plm=isolated OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPI=(mpirun --allow-run-as-root --oversubscribe -np 2 "$L")
M() { timeout 300 "${MPI[@]}" "$@"; }
if ! command -v mpirun >/dev/null; then
    echo "skip mpirun not found: the MPI part is skipped"
elif M --version 2>&1 | grep -q "built without MPI"; then
    echo "skip this lmlab was built without MPI: the MPI part is skipped"
else
    run m1 "${MPI[@]}" --json --db a.db -c "$(sweep "$GRID parallel=ranks"); use quick; train steps=5 threads=1 runs_dir=runs; wait" >m1.txt 2>&1
    check "mpirun grid: finished" finished m1.txt
    check "mpirun grid: one run per trial" [ "$(q m1/a.db "select count(*) || '/' || count(distinct name) from runs where sweep_id=1")" == 4/4 ]
    check "mpirun grid: each trial as the one-by-one sweep (1e-6)" same m1.txt s1.txt 1e-6
    check "mpirun: rank 1 prints nothing (one line each for the sweep and the run started)" \
        [ "$(grep -c '"action":"started"' m1.txt)" == 2 ]
    check "mpirun: no rank reported a failure" bash -c "! grep -q 'lmlab rank' m1.txt"
    check "mpirun: a data-parallel train after the sweep (ranks back to serving)" \
        bash -c "q() { sqlite3 -cmd '.timeout 5000' \"\$@\"; }; q m1/a.db \"select machine from runs where sweep_id is null or sweep_id=0\" | grep -q 'mpi 2 ranks'"
    run m2 "${MPI[@]}" --json --db a.db -c "$(sweep "$HALV parallel=ranks")" >m2.txt 2>&1
    check "mpirun halving: same survivors and losses (1e-6)" same m2.txt s2.txt 1e-6
    mkdir -p m3 && (cd m3 && { echo "sweep $LONG parallel=ranks"; until_checkpoint a.db; echo "sweep stop"; } |
        timeout 300 "${MPI[@]}" --json --db a.db >a.txt 2>&1)
    check "mpirun stopped: stored as stopped" [ "$(q m3/a.db "select status from sweeps where id=1")" == stopped ]
    check "mpirun stopped part-way: its trials had started (a checkpoint)" [ "$(q m3/a.db "select count(*) from checkpoints")" -ge 1 ]
    (cd m3 && timeout 300 "${MPI[@]}" --json --db a.db -c "sweep resume 1; sweep wait; sweep show" >b.txt 2>&1)
    check "mpirun resumed: finished" finished m3/b.txt
    check "mpirun resumed: ends as the uninterrupted sweep (1e-3)" same m3/b.txt s3.txt 1e-3
fi

echo "$FAILS failed"
[ $FAILS == 0 ]
