#!/usr/bin/env bash
# e2e_shards.sh — training on token files read as they are (issue 47), against the real
# lmlab binary, on token files the test makes (tests/make_token_files.py: llm.c shards,
# nanoGPT train.bin/val.bin, a wordpiece vocabulary covering the ids):
#   1. a run on 4 llm.c shards (random batching) and one streaming over them: finished
#   2. the data position is in the checkpoint: `fork ID step=12` with threads=2, and under
#      `mpirun -np 2` (one thread a rank), continue BIT-identically to the uninterrupted
#      run (every step's loss, gradient norm, lr, tokens; every evaluation), both batchings
#   3. nanoGPT's headerless train.bin/val.bin train too (also with tokenizer=gpt2 when built in)
#   4. final_eval_tokens=N: the final loss is stated as an estimate over N tokens
#   5. bad input, each refused with its message, no run left behind: a truncated shard, ids
#      beyond the vocabulary (file and position), a tokenizer without a vocabulary
# The mpirun part is skipped (said so) without mpirun or an MPI build.
# Usage: e2e_shards.sh LMLAB. No timing assertions; every command has a timeout.
set -uo pipefail
. "$(dirname "$0")/e2e_lib.sh"   # ok, bad, check and FAILS
L=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/mpi.sh"   # mpi_usable, mpi_run: Open MPI set up for this machine
W=$(mktemp -d /tmp/lmlab_shards_XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
cd "$W" || exit 1
q() { sqlite3 -cmd '.timeout 5000' "$1" "$2"; }
T() { timeout 120 "$@"; }
python3 "$HERE/make_token_files.py" "$W/c" 200 || { echo "FAIL cannot make the token files"; exit 1; }
TOK="tokenizer=wordpiece vocab=$W/c/vocab.txt"
EXP="steps=24 eval_every=8 eval_batches=2 log_every=1 checkpoint_every=12 sample_every=0
     runs_dir=runs shards=2 batch=4 bptt=16 threads=1 $TOK"
EXP=$(echo $EXP)
fp() {   # every number of run $2 after step $3, as exact text
    q "$1" "select step, printf('%!.9e %!.9e %!.9e %d', loss, grad_norm, lr, tokens) from metrics
             where run_id=$2 and step > $3 order by step"
    q "$1" "select step, split, printf('%!.17e %d', loss, tokens) from evals where run_id=$2
             and step > $3 order by step, split"
}
same() {
    if [ -s "$1" ] && cmp -s "$1" "$2"; then return 0; fi
    diff "$1" "$2" | head -4 | sed 's/^/     /'
    return 1
}

# 1. llm.c shards, random and stream batching (runs 1, 2)
mkdir one
(cd one && T "$L" --db a.db train quick data=$W/c/llmc $EXP >out1.txt 2>&1)
(cd one && T "$L" --db a.db train quick data=$W/c/llmc $EXP batching=stream model=lstm >out2.txt 2>&1)
check "llm.c shards, random batching: finished" grep -q "run #1 finished" one/out1.txt
check "llm.c shards, stream batching (lstm): finished" grep -q "run #2 finished" one/out2.txt
check "the run names the folder as its data" grep -q "on $W/c/llmc" one/out1.txt

# 2. resume from step 12: another thread count, and mpirun -np 2
for id in 1 2; do
    fp one/a.db $id 12 >ref$id.txt
    (cd one && T "$L" --db a.db -c "fork $id step=12 threads=2; wait" >>fork.txt 2>&1)
done
fp one/a.db 3 12 >f3.txt
fp one/a.db 4 12 >f4.txt
check "random batching: resumed at step 12 with threads=2, bit-identical" same ref1.txt f3.txt
check "stream batching: resumed at step 12 with threads=2, bit-identical" same ref2.txt f4.txt
check "the comparison can fail (steps recorded)" [ "$(wc -l <ref1.txt)" -ge 14 ]
if mpi_usable "$L" "mpirun -np 2 resume"; then
    for id in 1 2; do
        (cd one && mpi_run 300 2 "$L" --db a.db -c "fork $id step=12 threads=1; wait" >>mpi.txt 2>&1)
    done
    fp one/a.db 5 12 >m5.txt
    fp one/a.db 6 12 >m6.txt
    check "random batching: resumed at step 12 under mpirun -np 2, bit-identical" same ref1.txt m5.txt
    check "stream batching: resumed at step 12 under mpirun -np 2, bit-identical" same ref2.txt m6.txt
fi

# 3. nanoGPT
mkdir nano
(cd nano && T "$L" --db a.db train quick data=$W/c/nano $TOK steps=5 runs_dir=runs >out.txt 2>&1)
check "nanoGPT train.bin/val.bin: finished" grep -q "run #1 finished" nano/out.txt

if "$L" --db nano/a.db -c "help set tokenizer" 2>&1 | grep -q gpt2; then   # GPT-2's files
    (cd nano && T "$L" --db a.db train quick data=$W/c/nano tokenizer=gpt2 steps=2 eval_every=0 \
        sample_every=0 runs_dir=runs >gpt2.txt 2>&1)
    check "nanoGPT files with tokenizer=gpt2 (a fixed vocabulary): finished" grep -q "finished 2 steps" nano/gpt2.txt
fi

# 4. the final evaluation capped
(cd nano && T "$L" --db a.db --json train quick data=$W/c/nano $TOK steps=5 runs_dir=runs final_eval_tokens=100 >cap.txt 2>&1)
check "final_eval_tokens=100: stated as an estimate over 100 tokens" grep -q "estimate over 100 tokens (100 of the split's 5999" nano/cap.txt
check "final_eval_tokens=100: the evaluation row holds 100 tokens" [ "$(q nano/a.db 'select tokens from evals where run_id=(select max(id) from runs) order by step desc limit 1')" == 100 ]

# 5. bad input
mkdir bad && cp -r c/llmc bad/trunc && truncate -s -3 bad/trunc/tiny_train_000002.bin
(cd bad && T "$L" --db a.db train quick data=$W/bad/trunc $TOK steps=5 runs_dir=runs >trunc.txt 2>&1; echo $? >trunc.rc)
check "truncated shard: refused naming the file, the header's count and the size" \
    grep -q "tiny_train_000002.bin' is truncated or damaged: its header says 13500 tokens (28024 bytes with the header) but the file has 28021 bytes" bad/trunc.txt
check "truncated shard: non-zero exit" [ "$(cat bad/trunc.rc)" != 0 ]
head -n 150 c/vocab.txt >small_vocab.txt
(cd bad && T "$L" --db a.db train quick data=$W/c/llmc tokenizer=wordpiece vocab=$W/small_vocab.txt steps=5 runs_dir=runs >vocab.txt 2>&1)
check "ids beyond the vocabulary: refused naming the file and the position" \
    grep -Eq "tiny_train_000000.bin': token [0-9]+ \(byte [0-9]+\) is id 1[5-9][0-9], beyond the tokenizer's vocabulary of 150" bad/vocab.txt
(cd bad && T "$L" --db a.db train quick data=$W/c/llmc tokenizer=char steps=5 runs_dir=runs >char.txt 2>&1)
check "tokenizer=char: refused, naming what to give" grep -q "holds token ids without their vocabulary" bad/char.txt
check "no run recorded for bad input" [ "$(q bad/a.db 'select count(*) from runs' 2>/dev/null || echo 0)" == 0 ]

echo "$FAILS failed"
[ $FAILS == 0 ]
