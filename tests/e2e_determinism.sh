#!/usr/bin/env bash
# e2e_determinism.sh — same seed, same numbers (issue 35), against the real lmlab binary:
# the same experiment (Dispatcher, MSA, and an LSTM carrying its state across windows;
# all with dropout; batch 6 in shards=3) trained
#   - by one process with threads=1, threads=2 and threads=3,
#   - as trials of a `sweep ... parallel=2` (worker processes, one thread each),
#   - under `mpirun -np 2` and `-np 3` (one thread per rank),
#   - resumed from its step-6 checkpoint (`fork ID step=6`) with threads=3 and with 2,
# gives every step's loss, gradient norm and learning rate, every evaluation (the
# periodic estimates and the final whole split), every sample and the final weights and optimizer
# moments BIT-identical to threads=1; `compare` of two such runs says "identical", and of
# two runs that differ names the first step where they part. A different seed changes the
# numbers (the comparison can fail).
# The mpirun parts are skipped (said so) when mpirun is absent or lmlab has no MPI.
# Usage: e2e_determinism.sh LMLAB. No timing assertions; every command has a timeout.
set -uo pipefail
. "$(dirname "$0")/e2e_lib.sh"   # ok, bad, check and FAILS
L=$(realpath "$1")
. "$(dirname "$0")/mpi.sh"   # mpi_usable, mpi_run: Open MPI set up for this machine
W=$(mktemp -d /tmp/lmlab_det_XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
cd "$W" || exit 1
q() { sqlite3 -cmd '.timeout 5000' "$1" "$2"; }
T() { timeout 120 "$@"; }
MODELS="dispatcher msa lstm"
# (quick's own d=32 nhid=64 layers=2; few keys: a sweep takes at most 16)
EXP="steps=12 eval_every=4 eval_batches=2 log_every=1 checkpoint_every=6 sample_every=5
     runs_dir=runs dropout=0.2 shards=3 batch=6 bptt=16"
EXP=$(echo $EXP)   # the training seed is quick's (a sweep's seed= is the sweep's own)
# the LSTM streams its batches: its hidden state is carried from window to window, per shard
extra() { [ "$1" == lstm ] && echo "batching=stream"; }

# fp DB RUN: every number of the run, as exact text (floats with 9 digits, doubles 17), and
# the bytes of its last checkpoint's tensors (weights and moments; the headers hold the
# settings, threads included, so they are left out)
tensors() { local n; n=$(od -An -t u8 -N8 "$1" | tr -d ' '); tail -c +$((9 + n)) "$1" | sha256sum | cut -c1-16; }
fp() {
    local db=$1 id=$2 dir
    q "$db" "select step, printf('%!.9e %!.9e %!.9e %d', loss, grad_norm, lr, tokens) from metrics
             where run_id=$id order by step"
    q "$db" "select step, split, printf('%!.17e %d', loss, tokens) from evals where run_id=$id
             order by step, split"
    q "$db" "select step, 'sample', hex(text) from samples where run_id=$id order by step"
    dir=$(dirname "$db")/runs/run-$id-*
    for f in $dir/step-00000012.safetensors $dir/step-00000012.optim.safetensors; do
        [ -f "$f" ] && echo "$(basename "$f") $(tensors "$f")" || echo "missing $(basename "$f")"
    done
}
# same A B WHAT: fingerprints equal (else the first lines that differ)
same() {
    if [ -s "$1" ] && cmp -s "$1" "$2"; then return 0; fi
    diff "$1" "$2" | head -4 | sed 's/^/     /'
    return 1
}

# 1. one process, threads=1, 2, 3: runs 1-3 threads=1 (dispatcher, msa, lstm), 4-6 threads=2, ...
mkdir one
for th in 1 2 3; do
    for m in $MODELS; do
        (cd one && T "$L" --db a.db train quick model=$m $(extra $m) $EXP threads=$th >>out.txt 2>&1)
    done
done
check "one process: 9 runs finished" [ "$(q one/a.db "select count(*) from runs where status='finished'")" == 9 ]
i=0
for m in $MODELS; do
    i=$((i + 1))
    fp one/a.db $i >ref_$m.txt
    check "$m: 12 steps, the evaluations and 2 samples recorded" bash -c "[ \$(grep -c ' ' ref_$m.txt) -ge 16 ] && [ \$(grep -c '|sample|' ref_$m.txt) == 2 ] && ! grep -q missing ref_$m.txt"
    for th in 2 3; do
        fp one/a.db $((i + 3 * (th - 1))) >t${th}_$m.txt
        check "$m: threads=$th bit-identical to threads=1 (steps, evals, weights)" same ref_$m.txt t${th}_$m.txt
    done
done
check "the run records its shard plan (shards=3)" bash -c "q() { sqlite3 one/a.db \"\$1\"; }; [ \$(q \"select count(*) from runs where config like '%shards=3%'\") == 9 ]"
(cd one && T "$L" --db a.db -c "compare 1 4" >cmp_same.txt 2>&1)
check "compare of threads=1 and threads=2: identical" grep -q "identical" one/cmp_same.txt
# a different seed: other numbers, and compare names the first step where they part
(cd one && T "$L" --db a.db train quick model=dispatcher $EXP seed=6 threads=1 >>out.txt 2>&1)
fp one/a.db 10 >seed6.txt
check "another seed gives other numbers (the check can fail)" bash -c "! cmp -s ref_dispatcher.txt seed6.txt"
(cd one && T "$L" --db a.db -c "compare 1 10" >cmp_diff.txt 2>&1)
check "compare of two seeds: parts at step 1" grep -q "part at step 1" one/cmp_diff.txt

# 2. resumed from the step-6 checkpoint with another thread count
mkdir res
for m in $MODELS; do
    (cd res && T "$L" --db a.db train quick model=$m $(extra $m) $EXP threads=1 >>out.txt 2>&1)
done
for m in $MODELS; do   # runs 4, 5, 6: forks of 1, 2, 3 at step 6 with threads=3
    id=$(q res/a.db "select id from runs where config like '%model=$m%' order by id limit 1")
    (cd res && T "$L" --db a.db -c "fork $id step=6 threads=3; wait" >>fork.txt 2>&1)
done
i=0
for m in $MODELS; do
    i=$((i + 1))
    fp res/a.db $((i + 3)) | grep -Ev '^([1-6])\|' >fork_$m.txt
    grep -Ev '^([1-6])\|' ref_$m.txt >ref_tail_$m.txt
    check "$m: resumed at step 6 with threads=3 continues bit-identically" same ref_tail_$m.txt fork_$m.txt
done

check "the forks with another thread count say nothing about a change" bash -c "! grep -q 'resumed with shards' res/fork.txt"
(cd res && T "$L" --db a.db -c "compare 1 4" >cmp_fork.txt 2>&1)
check "compare of a run and its fork with threads=3: identical" grep -q "run 1 vs run 4: identical" res/cmp_fork.txt
# a resume that crosses a change of the plan says so, and compare names it
(cd res && T "$L" --db a.db -c "fork 1 step=6 shards=2; wait" >fork2.txt 2>&1)
check "a fork with shards=2 of a shards=3 run says the order of sums changes" \
    grep -q "resumed with shards=2 where the checkpoint was trained with shards=3" res/fork2.txt
(cd res && T "$L" --db a.db -c "compare 1 7" >cmp_fork2.txt 2>&1)
check "compare names the plan's change" grep -q "differ: shards 3 vs 2" res/cmp_fork2.txt
check "checkpoints record the BLAS kernel family" \
    bash -c "head -c 20000 res/runs/run-1-*/step-00000006.safetensors | grep -aq '\"kernels\":\"OpenBLAS'"

# 3. a parallel sweep's trials (worker processes, threads=1)
mkdir sw
(cd sw && T "$L" --db a.db -c "sweep base=quick model=dispatcher,msa $EXP parallel=2 name=det; sweep wait" >out.txt 2>&1
 T "$L" --db a.db -c "sweep base=quick model=lstm $(extra lstm) $EXP lr=0.003,0.001 parallel=2 name=detl; sweep wait" >>out.txt 2>&1)
for m in $MODELS; do
    id=$(q sw/a.db "select id from runs where config like '%model=$m%' and config like '%lr=0.003%' limit 1")
    fp sw/a.db "${id:-0}" >sw_$m.txt
    check "$m: as a parallel=2 sweep trial, bit-identical" same ref_$m.txt sw_$m.txt
done

# 4. under mpirun -np 2 and -np 3
if mpi_usable "$L" "mpirun -np 2/3"; then
    for np in 2 3; do
        mkdir np$np
        for m in $MODELS; do
            (cd np$np && mpi_run 120 $np "$L" --db a.db \
                train quick model=$m $(extra $m) $EXP threads=1 >>out.txt 2>&1)
        done
        i=0
        for m in $MODELS; do
            i=$((i + 1))
            fp np$np/a.db $i >np${np}_$m.txt
            check "$m: mpirun -np $np bit-identical to one process" same ref_$m.txt np${np}_$m.txt
        done
    done
    mkdir np4 && (cd np4 && mpi_run 120 4 "$L" --db a.db \
        train quick $EXP threads=1 >out.txt 2>&1; echo $? >rc)
    check "shards=3 under -np 4: refused with what to set" grep -q "shards=3 is fewer than the 4 processes" np4/out.txt
    check "shards=3 under -np 4: non-zero exit" [ "$(cat np4/rc)" != 0 ]
fi

echo "$FAILS failed"
[ "$FAILS" == 0 ]
