#!/usr/bin/env bash
# e2e_diag.sh — training diagnostics (issue 48) against the real lmlab binary:
#   - `diagnostics=2` on a Dispatcher and an MSA run (dropout, batch 6 in shards=3) records
#     every family of series (grad/, weight/, update/, act/, gate_entropy/, gate_saturated/,
#     attn_entropy/, hist/weight/, hist/grad/) at steps 2, 4, 6, and changes nothing of the
#     training (every step's loss and gradient norm bit-identical to diagnostics=0);
#   - threads=1, threads=3 and `mpirun -np 2` / `-np 3` give every diagnostic BIT-identical
#     (the numbers of the whole step, whatever the process count);
#   - a diverging run (SGD at lr=100: the gradient becomes non-finite at some step) records
#     that step's diagnostics as NaN/Inf and ends as it ends without diagnostics (same step,
#     same reason): the diagnostics neither hide nor cause the stop;
#   - diagnostics=0 (the default) records no series; a bad value is refused.
# The mpirun parts are skipped (said so) when mpirun is absent or lmlab has no MPI.
# Usage: e2e_diag.sh LMLAB. No timing assertions; every command has a timeout.
set -uo pipefail
. "$(dirname "$0")/e2e_lib.sh"   # ok, bad, check and FAILS
L=$(realpath "$1")
. "$(dirname "$0")/mpi.sh"   # mpi_usable, mpi_run: Open MPI set up for this machine
W=$(mktemp -d /tmp/lmlab_diag_XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
cd "$W" || exit 1
q() { sqlite3 -cmd '.timeout 5000' "$1" "$2"; }
T() { timeout 120 "$@"; }
EXP="steps=6 eval_every=0 log_every=1 checkpoint_every=0 sample_every=0 runs_dir=runs
     dropout=0.2 shards=3 batch=6 bptt=16"
EXP=$(echo $EXP)

# every diagnostic of run ID, as exact text (NaN as NULL, doubles with 17 digits)
diags() {
    q "$1" "select n.name, p.step, ifnull(printf('%!.17e', p.value), 'NULL') from series_names n
            join series_points p on p.series_id = n.id where n.run_id=$2 order by n.name, p.step"
    q "$1" "select n.name, h.step, printf('%!.17e %!.17e %d %!.17e', h.lo, h.hi, h.num, h.sum),
            hex(h.counts) from series_names n join series_hists h on h.series_id = n.id
            where n.run_id=$2 order by n.name, h.step"
}
steps() { q "$1" "select step, printf('%!.9e %!.9e', loss, grad_norm) from metrics where run_id=$2 order by step"; }
same() {
    if [ -s "$1" ] && cmp -s "$1" "$2"; then return 0; fi
    diff "$1" "$2" | head -4 | sed 's/^/     /'
    return 1
}

# 1. one process: runs 1-2 threads=1, 3-4 threads=3 (dispatcher, msa), 5-6 without diagnostics
mkdir one
for th in 1 3; do
    for m in dispatcher msa; do
        (cd one && T "$L" --db a.db train quick model=$m $EXP threads=$th diagnostics=2 >>out.txt 2>&1)
    done
done
for m in dispatcher msa; do
    (cd one && T "$L" --db a.db train quick model=$m $EXP threads=1 >>out.txt 2>&1)
done
check "one process: 6 runs finished" [ "$(q one/a.db "select count(*) from runs where status='finished'")" == 6 ]
i=0
for m in dispatcher msa; do
    i=$((i + 1))
    diags one/a.db $i >ref_$m.txt
    fams="grad/ weight/ update/ act/ hist/weight/ hist/grad/"
    [ $m == dispatcher ] && fams="$fams gate_entropy/ gate_saturated/" || fams="$fams attn_entropy/"
    for f in $fams; do
        check "$m: $f recorded at steps 2, 4 and 6" [ "$(grep "^$f" ref_$m.txt | cut -d'|' -f2 | sort -u | tr '\n' ' ')" == "2 4 6 " ]
    done
    [ $m == dispatcher ] && check "dispatcher: no attention entropy" bash -c "! grep -q '^attn_entropy/' ref_$m.txt"
    [ $m == msa ] && check "msa: no gate entropy" bash -c "! grep -q '^gate_' ref_$m.txt"
    check "$m: tensor names as the checkpoint names them" grep -q '^grad/blocks.0.linear1.weight|' ref_$m.txt
    diags one/a.db $((i + 2)) >t3_$m.txt
    check "$m: threads=3 diagnostics bit-identical to threads=1" same ref_$m.txt t3_$m.txt
    steps one/a.db $i >s_diag_$m.txt
    steps one/a.db $((i + 4)) >s_none_$m.txt
    check "$m: diagnostics change no step of the training (loss, grad norm)" same s_diag_$m.txt s_none_$m.txt
done
check "diagnostics=0 records no series" [ "$(q one/a.db "select count(*) from series_names where run_id in (5, 6)")" == 0 ]

# 2. under mpirun -np 2 and -np 3 (one thread per rank)
if mpi_usable "$L" "mpirun -np 2/3"; then
    for np in 2 3; do
        mkdir np$np
        for m in dispatcher msa; do
            (cd np$np && mpi_run 120 $np "$L" --db a.db \
                train quick model=$m $EXP threads=1 diagnostics=2 >>out.txt 2>&1)
        done
        i=0
        for m in dispatcher msa; do
            i=$((i + 1))
            diags np$np/a.db $i >np${np}_$m.txt
            check "$m: mpirun -np $np diagnostics bit-identical to one process" same ref_$m.txt np${np}_$m.txt
        done
    done
fi

# 3. a diverging run: the diverging step's diagnostics are recorded as NaN/Inf; the run ends
# as it does without diagnostics
DIV="steps=300 lr=100 optimizer=sgd diverge_factor=0 eval_every=0 sample_every=0
     checkpoint_every=0 log_every=1 runs_dir=runs"
DIV=$(echo $DIV)
mkdir div
(cd div && T "$L" --db d.db train quick $DIV diagnostics=1000 >out1.txt 2>&1)
(cd div && T "$L" --db d.db train quick $DIV >out2.txt 2>&1)
(cd div && T "$L" --db d.db train quick $DIV diagnostics=1 >out3.txt 2>&1)
check "the run diverges with a non-finite gradient" bash -c "[ \"\$(sqlite3 div/d.db \"select status from runs where id=1\")\" == diverged ] && grep -q 'non-finite' div/out1.txt"
stop=$(q div/d.db "select last_step from runs where id=1")
check "the diverging step's diagnostics are recorded (step $((stop + 1))), NaN or Inf among them" \
    bash -c "[ \$(sqlite3 div/d.db \"select count(*) from series_points p join series_names n on n.id=p.series_id where n.run_id=1 and p.step=$((stop + 1)) and (p.value is null or abs(p.value) > 1e308)\") -gt 0 ]"
check "... and its histograms count the non-finite values apart" \
    bash -c "[ \$(sqlite3 div/d.db \"select sum(h.n_nan + h.n_posinf + h.n_neginf) from series_hists h join series_names n on n.id=h.series_id where n.run_id=1\") -gt 0 ]"
check "no update ratio at the step that was not taken" \
    [ "$(q div/d.db "select count(*) from series_points p join series_names n on n.id=p.series_id where n.run_id=1 and n.name like 'update/%'")" == 0 ]
check "diagnostics every step: same end (step, status, reason) as without diagnostics" \
    bash -c "[ \"\$(sqlite3 div/d.db 'select last_step, status, reason from runs where id=2')\" == \"\$(sqlite3 div/d.db 'select last_step, status, reason from runs where id=3')\" ]"
check "diagnostics every step: every step before the divergence recorded" \
    [ "$(q div/d.db "select count(distinct p.step) from series_points p join series_names n on n.id=p.series_id where n.run_id=3")" == $((stop + 1)) ]

# 4. bad values
(cd one && T "$L" --db a.db train quick diagnostics=-1 >bad.txt 2>&1; echo $? >bad.rc)
check "diagnostics=-1 refused with the range" bash -c "grep -q 'diagnostics=-1 is out of range' one/bad.txt && [ \$(cat one/bad.rc) != 0 ]"

echo "e2e_diag: $FAILS failed"
[ $FAILS == 0 ]
