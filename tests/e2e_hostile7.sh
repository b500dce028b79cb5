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

# ---- probe 2 ---------------------------------------------------------------------------
# 2.1: a damaged optimizer state refuses the resume (truncated, or one byte changed); a
# missing one goes on with fresh moments, said. 2.5: the resume uses the prepared tokens.
"$bin" -c "train quick steps=100000 d=32 eval_every=500 checkpoint_every=500 name=o tokens_dir=$dir/tok2 $C; watch seconds=2; stop" >out 2>&1
id=$(q "SELECT id FROM runs WHERE name='o'")
opt=$(ls "$dir"/runs/run-$id-*/step-*.optim.safetensors | tail -1)
[ -f "$opt" ] || fail "run o kept no optimizer state: $(cat out)"
cp "$opt" opt.keep
truncate -s 1000 "$opt"
refused "the optimizer state beside the checkpoint is damaged: .*runs past the end" train resume=$id
cp opt.keep "$opt"
python3 -c "
import os; p = '$opt'; n = os.path.getsize(p); f = open(p, 'r+b'); f.seek(n - 100)
b = f.read(1); f.seek(n - 100); f.write(bytes([b[0] ^ 1]))"
refused "do not match the checksum written with them" train resume=$id
[ "$(q "SELECT status FROM runs WHERE id=$id")" = stopped ] || fail "a refused resume changed run $id"
rm -f "$opt"
at=$(q "SELECT max(step) FROM checkpoints WHERE run_id=$id")   # steps= is the total to reach
"$bin" train resume=$id steps=$((at + 20)) >out 2>&1 || fail "resume without optimizer state: $(cat out)"
grep -q "optimizer state not found next to the checkpoint: continuing with fresh moments" out ||
    fail "the fresh moments are not said: $(cat out)"
grep -q "using the prepared tokens .*: the checkpoint's tokenizer" out ||
    fail "the resume did not use the run's prepared tokens: $(cat out)"
[ "$(ls "$dir/tok2" | grep -vc lock)" = 1 ] || fail "the resume prepared the corpus again: $(ls "$dir/tok2")"
echo "p2.1, p2.5: a damaged optimizer state refuses the resume; a missing one is said; one prepare"

# 2.2: a '#' comment after a quoted value, or holding quotes, is a comment
printf 'model = dispatcher\nd = 32\nsample_prompt = "The"   # a short prompt\nname = "a#b"  # the "main" one\n' >c1.conf
"$bin" -c "use $dir/c1.conf; show config" >out 2>&1 || fail "c1.conf: $(cat out)"
grep -qE "^  sample_prompt +The +\*" out && grep -qE "^  name +a#b +\*" out ||
    fail "comments after quotes: $(grep -E 'sample_prompt|  name' out)"
echo "p2.2: comments after quoted values are comments; a quoted '#' is a value"

# 2.3: a run named twice is deleted once, and the rest too
"$bin" train quick steps=5 d=32 name=r1 $C >/dev/null 2>&1 && "$bin" train quick steps=5 d=32 name=r2 $C >/dev/null 2>&1
a=$(q "SELECT id FROM runs WHERE name='r1'") b=$(q "SELECT id FROM runs WHERE name='r2'")
"$bin" rm $a $a $b yes >out 2>&1 || fail "rm $a $a $b yes: $(cat out)"
[ "$(q "SELECT count(*) FROM runs WHERE id IN ($a,$b)")" = 0 ] || fail "rm left runs: $(cat out)"
echo "p2.3: rm of a run named twice deletes it and the others"

# 2.4: a sweep whose process is killed is interrupted with its trial, and resumes
"$bin" sweep base=quick steps=100000 d=32 lr=1e-3,3e-3 eval_every=500 name=kill $C >sw.out 2>&1 &
bgpid=$!
wait_until 60 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$LMLAB_DB' \"SELECT count(*) FROM runs WHERE name='kill-t1' AND last_step>0\")\" = 1 ]" ||
    fail "the sweep's first trial did not start within 60 s: $(cat sw.out)"
kill -9 $bgpid; bwait $bgpid 30 "the killed sweep"; bgpid=
"$bin" sweep list >out 2>&1 || fail "sweep list: $(cat out)"
grep -qE "kill +grid +interrupted" out || fail "a killed sweep is not interrupted: $(cat out)"
sw=$(q "SELECT id FROM sweeps WHERE name='kill'")
[ "$(q "SELECT status FROM sweep_trials WHERE sweep_id=$sw AND trial=1")" = interrupted ] ||
    fail "its trial is $(q "SELECT status FROM sweep_trials WHERE sweep_id=$sw AND trial=1")"
echo "p2.4: a killed sweep and its trial are interrupted"

# 2.6: --json gives JSON: import, help set, a one-shot usage error
"$bin" save $id "$dir/s.safetensors" >/dev/null 2>&1 || fail "save $id"
for c in "import $dir/s.safetensors" "help set" "use quick"; do   # bounded: three commands
    "$bin" --json $c >out 2>&1
    python3 -c "
import json, sys
for l in open('out'): json.loads(l)" || fail "--json $c: not JSON: $(head -3 out)"
done
echo "p2.6: --json import, help set and a one-shot usage error are JSON"

# 2.7: eval of a run with no best yet says how to open a kept checkpoint
"$bin" -c "train quick steps=100000 d=32 eval_every=100000 checkpoint_every=1 name=noeval $C; stop" >/dev/null 2>&1
refused "open ID which=final" eval $(q "SELECT id FROM runs WHERE name='noeval'")
# 2.8: a swept list holding one value twice is refused (no fake seed noise)
refused "1e-3 and 0.001 are the same value" sweep base=quick steps=5 lr=1e-3,0.001 name=dup $C
echo "p2.7, p2.8: eval without a best names the fix; a repeated swept value is refused"

# ---- probe 3 ---------------------------------------------------------------------------
# 3.2: a diverging step's diagnostics keep their NaN in the CSV export
"$bin" train quick steps=100 lr=30 optimizer=sgd log_every=1 diverge_factor=0 diagnostics=5 \
    name=sgd30 $C >out 2>&1
grep -q "diverged" out || fail "the sgd lr=30 run did not diverge: $(cat out)"
sid=$(q "SELECT id FROM runs WHERE name='sgd30'")
"$bin" export $sid >csv 2>&1 || fail "export $sid: $(head -3 csv)"
grep -qE "^$sid,[0-9]+,grad/[^,]+,nan$" csv ||
    fail "no NaN gradient norm of the diverging step in the CSV: $(grep grad/encoder.weight csv)"
# 3.3: an on-demand sample is recorded at its weights' step
"$bin" sample runs=$id prompt=ROMEO tokens=5 >out 2>&1 || fail "sample runs=$id: $(cat out)"
[ "$(q "SELECT step FROM samples WHERE run_id=$id AND settings LIKE 'tokens=5 %' ORDER BY rowid DESC LIMIT 1")" -gt 0 ] ||
    fail "an on-demand sample is recorded at step 0: $(q "SELECT run_id, step, settings FROM samples")"
echo "p3.2, p3.3: the CSV keeps a NaN diagnostic; an on-demand sample has its weights' step"

# 3.4: a run paused from another process names the exact step; pause without an id names
# the command that reaches it
"$bin" train quick steps=100000 d=32 eval_every=100000 name=pz $C >pz.out 2>&1 &
bgpid=$!
wait_until 60 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$LMLAB_DB' \"SELECT count(*) FROM runs WHERE name='pz' AND last_step>0\")\" = 1 ]" ||
    fail "run pz did not start within 60 s: $(cat pz.out)"
pid=$(q "SELECT id FROM runs WHERE name='pz'")
refused "\`pause $pid\` does it from here" pause
"$bin" pause $pid >out 2>&1 || fail "pause $pid: $(cat out)"
wait_until 30 sh -c "'$bin' status 2>&1 | grep -q 'paused: after step [0-9]'" ||
    fail "status does not name the step the run paused after: $("$bin" status 2>&1)"
"$bin" stop $pid >out 2>&1 || fail "stop $pid: $(cat out)"
bwait $bgpid 60 "the stopped run pz"; bgpid=
echo "p3.4: a paused run's status names its step; pause without an id names \`pause ID\`"

# ---- probe 4: a line longer than a piece (8 MiB) is cut between words -------------------
# GPT-2's ids of a 9.7 MB line without a newline: each word's ids as in a short text (the
# cut that fell inside "gamma" at byte 8,388,608 gave "Ġga mma")
python3 -c "
import random, sys; random.seed(2); w = ['alpha', 'beta', 'gamma', 'delta', 'eps']
sys.stdout.write(' '.join(random.choice(w) for _ in range(1800000)))" >huge.txt
python3 -c "import sys; sys.stdout.write('x' + ' alpha beta gamma delta eps' * 200)" >short.txt
for f in huge short; do   # bounded: two files
    "$bin" data prepare "$dir/$f.txt" tokenizer=gpt2 tokens_dir="$dir/tok_$f" >out 2>&1 ||
        fail "prepare $f.txt: $(cat out)"
done
python3 - "$dir" "$(dirname "$0")/../data/gpt2/encoder.json" <<'PY' ||
import glob, json, struct, sys
d, enc = sys.argv[1], json.load(open(sys.argv[2]))
dec = {v: k for k, v in enc.items()}
def words(root):   # the ids grouped by word: a word's first token starts with a space (Ġ)
    ids = []
    for pre in ('train', 'valid'):
        for f in sorted(glob.glob(root + '/*/' + pre + '_*.bin')):
            b = open(f, 'rb').read(); n = struct.unpack('<i', b[8:12])[0]
            ids += struct.unpack('<%dH' % n, b[1024:1024 + 2 * n])
    g = []
    for i in ids:
        if dec[i].startswith('\u0120') or not g: g.append([])
        g[-1].append(i)
    return g[1:]   # the first word has no space before it
want = {''.join(dec[i] for i in w): tuple(w) for w in words(d + '/tok_short')}
bad = [w for w in words(d + '/tok_huge') if want.get(''.join(dec[i] for i in w)) != tuple(w)]
assert not bad, [[dec[i] for i in w] for w in bad[:3]]
PY
    fail "a word of the long line was split where the line was cut into pieces"
printf 'never prepared\n' >np.txt
refused "no prepared tokens [0-9a-f]* in .* for that corpus" data rm "$dir/np.txt" tokens_dir="$dir/tok"
# data rm of a directory answers without walking it (a tree 70 deep, which the walk
# refuses); / and the system directories are refused at once, by rm, prepare and train
# (they walked the whole disk first)
d=deep; for i in $(seq 70); do d=$d/d; done; mkdir -p "$d"; echo a >deep/a.txt
refused "no prepared tokens [0-9a-f]* in .* for that corpus" data rm "$dir/deep" \
    tokens_dir="$dir/tok"
refused "'/' is the root of the filesystem, not a corpus.*\`data list\` shows the prepared" \
    data rm / tokens_dir="$dir/tok"
refused "'/usr' is a system directory, not a corpus" data rm /usr/ tokens_dir="$dir/tok"
refused "'/usr' is a system directory, not a corpus" data prepare /usr tokens_dir="$dir/tok"
refused "'/' is the root of the filesystem, not a corpus" train quick data=/ steps=5 $C
echo "p4: a line longer than a piece keeps GPT-2's ids: it is cut between words; data rm of"
echo "    a corpus never prepared says so, of any directory at once; / and /usr are refused"

# a key on two lines of a sweep file or an experiment file: refused, both lines named
# (the last won silently); a bf16: line after the plain one still overrides it
printf 'base = quick\nsteps = 30\nlr = 1e-3,2e-3\n# a later edit\nsteps = 10\n' >twice.sweep
refused "twice.sweep:5: steps is given twice (lines 2 and 5): keep one" \
    sweep file="$dir/twice.sweep" $C
printf 'model = dispatcher\nsteps = 30\nlr = 1e-3\nsteps = 10\n' >twice.conf
refused "twice.conf:4: steps is given twice (lines 2 and 4): keep one" train "$dir/twice.conf" $C
printf 'steps = 30\nbf16: steps = 40\nfp32: steps = 40\n' >cpu.conf
"$bin" -c "use $dir/cpu.conf" >out 2>&1 || fail "a CPU's line after the plain one: $(cat out)"
echo "p5: a key twice in a sweep or experiment file is refused, naming both lines"

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
