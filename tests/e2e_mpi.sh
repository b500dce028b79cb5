#!/usr/bin/env bash
# e2e_mpi.sh — data-parallel training over MPI against the real lmlab binary, 2 processes
# on this machine (mpirun --oversubscribe, no ssh: plm isolated, shared-memory btl):
#   1. first-step parity: loss and gradient norm of `-np 2` equal one process's (1e-6 rel)
#   2. 200 steps: final training and validation loss equal one process's (1e-3 rel)
#      and the periodic evaluation, shared by the ranks, equals one process's (1e-6)
#   2b. with dropout (elements and Dispatcher levels): one process with 2 threads and
#      -np 2 with one thread each agree after 1 step (1e-6) and 100 steps (1e-3), since
#      masks follow the global step and row, not the split
#   3. the store: one run, its machine field names the 2 ranks; rank 1 prints nothing
#   4. checkpoint and resume across N: stopped under -np 2, resumed by one process; and
#      stopped by one process, resumed under -np 2; both end where an uninterrupted run
#      ends (1e-3 rel)
#   5. bad input: batch smaller than the process count is refused on every rank, no hang
#   6. a rank killed mid-run ends the whole job (MPI aborts it), no hang; the run resumes
#   7. `--dashboard` under mpirun (tmux): rank 0 draws on the terminal mpirun runs in,
#      takes keys through mpirun (Ctrl-C included: it does not end the job), trains a run
#      that finishes, and quits cleanly; a waiting
#      rank sleeps (under 10% of a core while the dashboard is idle)
# Exits 77 (skipped) when mpirun is absent or lmlab was built without MPI.
# Usage: e2e_mpi.sh LMLAB. No timing assertions.
set -uo pipefail
. "$(dirname "$0")/e2e_lib.sh"   # ok, bad, check and FAILS
. "$(dirname "$0")/bounded.sh"   # bwait: every wait on a child is bounded
L=$(realpath "$1")
command -v mpirun >/dev/null || { echo "mpirun not found: skipped (apt-get install openmpi-bin)"; exit 77; }
W=$(mktemp -d /tmp/lmlab_mpi_XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
cd "$W" || exit 1
export OMPI_MCA_plm=isolated OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
M() { local n=$1; shift; timeout 300 mpirun --oversubscribe -np "$n" "$L" "$@"; }
# field KEY FILE [EVENT]: the value of "KEY" in the last JSON line of event EVENT (step)
field() { grep "\"event\":\"${3:-step}\"" "$2" | tail -1 | sed -E "s/.*\"$1\":([-0-9.eE+]+).*/\1/"; }
# close A B TOL: |A-B| <= TOL*|B| (and both are numbers)
close() {
    awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { if (a == "" || b == "") exit 1;
        d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b;
        if (d <= t * m) exit 0; printf "     %s vs %s: off by %.3g (tolerance %g rel)\n", a, b, d / m, t; exit 1 }'
}
q() { sqlite3 -cmd '.timeout 5000' "$1" "$2"; }

M 2 --version >probe.txt 2>&1
if grep -q "built without MPI" probe.txt; then
    echo "this lmlab was built without MPI: skipped (meson setup -Dmpi=enabled with libopenmpi-dev)"
    exit 77
fi
COMMON="threads=1 log_every=1 runs_dir=runs"
M 2 --version >v.txt 2>&1; VRC=$?
M 2 --db sm.db -c "show machine" >sm.txt 2>&1
check "show machine under mpirun names the process group" grep -q "^machine .*; mpi 2 ranks on " sm.txt
check "--version under mpirun: exit 0, no 'exiting improperly' notice" \
    bash -c "[ $VRC == 0 ] && grep -q '^lmlab ' v.txt && ! grep -q improperly v.txt"

# 1. first step
mkdir s1 p1
(cd s1 && "$L" --json --db a.db train quick steps=1 $COMMON >out.txt 2>&1)
(cd p1 && M 2 --json --db a.db train quick steps=1 $COMMON >out.txt 2>&1)
check "first step: loss, one process vs -np 2 (1e-6)" close "$(field loss p1/out.txt)" "$(field loss s1/out.txt)" 1e-6
check "first step: gradient norm, one process vs -np 2 (1e-6)" close "$(field grad_norm p1/out.txt)" "$(field grad_norm s1/out.txt)" 1e-6

# 2. 200 steps
mkdir s2 p2
(cd s2 && "$L" --json --db a.db train quick steps=200 $COMMON >out.txt 2>&1)
(cd p2 && M 2 --json --db a.db train quick steps=200 $COMMON >out.txt 2>&1)
check "200 steps: training loss (1e-3)" close "$(field loss p2/out.txt)" "$(field loss s2/out.txt)" 1e-3
check "200 steps: validation loss (1e-3)" close "$(field final_val p2/out.txt end)" "$(field final_val s2/out.txt end)" 1e-3
check "200 steps: -np 2 finished" grep -q '"status":"finished"' p2/out.txt
# the periodic evaluation at step 100 (5 random batches) is shared by the ranks: each
# forwards its share and the sums are reduced; same windows, so the same loss
ev100() { grep '"event":"eval","step":100,' "$1" | sed -E "s/.*\"$2\":([-0-9.eE+]+).*/\1/"; }
check "step-100 evaluation shared by 2 ranks: same loss (1e-6)" close "$(ev100 p2/out.txt loss)" "$(ev100 s2/out.txt loss)" 1e-6
# the final whole-split evaluation is shared too: compared on the same weights (lr 1e-9,
# so 20 steps move no weight by more than rounding; after 200 real steps the two runs'
# weights differ by the summation order of their gradients, which depends on the CPU)
mkdir s3 p3
(cd s3 && "$L" --json --db a.db train quick steps=20 lr=1e-9 $COMMON >out.txt 2>&1)
(cd p3 && M 2 --json --db a.db train quick steps=20 lr=1e-9 $COMMON >out.txt 2>&1)
check "final whole-split evaluation shared by 2 ranks: same loss (1e-6)" close "$(field final_val p3/out.txt end)" "$(field final_val s3/out.txt end)" 1e-6

# 2b. dropout does not depend on N (nor on the thread count)
mkdir d1 d2
(cd d1 && "$L" --json --db a.db train quick steps=100 dropout=0.3 threads=2 log_every=1 runs_dir=runs >out.txt 2>&1)
(cd d2 && M 2 --json --db a.db train quick steps=100 dropout=0.3 $COMMON >out.txt 2>&1)
first() { grep '"event":"step"' "$2" | head -1 | sed -E "s/.*\"$1\":([-0-9.eE+]+).*/\1/"; }
check "dropout 0.3, first step: loss, 2 threads vs -np 2 (1e-6)" close "$(first loss d2/out.txt)" "$(first loss d1/out.txt)" 1e-6
check "dropout 0.3, 100 steps: training loss (1e-3)" close "$(field loss d2/out.txt)" "$(field loss d1/out.txt)" 1e-3
check "dropout 0.3, 100 steps: validation loss (1e-3)" close "$(field final_val d2/out.txt end)" "$(field final_val d1/out.txt end)" 1e-3

# 3. the store and the output
check "one run recorded" [ "$(q p2/a.db 'select count(*) from runs')" == 1 ]
check "the store names the ranks" bash -c "sqlite3 p2/a.db 'select machine from runs' | grep -q 'mpi 2 ranks on'"
check "one 'run started' line (rank 1 prints nothing)" [ "$(grep -c '"run":1,"action":"started"' p2/out.txt)" == 1 ]
check "checkpoints written once, by rank 0" bash -c "ls p2/runs/run-1-*/best.safetensors >/dev/null"

# 4. stop, then resume with another N
mkdir r1 r2
(cd r1 && M 2 --json --db a.db -c "use quick; train steps=120 $COMMON; stop" >a.txt 2>&1;
 "$L" --json --db a.db -c "train resume=1 threads=1; wait" >b.txt 2>&1)
(cd r2 && "$L" --json --db a.db -c "use quick; train steps=120 $COMMON; stop" >a.txt 2>&1;
 M 2 --json --db a.db -c "train resume=1 threads=1; wait" >b.txt 2>&1)
mkdir s4 && (cd s4 && "$L" --json --db a.db train quick steps=120 $COMMON >out.txt 2>&1)
check "stopped under -np 2 with a checkpoint" bash -c "ls r1/runs/run-1-*/step-*.safetensors >/dev/null"
check "resumed by one process: finished" grep -q '"status":"finished"' r1/b.txt || show r1/a.txt r1/b.txt
check "resumed by one process: ends where an uninterrupted run ends" close "$(field final_val r1/b.txt end)" "$(field final_val s4/out.txt end)" 1e-3
check "resumed under -np 2: finished" grep -q '"status":"finished"' r2/b.txt || show r2/a.txt r2/b.txt
check "resumed under -np 2: ends where an uninterrupted run ends" close "$(field final_val r2/b.txt end)" "$(field final_val s4/out.txt end)" 1e-3
check "resumed under -np 2: still one run" [ "$(q r2/a.db 'select count(*) from runs')" == 1 ]

# 5. batch below the process count
mkdir b5 && (cd b5 && M 2 --db a.db train quick batch=1 $COMMON >out.txt 2>&1; echo $? >rc)
check "batch=1 on 2 ranks: refused with a reason" grep -q "smaller than the 2 processes" b5/out.txt
check "batch=1 on 2 ranks: said once" [ "$(grep -c 'smaller than the 2' b5/out.txt)" == 1 ]
check "batch=1 on 2 ranks: non-zero exit" [ "$(cat b5/rc)" != 0 ]

# 6. kill rank 1 mid-run: the job ends (it does not hang)
mkdir k6 && cd k6
timeout 300 mpirun --oversubscribe -np 2 "$L" --db a.db train quick steps=100000 $COMMON checkpoint_every=50 >out.txt 2>&1 &
MP=$!
for _ in $(seq 1500); do ls runs/run-1-*/step-*.safetensors >/dev/null 2>&1 && break; sleep 0.2; done
R1=""
for p in $(pgrep -f "$L"); do
    tr '\0' '\n' </proc/$p/environ 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1' && R1=$p
done
[ -n "$R1" ] && kill -9 "$R1"
bwait $MP 320 "mpirun after its rank 1 was killed"; KRC=$?
cd ..
check "rank 1 found and killed" [ -n "$R1" ]
check "the job ended with an error, not a hang (exit $KRC)" bash -c "[ $KRC != 0 ] && [ $KRC != 124 ]"
check "the run kept its checkpoint" bash -c "ls k6/runs/run-1-*/step-*.safetensors >/dev/null"
P0=$(q k6/a.db 'select pid from runs where id=1')   # rank 0 may still be on its way out
for _ in $(seq 1200); do kill -0 "$P0" 2>/dev/null || break; sleep 0.1; done
check "the killed run shows as interrupted" bash -c "'$L' --db k6/a.db -c runs | grep -q ' interrupted '"
LAST=$(ls k6/runs/run-1-*/ | sed -nE 's/^step-0*([0-9]+)\.safetensors$/\1/p' | sort -n | tail -1)
END=$((${LAST:-0} + 50))
(cd k6 && M 2 --json --db a.db -c "train resume=1 steps=$END; wait" >b.txt 2>&1)
check "the killed run resumed under -np 2 from step $LAST and finished" \
    grep -q "\"status\":\"finished\",\"reason\":\"finished $END steps after " k6/b.txt
check "the killed run is still one run" [ "$(q k6/a.db 'select count(*) from runs')" == 1 ]

# 7. the dashboard under mpirun
if command -v tmux >/dev/null; then
    mkdir t7
    SOCK="lmlab-mpi-$$"
    export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8
    tmux -L "$SOCK" new-session -d -s t -x 150 -y 45 \
        "cd $W/t7 && timeout --foreground 300 mpirun --oversubscribe -np 2 $L --dashboard --db a.db; echo EXIT=\$? >exit.txt; sleep 60"
    screen() { tmux -L "$SOCK" capture-pane -p -t t; }
    until_screen() { for _ in $(seq 1200); do screen | grep -qF -- "$1" && return 0; sleep 0.1; done; return 1; }
    check "dashboard under mpirun: drawn on the terminal" until_screen "1 training"
    tmux -L "$SOCK" send-keys -t t "use quick" Enter
    until_screen "experiment quick" || true
    tmux -L "$SOCK" send-keys -t t "train steps=300 threads=1" Enter
    check "dashboard under mpirun: the run finishes" until_screen "FINISHED"
    sleep 1
    # CPU seconds (utime + stime) each process uses in 3 s of idling: a rank that spins in
    # a blocking broadcast uses most of them; one that sleeps between polls nearly none
    cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
    PIDS=$(pgrep -f "$L --dashboard --db a.db")
    declare -A T0
    for p in $PIDS; do T0[$p]=$(cpu_ticks "$p"); done
    sleep 3
    BUSY=0
    HZ=$(getconf CLK_TCK)
    for p in $PIDS; do
        used=$(( $(cpu_ticks "$p") - ${T0[$p]} ))
        echo "     pid $p used $used ticks (of $((3 * HZ)) in 3 s) while idle"
        [ $used -gt $((3 * HZ / 10)) ] && BUSY=1
    done
    check "dashboard under mpirun: idle ranks do not spin" [ $BUSY == 0 ]
    tmux -L "$SOCK" send-keys -t t C-c   # reaches the dashboard, not mpirun (raw mode)
    sleep 2
    check "dashboard under mpirun: Ctrl-C does not end the job" [ ! -s t7/exit.txt ]
    tmux -L "$SOCK" send-keys -t t "quit" Enter
    for _ in $(seq 300); do [ -s t7/exit.txt ] && break; sleep 0.1; done
    check "dashboard under mpirun: quit ends the job (exit 0)" grep -qx "EXIT=0" t7/exit.txt ||
        { show t7/exit.txt; screen | tail -12 | sed 's/^/     | /'; }
    check "dashboard under mpirun: the run is recorded once, finished, on 2 ranks" \
        [ "$(q t7/a.db "select count(*) from runs where status='finished' and machine like '%mpi 2 ranks%'")" == 1 ]
    tmux -L "$SOCK" kill-server 2>/dev/null
    # without --dashboard, commands piped into mpirun run as a script (no dashboard)
    (cd t7 && echo "runs" | M 2 --db a.db >piped.txt 2>&1)
    check "piped into mpirun without --dashboard: a script, the run listed" \
        bash -c "grep -q ' finished ' t7/piped.txt && ! grep -q '1 training' t7/piped.txt"
    # --dashboard without a terminal (setsid: no controlling terminal): refused, no hang
    (cd t7 && setsid -w timeout 300 mpirun --oversubscribe -np 2 "$L" --dashboard --db a.db \
        </dev/null >nodash.txt 2>&1; echo $? >nodash.rc)
    check "--dashboard without a terminal: refused with a reason" \
        bash -c "grep -q 'not started from a terminal\|not mpirun' t7/nodash.txt && [ \$(cat t7/nodash.rc) != 0 ]"
else
    echo "skip 7: tmux not installed"
fi

# 8. issue 37: every rank's system metrics reach the store through rank 0 (sampled fast here)
LMLAB_SYSMETRICS_EVERY=0.3 timeout 300 mpirun --oversubscribe -np 2 -x LMLAB_SYSMETRICS_EVERY \
    "$L" --db sys.db train quick steps=1500 $COMMON >sys.txt 2>&1
check "system metrics of rank 0 and rank 1 stored" \
    bash -c "[ \"\$(sqlite3 -cmd '.timeout 5000' sys.db 'SELECT count(DISTINCT rank) FROM run_sysmetrics WHERE rss_mb > 0')\" = 2 ]"

echo "$FAILS failed"
[ $FAILS == 0 ]
