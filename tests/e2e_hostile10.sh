#!/usr/bin/env bash
# e2e_hostile10.sh — round 10 of hostile input: edge hyperparameters, sampling edges, several
# processes (mpirun) and signals (docs/hostile10.md). Each part replays a finding with the
# real binary and fails on the code before its fix. Every wait is for a state (a logged
# step, a recorded checkpoint, a process blocked writing, a status), never a sleep that
# races the machine's speed.
# Usage: e2e_hostile10.sh LMLAB_BINARY
set -u
bin=$(readlink -f "$1")
src=$(cd "$(dirname "$0")" && pwd)
. "$src/bounded.sh"   # bwait, wait_until: every wait on a child is bounded
L=$bin
. "$src/mpi.sh"       # mpi_usable: Open MPI set up for this machine
dir=$(mktemp -d)
bgpid= rdpid=
trap 'kill -KILL $bgpid $rdpid 2>/dev/null; rm -rf "$dir"' EXIT
cd "$dir"
export LMLAB_DB="$dir/s.db" HOME="$dir"
command -v sqlite3 >/dev/null || { echo "sqlite3 is needed (scripts/deps.sh installs it)"; exit 1; }
q() { sqlite3 -cmd '.timeout 5000' "$LMLAB_DB" "$1"; }
fail() { echo "FAIL: $*"; exit 1; }
C="runs_dir=$dir/runs sample_every=0 threads=1"
id_of() { q "SELECT id FROM runs WHERE name='$1'"; }

# ---- 1: a bound printed as it is ----------------------------------------------------------
# Before: "beta2=1 is out of range: allowed 0 to 1" (the bound 0.9999999 printed by %g), and
# `help set` said [0..1]. Nothing reaches the store.
"$bin" train quick beta2=1 $C >b.out 2>&1 && fail "beta2=1 accepted: $(tail -2 b.out)"
grep -q "error: beta2=1 is out of range: allowed 0 to 0.9999999 (Adam beta2)" b.out ||
    fail "beta2=1's refusal: $(tail -1 b.out)"
"$bin" help set | grep -q "^  beta2 .*\[0\.\.0\.9999999\]" || fail "help set: $("$bin" help set | grep beta2)"
# Before: "needs about 20.20 GiB ... but 22.72 GiB is available" refused a model that fits:
# a model may take 85% of it, which went unsaid. A model far too large says it all the same.
"$bin" train quick model=lstm d=8192 bptt=65536 batch=64 $C >m.out 2>&1 && fail "a huge model accepted"
read -r have cap <<<"$(sed -n 's/.* but \([0-9.]*\) GiB is available, of which a model may take 85% (\([0-9.]*\) GiB): lower batch.*/\1 \2/p' m.out)"   # bounded: a here-string
[ -n "$cap" ] || fail "the share of the memory a model may take is not said: $(tail -1 m.out)"
python3 -c "import sys; sys.exit(abs(0.85 * $have - $cap) > 0.011)" || fail "85% of $have GiB is not $cap GiB"
# Before: a seed past 2^53 went through a double: 9007199254740993 was kept as ...992.
"$bin" -c "set seed=9007199254740993; show config" | grep -q "^  seed  *9007199254740993 " ||
    fail "seed=9007199254740993: $("$bin" -c "set seed=9007199254740993; show config" | grep seed)"
[ ! -s s.db ] || [ "$(q "SELECT count(*) FROM runs")" = 0 ] || fail "a refused run left a row"
echo "1: beta2=1 refused with the bound it has (0.9999999); the memory refusal names the 85% share ($cap of $have GiB); a seed past 2^53 kept as typed; nothing stored"

# ---- 2: a diverged run says which checkpoint is left ---------------------------------------
# Before: every divergence said "(the last good checkpoint is kept)"; with none written the
# run had "checkpoints: none", and its 3 trained steps were not logged ("last step: 0").
"$bin" train quick name=nan lr=100 weight_decay=10 steps=20 $C >d1.out 2>&1
grep -q "run #[0-9]* diverged: gradient norm became non-finite at step 4: .*; no checkpoint was written before it (checkpoint_every=100): nothing to go on from, start again with a lower lr" d1.out ||
    fail "the divergence without a checkpoint: $(grep diverged d1.out)"
grep -q "last good checkpoint" d1.out && fail "still claims a kept checkpoint: $(grep diverged d1.out)"
[ "$(q "SELECT last_step FROM runs WHERE name='nan'")" = 3 ] ||
    fail "the 3 steps before the divergence: last step $(q "SELECT last_step FROM runs WHERE name='nan'")"
# a loss above the bound from step 2 on: the checkpoints after it are no way forward
"$bin" train quick name=high lr=100 steps=300 checkpoint_every=20 $C >d2.out 2>&1
grep -q "diverged: loss .*; the last checkpoint, step 20's, was written after the loss rose above the bound (from step [0-9]*): going on from it diverges again" d2.out ||
    fail "a checkpoint written after the loss rose: $(grep diverged d2.out)"
# a warm-up that reaches a too-large lr late: the checkpoint before the rise is the way on
"$bin" train quick name=warm lr=30 warmup=3000 checkpoint_every=10 steps=600 diverge_patience=5 eval_every=1000 $C >d3.out 2>&1
id=$(id_of warm)
kept=$(sed -n "s/.*the last checkpoint, step \([0-9]*\)'s, is kept: \`fork $id step=\1 lr=...\` goes on from it.*/\1/p" d3.out)
[ -n "$kept" ] || fail "the checkpoint before the rise is not named: $(grep diverged d3.out)"
"$bin" fork $id step=$kept lr=3e-3 warmup=0 steps=$((kept + 20)) $C >f.out 2>&1 ||
    fail "the advised fork: $(tail -2 f.out)"
echo "2: a diverged run names what is left (none; written after the rise; the step-$kept one, and its fork trains)"

# ---- 3: a checkpoint's record lands after its steps ----------------------------------------
# Before: the checkpoint row was committed at once while the step rows waited up to 2 s in
# the buffer; a kill -9 then left "last step: 0" beside the step-N checkpoint, and the steps
# before it never reached the store, even after the resume.
"$bin" train quick name=ck steps=100000000 checkpoint_every=50 eval_every=100000 $C >ck.out 2>&1 &
bgpid=$!
ckpt() { [ "$(q "SELECT count(*) FROM checkpoints c JOIN runs r ON r.id=c.run_id WHERE r.name='ck'")" -ge 1 ]; }
wait_until 120 ckpt || fail "run ck recorded no checkpoint: $(tail -3 ck.out)"
id=$(id_of ck)
# in one read (one snapshot): the checkpoints recorded past the last recorded step
ahead=$(q "SELECT count(*) || ' ' || coalesce(min(step), 0) FROM checkpoints WHERE run_id=$id AND step > (SELECT coalesce(max(step), 0) FROM metrics WHERE run_id=$id)")
kill -KILL $bgpid; bwait $bgpid 30 "run ck after kill -9"; bgpid=
[ "${ahead% *}" = 0 ] || fail "${ahead% *} checkpoints recorded ahead of the recorded steps (the first at step ${ahead#* })"
"$bin" run $id >r.out 2>&1
last=$(sed -n 's/^  last step: *\([0-9]*\).*/\1/p' r.out)
newest=$(q "SELECT max(step) FROM checkpoints WHERE run_id=$id")
[ "$last" -ge "$newest" ] || fail "after kill -9: last step $last beside the step-$newest checkpoint"
echo "3: every recorded checkpoint has its steps recorded before it; after kill -9, last step $last >= $newest"

# ---- 4: SIGTERM while the output is not read ------------------------------------------------
# Before: a headless train piped into a reader that stopped reading blocked in write and
# never acted on SIGTERM: the run trained on until it was killed, and was left interrupted.
mkfifo pipe
sleep 600 <pipe &   # a reader that never reads: the pipe fills (killed below, by its pid)
rdpid=$!
"$bin" train quick name=pipe steps=100000000 log_every=1 checkpoint_every=1000 eval_every=100000 $C >pipe 2>pipe.err &
bgpid=$!
blocked() { grep -q pipe_write /proc/$bgpid/wchan; }   # the main thread waits on the pipe
wait_until 120 blocked || fail "the run never blocked on its output: $(cat /proc/$bgpid/wchan)"
kill -TERM $bgpid
bwait $bgpid 60 "run pipe after SIGTERM with its output unread"; rc=$?; bgpid=
kill -KILL $rdpid; rdpid=
[ $rc != 124 ] || fail "SIGTERM did not end a run whose output was not read"
st=$(q "SELECT status || ' ' || coalesce(reason,'') FROM runs WHERE name='pipe'")
case "$st" in "stopped stopped at step "*"termination signal"*) ;; *) fail "run pipe: $st";; esac
echo "4: SIGTERM stops a run whose output nobody reads: $st"

# ---- 5: several processes (mpirun) ----------------------------------------------------------
if mpi_usable "$bin" "part 5 (mpirun)"; then
    mkdir m && cd m
    # ranks started with different words: rank 0's decide, and that is said
    timeout 120 mpirun --allow-run-as-root --oversubscribe -np 1 "$bin" train quick steps=10 lr=1e-3 $C : \
        -np 1 "$bin" train quick steps=10 lr=2e-3 $C >mm.out 2>&1 || fail "the mixed job: $(tail -3 mm.out)"
    grep -q "lmlab: note: the 2 processes of this mpirun job were started with different arguments: rank 1 takes every setting from rank 0 and never reads its own" mm.out ||
        fail "different arguments not said: $(head -3 mm.out)"
    timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 "$bin" train quick steps=10 $C >ms.out 2>&1 || fail "the plain job: $(tail -3 ms.out)"
    grep -q "note:" ms.out && fail "a note for ranks started alike: $(grep note ms.out)"
    # a rank started in another folder (mpirun -wdir): it works in rank 0's, whose relative
    # paths the settings hold (here the tokens beside a store named relatively). Before:
    # "lmlab rank 1: no dataset './lmlab-tokens/KEY'" and the job failed
    mkdir -p elsewhere
    timeout 120 mpirun --allow-run-as-root --oversubscribe -np 1 "$bin" --db wd.db train quick name=wd steps=10 $C : \
        -np 1 -wdir "$dir/m/elsewhere" "$bin" --db wd.db train quick name=wd steps=10 $C >wd.out 2>&1 ||
        fail "a rank started in another folder: $(grep -v '^step' wd.out | head -5)"
    grep -q "run #[0-9]* finished" wd.out || fail "run wd: $(tail -3 wd.out)"
    # SIGTERM to mpirun (what Ctrl-C and a batch system's end send): the run stops cleanly.
    # Before: mpirun passed it on to rank 1, which died at once and took the job with it
    # (the run was left interrupted); or rank 0 blocked on output mpirun no longer read.
    mpirun --allow-run-as-root --oversubscribe -np 2 "$bin" train quick name=mt steps=100000000 checkpoint_every=500 log_every=1 eval_every=100000 $C >mt.out 2>&1 &
    bgpid=$!
    mstepped() { [ "$(q "SELECT count(*) FROM runs WHERE name='mt' AND last_step>=300")" = 1 ]; }
    wait_until 120 mstepped || fail "run mt never stepped: $(tail -3 mt.out)"
    kill -TERM $bgpid
    bwait $bgpid 60 "mpirun after SIGTERM"; bgpid=
    st=$(q "SELECT status || ' ' || coalesce(reason,'') FROM runs WHERE name='mt'")
    case "$st" in "stopped stopped at step "*) ;; *) fail "SIGTERM to mpirun: run mt $st";; esac
    id=$(id_of mt)
    timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 "$bin" train resume=$id steps=$(( $(q "SELECT last_step FROM runs WHERE id=$id") + 20 )) >mr.out 2>&1 ||
        fail "resume after SIGTERM: $(tail -3 mr.out)"
    cd ..
    echo "5: mpirun: ranks given other words are told rank 0's decide; a rank started in another folder works in rank 0's; SIGTERM to mpirun stops the run cleanly and it resumes"
fi

# ---- 6: a prompt the model cannot read ------------------------------------------------------
# Before: "aÿerror: character 'ÿ' ..." — the prompt echoed, then the error on its line, and
# nothing said what to do.
"$bin" train quick name=smp steps=10 $C >/dev/null 2>&1 || fail "run smp"
"$bin" -c "open $(id_of smp); sample prompt=\"aÿ\" tokens=5" >s.out 2>&1 && fail "a prompt with ÿ sampled: $(cat s.out)"
grep -q "^error: prompt: character 'ÿ' (U+00FF) at byte offset 1 is not in the vocabulary of 65 characters (a char tokenizer knows only the characters of the text it was built from: leave this one out)" s.out ||
    fail "the refused prompt: $(tail -1 s.out)"
grep -q "aÿ" s.out && fail "the prompt was echoed: $(cat s.out)"
# Before: `open 0` read 0 as a file: "0: cannot open: No such file or directory".
"$bin" open 0 >o.out 2>&1 && fail "open 0 opened something: $(cat o.out)"
grep -q "^error: run id expected, got '0' — \`runs\` lists the ids (and no file '0' exists)" o.out ||
    fail "open 0: $(cat o.out)"
# Before: a sample of a run that another process deleted (`rm ID yes`) after this session
# opened it was printed, and its record dropped without a word.
"$bin" train quick name=gone steps=10 $C >/dev/null 2>&1 || fail "run gone"
gid=$(id_of gone)
rm -f g.fifo && mkfifo g.fifo
"$bin" <g.fifo >g.out 2>&1 &
bgpid=$!
exec 8>g.fifo
echo "open $gid" >&8
wait_until 60 grep -q "^opened run #$gid" g.out || fail "open $gid in a session: $(cat g.out)"
"$bin" rm "$gid" yes >/dev/null 2>&1 || fail "rm $gid yes"
echo 'sample prompt="ROMEO:" tokens=5' >&8
echo quit >&8
exec 8>&-
bwait $bgpid 60 "the session that sampled a deleted run"; bgpid=
grep -q "^warning: run $gid's sample not recorded: the run was deleted from the store after its weights were read" g.out ||
    fail "a deleted run's sample: $(tail -2 g.out)"
echo "6: a prompt with a character the vocabulary lacks is refused before it is echoed, saying what to do; open 0 is no run; a sample of a run deleted meanwhile says it is not recorded"
# ---- 7: a script with CR-only line ends -----------------------------------------------------
# Before: the whole file read as one line: "error: 'set' takes key=value arguments, not
# 'set'", nothing said why. CRLF line ends still run as before.
printf 'set d=16\rset layers=3\rshow config\r' >cr.lmlab
"$bin" cr.lmlab >cr.out 2>&1 && fail "a CR-only script ran: $(cat cr.out)"
grep -qF "cr.lmlab:1: error: this line holds a carriage return (\\r) before more text: the file ends its lines with CR alone (old Mac text), so it reads as one line; nothing on it ran" cr.out ||
    fail "CR line ends: $(cat cr.out)"
printf 'set d=16\r\nset name="x y"\r\nshow config\r\n' >crlf.lmlab
"$bin" crlf.lmlab >crlf.out 2>&1 || fail "a CRLF script: $(cat crlf.out)"
grep -q '^  name  *x y  ' crlf.out || fail "CRLF script's name: $(grep name crlf.out)"
echo "7: a script with CR-only line ends is refused saying why; CRLF runs"
# ---- 8: every note of a run's start is printed --------------------------------------------
# Before: the printer showed the newest message at each poll (0.1 s), so two notes between
# polls were one: a fork with shards=1 threads=2 printed the shard-plan note and lost the
# threads note (the run's console, `log ID`, had both). And a warm-up longer than the run
# trained at a rate that never reached lr, with no word.
"$bin" train quick name=nb steps=20 checkpoint_every=10 $C >/dev/null 2>&1 || fail "run nb"
"$bin" fork $(id_of nb) step=20 steps=40 shards=1 $C threads=2 >n.out 2>&1 || fail "fork of nb: $(tail -2 n.out)"
grep -q "^note: 2 threads but 1 shard here" n.out || fail "the threads note was lost: $(grep note n.out)"
grep -q "^note: resumed with shards=1 where the checkpoint was trained with shards=2" n.out ||
    fail "the shards note was lost: $(grep note n.out)"
"$bin" train quick name=wu steps=20 warmup=1000 $C >w.out 2>&1 || fail "run wu: $(tail -2 w.out)"
grep -q "^note: warmup=1000 is not shorter than the run's 20 steps: the learning rate climbs the whole run and ends at 6e-05, never reaching lr=0.003 (lower warmup, or raise steps)" w.out ||
    fail "warmup past the run's end unsaid: $(grep note w.out)"
echo "8: two notes at a run's start are both printed; a warm-up longer than the run is said"
# ---- 9: resume with steps= below or at the checkpoint ------------------------------------------
# Before (found by the docs check after the round): `train resume=ID steps=N` with N below
# the checkpoint's step quietly finished the run there; with N at it, the end said "before
# the run's last step 0 (no final evaluation)" and "0 steps in 0.0s, 0 tokens/s".
"$bin" train quick name=rs steps=1000000 checkpoint_every=50 $C >rs.out 2>&1 &
bgpid=$!
wait_until 60 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$LMLAB_DB' \"SELECT count(*) FROM checkpoints c JOIN runs r ON r.id=c.run_id WHERE r.name='rs' AND c.step >= 50\")\" -ge 1 ]" ||
    fail "run rs wrote no checkpoint: $(tail -2 rs.out)"
rid=$(id_of rs)
"$bin" stop "$rid" >/dev/null 2>&1 || fail "stop $rid"
bwait $bgpid 60 "run rs after its stop"; bgpid=
at=$(q "SELECT max(step) FROM checkpoints WHERE run_id=$rid")
[ "$at" -ge 50 ] 2>/dev/null || fail "run rs's last checkpoint: '$at'"
"$bin" train resume=$rid steps=$((at - 1)) $C >r.out 2>&1 && fail "resume=$rid steps=$((at - 1)) accepted: $(tail -2 r.out)"
grep -q "^error: resume=$rid steps=$((at - 1)): the run is at step $at (its checkpoint) and steps= is the total to reach, not steps to add: give steps=$((at + 1)) or more (steps=$at ends it there with its final evaluation)" r.out ||
    fail "resume below the checkpoint's step: $(tail -1 r.out)"
[ "$(q "SELECT status FROM runs WHERE id=$rid")" == stopped ] || fail "the refused resume changed run $rid"
"$bin" train resume=$rid steps=$at $C >r2.out 2>&1 || fail "resume=$rid steps=$at: $(tail -2 r2.out)"
grep -q "^run #$rid finished: finished $at steps" r2.out || fail "resume at its step: $(grep finished r2.out)"
grep -q "^  $at steps in " r2.out || fail "resume at its step, the steps: $(tail -1 r2.out)"
grep -q "run's last step 0\|^  0 steps" r2.out && fail "resume at its step says step 0: $(cat r2.out)"
echo "9: a resume with steps= below its checkpoint's step is refused, saying steps= is the total; at it, the run ends there, its end naming its step"
echo "all parts passed"
