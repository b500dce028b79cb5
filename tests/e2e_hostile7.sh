#!/usr/bin/env bash
# e2e_hostile7.sh — round 7 of hostile input (issue 50's stop): the reproductions of a
# probe of the fifth wave's features against the real binary. A headless `train` whose run
# fails at its first batch says so and exits 1; a fine-tune that keeps its checkpoint's
# tokenizer records that tokenizer and no bits per character; a run stopped while it
# waits for disk space to checkpoint is recorded stopped, saying which checkpoint it lacks;
# a damaged id in lmlab's own prepared tokens gets the right advice; bench's numbers and
# a numeric `runs` filter are checked; a directory where a token file should be is named.
# Usage: e2e_hostile7.sh LMLAB_BINARY
set -u
bin=$(readlink -f "$1")
. "$(dirname "$0")/bounded.sh"   # bwait, wait_until: every wait on a child is bounded
dir=$(mktemp -d)
bgpid= mnt=
trap 'kill $bgpid 2>/dev/null; [ -n "$mnt" ] && umount "$mnt" 2>/dev/null; rm -rf "$dir"' EXIT
cd "$dir"
export LMLAB_DB="$dir/s.db"
command -v sqlite3 >/dev/null || { echo "sqlite3 is needed (scripts/deps.sh installs it)"; exit 1; }
q() { sqlite3 -cmd '.timeout 5000' "$LMLAB_DB" "$1"; }
fail() { echo "FAIL: $*"; exit 1; }
# refused WANT ARGS...: lmlab ARGS exits 1 or 2 (no signal) saying WANT
refused() {
    local want=$1; shift
    "$bin" "$@" >out 2>&1
    local rc=$?
    { [ $rc -ge 1 ] && [ $rc -le 2 ]; } || fail "lmlab $*: exit $rc, not a refusal: $(cat out)"
    grep -q -- "$want" out || fail "lmlab $*: the message lacks '$want': $(cat out)"
}
C="runs_dir=$dir/runs sample_every=0 batch=4"

# ---- 1: a run failing at its first batch, headless: said, exit 1, every time -----------
python3 - <<'EOF'
import struct, random, os
random.seed(1); os.makedirs('late', exist_ok=True)
def w(p, t):
    open(p, 'wb').write(struct.pack('<256i', 20240520, 1, len(t), *([0] * 253)) +
                       struct.pack('<%dH' % len(t), *t))
# ids beyond GPT-2's vocabulary after the first 64 Ki tokens: past the check at open
w('late/x_train_000.bin', [random.randrange(50257) for _ in range(70000)] + [65535] * 200000)
w('late/x_val_000.bin', [random.randrange(50257) for _ in range(5000)])
EOF
for i in 1 2 3 4; do   # bounded: four tries (the failure raced the end of `train`)
    "$bin" train quick data="$dir/late" tokenizer=gpt2 steps=20 d=32 $C >out 2>&1
    rc=$?
    [ $rc -eq 1 ] || fail "try $i: a run failing at once exited $rc, not 1: $(cat out)"
    grep -q "failed: .*is id 65535, beyond the tokenizer's vocabulary" out ||
        fail "try $i: the failure is not said: $(cat out)"
done
echo "1: a run failing at its first batch says so and exits 1 (4 of 4)"

# ---- 2: a fine-tune keeps its checkpoint's tokenizer, and says which ---------------------
"$bin" train quick tokenizer=gpt2 steps=10 eval_every=0 $C >out 2>&1 || fail "gpt2 run: $(cat out)"
gid=$(q "SELECT max(id) FROM runs")
"$bin" train quick init_from=$gid steps=10 eval_every=0 $C >out 2>&1 || fail "fine-tune: $(cat out)"
fid=$(q "SELECT max(id) FROM runs")
grep -q "bits per character" out && fail "a GPT-2 fine-tune printed bits per character: $(cat out)"
[ "$(q "SELECT tokenizer FROM runs WHERE id=$fid")" = gpt2 ] ||
    fail "the fine-tune is recorded with tokenizer $(q "SELECT tokenizer FROM runs WHERE id=$fid")"
"$bin" run $fid >out 2>&1 && grep -q "tokenizer=gpt2" out || fail "run $fid's settings: $(cat out)"
"$bin" eval $fid >out 2>&1 || fail "eval $fid: $(cat out)"
grep -q "bits per character" out && fail "eval of a GPT-2 run printed bits per character: $(cat out)"
echo "2: a fine-tune from a GPT-2 run is recorded gpt2, with no bits per character"

# ---- 4: a damaged id in lmlab's own prepared tokens: the cache's fix, not a tokenizer -----
"$bin" data prepare tinyshakespeare tokens_dir="$dir/tok" >out 2>&1 || fail "prepare: $(cat out)"
key=$(ls "$dir/tok" | grep -v lock)
python3 -c "
import struct; f = open('$dir/tok/$key/train_000000.bin', 'r+b'); f.seek(1024 + 1000)
f.write(struct.pack('<H', 9999))"
refused "these prepared tokens are damaged .*lmlab data rm $key yes" \
    train quick tokens_dir="$dir/tok" steps=20 $C
grep -q "another tokenizer" out && fail "a damaged cache blamed on another tokenizer: $(cat out)"
"$bin" data rm $key yes tokens_dir="$dir/tok" >out 2>&1 || fail "data rm: $(cat out)"
"$bin" train quick tokens_dir="$dir/tok" steps=20 $C >out 2>&1 || fail "after data rm: $(cat out)"
echo "4: a damaged prepared id says to delete the tokens; after that the run trains"

# ---- 7: a directory where a token file should be ----------------------------------------
key=$(ls "$dir/tok" | grep -v lock)
rm -f "$dir/tok/$key/train_000000.bin" && mkdir -p "$dir/tok/$key/train_000000.bin/sub"
touch "$dir/tok/$key/train_000000.bin/sub/f"
"$bin" train quick tokens_dir="$dir/tok" steps=20 $C >out 2>&1 ||
    fail "a directory in place of a prepared shard was not prepared again: $(cat out)"
grep -q "train_000000.bin' is not a regular file (a directory)" out ||
    fail "the shard's being a directory is not said: $(cat out)"
mkdir -p nano/train.bin
python3 -c "import struct; open('nano/val.bin','wb').write(struct.pack('<5000H', *range(5000)))"
refused "nano/train.bin' is not a regular file" train quick data="$dir/nano" tokenizer=gpt2 steps=5 $C
echo "7: a directory as a shard is said and prepared again; as nanoGPT's train.bin, named"

# ---- 5, 6: bench's numbers and a numeric runs filter ---------------------------------------
for a in steps=-1 steps=abc tokens=0 gb=2x; do   # bounded: four values
    refused "bench: ${a%%=*}=${a#*=}: give" bench small $a
done
refused "steps takes a number, not '>0'" runs "steps>>0"
refused "val_loss takes a number, not '0abc'" runs "val_loss<0abc"
refused "lr takes a number" runs "lr<abc"
"$bin" runs "steps>0" >out 2>&1 || fail "a good numeric filter: $(cat out)"
echo "5, 6: bench's steps=/tokens=/gb= and numeric runs filters refuse what is not a number"

# ---- 3: a stop while a checkpoint waits for disk space: stopped, saying what is missing -----
if [ "$(id -u)" -ne 0 ] || ! mkdir -p full || ! mount -t tmpfs -o size=64k tmpfs full 2>/dev/null; then
    echo "3: skip: a full disk needs root and a tmpfs mount"
else
    mnt="$dir/full"
    "$bin" train quick steps=20 runs_dir="$dir/full/runs" sample_every=0 eval_every=10 \
        eval_batches=2 >train.out 2>&1 &
    bgpid=$!
    wait_until 120 grep -q "training paused" train.out ||
        fail "the run did not pause on the full disk within 120 s: $(cat train.out)"
    kill -TERM $bgpid
    bwait $bgpid 60 "the run stopped by SIGTERM"; bgpid=
    id=$(q "SELECT max(id) FROM runs")
    [ "$(q "SELECT status FROM runs WHERE id=$id")" = stopped ] ||
        fail "a run stopped without its final checkpoint is $(q "SELECT status FROM runs WHERE id=$id")"
    q "SELECT reason FROM runs WHERE id=$id" | grep -q "the step-20 checkpoint was not written (.*disk full.*): it has no checkpoint" ||
        fail "its end does not say the checkpoint is missing: $(q "SELECT reason FROM runs WHERE id=$id")"
    "$bin" run $id >out 2>&1 && grep -q "it has no checkpoint" out || fail "run $id: $(cat out)"
    echo "3: a run stopped while its checkpoint waited for space is stopped, without a checkpoint, and says so"
fi
echo "e2e_hostile7: all passed"
