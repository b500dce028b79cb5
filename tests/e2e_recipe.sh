#!/usr/bin/env bash
# e2e_recipe.sh — the reference's third recipe end to end (issue 47) on small corpora the
# test makes, tiny model sizes overridden: `openwebtext_dispatcher_pretrain` on a folder of
# .txt and .xz documents (an OpenWebText-like layout), then
# `wikitext103_dispatcher_after_openwebtext` on a WikiText layout with init_from= the
# pre-training run: both finish; the fine-tune starts from the pre-trained weights (its
# first loss is below a fresh model's), uses the checkpoint's tokenizer, and records the
# pre-training run as its parent (lineage: `runs` and `show run`). The presets' own
# settings (batch 6 / 5, lr 6e-5 / 5e-5, one head, 1024-token windows) are checked in the
# stored configurations. tokenizer=bpe stands in for gpt2 where gpt2 is not built in.
# Usage: e2e_recipe.sh LMLAB. No timing assertions; every command has a timeout.
set -uo pipefail
. "$(dirname "$0")/e2e_lib.sh"   # ok, bad, check and FAILS
L=$(realpath "$1")
SRC=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d /tmp/lmlab_recipe_XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
cd "$W" || exit 1
q() { sqlite3 -cmd '.timeout 5000' "$1" "$2"; }
T() { timeout 300 "$@"; }
# an OpenWebText-like folder: documents as .txt, some compressed as the release's .xz
mkdir -p owt/urlsf_subset00 wt
split -l 2000 -d -a 3 "$SRC/data/tinyshakespeare.txt" owt/urlsf_subset00/doc_
for f in owt/urlsf_subset00/doc_*; do mv "$f" "$f.txt"; done
if command -v xz >/dev/null; then xz owt/urlsf_subset00/doc_001.txt owt/urlsf_subset00/doc_003.txt; fi
cp "$SRC/data/wikitext-small/train.txt" wt/wiki.train.tokens
cp "$SRC/data/wikitext-small/valid.txt" wt/wiki.valid.tokens
cp "$SRC/data/wikitext-small/test.txt" wt/wiki.test.tokens
TOK=tokenizer=gpt2
if ! grep -q '^TOKENIZER(GPT2' "$SRC/core/base/tokenizers.def"; then   # the presets as they
    TOK="tokenizer=bpe vocab_size=300"                                   # are, but for that line
    mkdir exp
    for p in openwebtext_dispatcher_pretrain wikitext103_dispatcher_after_openwebtext; do
        sed 's/^tokenizer = gpt2$/tokenizer = bpe/' "$SRC/experiments/$p.conf" >exp/$p.conf
    done
    export LMLAB_EXPERIMENTS=$W/exp
    echo "note: tokenizer=gpt2 is not built in: the presets run with tokenizer=bpe"
fi
TINY="d=16 nhid=16 layers=2 bptt=32 eval_every=0 sample_every=0 runs_dir=runs threads=1 $TOK"
T "$L" --db a.db train openwebtext_dispatcher_pretrain data=$W/owt $TINY steps=40 \
    final_eval_tokens=500 >pre.txt 2>&1
check "pre-training on the folder of .txt/.xz documents: finished" grep -q "run #1 finished" pre.txt
check "pre-training: the corpus prepared on first use, said so" grep -q "^data: prepared " pre.txt
check "pre-training: the final loss stated as an estimate over 500 tokens" grep -q "estimate over 500 tokens" pre.txt
C1=$(q a.db "select config from runs where id=1")
check "pre-training: the preset's batch 6, lr 6e-5, one head" bash -c "grep -qx 'batch=6' <<<'$C1' && grep -qx 'lr=6e-05' <<<'$C1' && grep -qx 'heads=1' <<<'$C1' && grep -qx 'model=dispatcher' <<<'$C1'"
# run 2: the same pre-training at a learning rate that moves a tiny model in 150 steps
T "$L" --db a.db train openwebtext_dispatcher_pretrain data=$W/owt $TINY steps=150 lr=3e-3 \
    final_eval_tokens=500 >pre2.txt 2>&1
check "pre-training again: the prepared tokens used, not prepared again" grep -q "^data: using the prepared tokens" pre2.txt
PRE_LOSS=$(q a.db "select loss from evals where run_id=2 order by step desc limit 1")
T "$L" --db a.db --json train wikitext103_dispatcher_after_openwebtext data=$W/wt init_from=2 \
    $TINY steps=10 log_every=1 >fine.txt 2>&1
check "fine-tuning on the WikiText layout from run 2: finished" grep -q '"status":"finished"' fine.txt
C3=$(q a.db "select config from runs where id=3")   # the fine-tune
check "fine-tuning: the preset's batch 5, lr 5e-5" bash -c "grep -qx 'batch=5' <<<'$C3' && grep -qx 'lr=5e-05' <<<'$C3'"
first() { grep '"event":"step"' "$1" | head -1 | sed -E 's/.*"loss":([-0-9.eE+]+).*/\1/'; }
if [ "$TOK" == tokenizer=gpt2 ]; then   # a fixed vocabulary: the same ids from fresh weights
    T "$L" --db a.db --json train wikitext103_dispatcher_after_openwebtext data=$W/wt init_from= \
        $TINY steps=1 log_every=1 >fresh.txt 2>&1   # run 4, same seed
    check "fine-tuning starts from the pre-trained weights (first loss $(first fine.txt), from fresh weights $(first fresh.txt))" \
        awk -v a="$(first fine.txt)" -v b="$(first fresh.txt)" 'BEGIN { exit !(a != "" && b != "" && a + 0 < b - 0.2) }'
else   # bpe: each corpus trains its own merges; a fresh model starts near ln(300) = 5.7
    check "fine-tuning starts from the pre-trained weights (first loss $(first fine.txt) < 5.3, a fresh one about 5.7; pre-trained $PRE_LOSS)" \
        awk -v a="$(first fine.txt)" -v p="$PRE_LOSS" 'BEGIN { exit !(a != "" && p != "" && p + 0 < 5.3 && a + 0 < 5.3) }'
fi
check "fine-tuning: the same tokenizer as the pre-training" \
    [ "$(q a.db 'select tokenizer_hash from runs where id=3')" == "$(q a.db 'select tokenizer_hash from runs where id=2')" ]
check "lineage: run 3's parent is run 2" [ "$(q a.db 'select parent_run from runs where id=3')" == 2 ]
T "$L" --db a.db -c "run 3" >show.txt 2>&1
check "run 3 says it was initialised from run 2 trained on the OpenWebText folder" grep -q "initialised from: run #2 at step .* (trained on $W/owt)" show.txt
T "$L" --db a.db -c "runs" >runs.txt 2>&1
check "runs shows where the fine-tune came from" grep -q "#2@" runs.txt
echo "$FAILS failed"
[ $FAILS == 0 ]
