#!/usr/bin/env bash
# e2e_hostile.sh — the fifth round of hostile input (issue 38, items 4 and 6-9) against
# the real binary: a 1.7 KB checkpoint whose settings describe a large model and that
# holds no tensors is refused by open, import, train init_from= and sample runs= before
# anything is allocated (checked under a 2 GB address-space limit: the model it describes
# needs about 4 GB); no silent cuts (a 60,000-byte note kept whole, a 120,000-byte one
# refused naming the limit, a group of 257 ids files 257, a 22-digit fork step or run id
# refused, never read as 9223372036854775807); a group name that is not UTF-8 refused, and
# one stored by hand printed (escaped) by --json group, runs group_by=group and sample
# runs=, every object present. Every wait is bounded. Usage: e2e_hostile.sh LMLAB_BINARY.
set -u
. "$(dirname "$0")/e2e_lib.sh"   # ok, bad, check and FAILS
. "$(dirname "$0")/bounded.sh"   # bwait: every wait on a child is bounded
L=$(readlink -f "$1")
START=$(cd "$(dirname "$0")/.." && pwd)/scripts/start.sh
W=$(mktemp -d /tmp/lmlab_hostile_XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
has() { grep -qE -- "$2" "$1"; }
hasnt() { ! grep -qE -- "$2" "$1"; }
eq() { [ "$1" == "$2" ]; }
q() { sqlite3 -cmd ".timeout 5000" "$DB" "$1"; }
DB=t.db
lm() { timeout 300 "$L" --db "$DB" "$@"; }

"$L" --db "$DB" train quick steps=20 checkpoint_every=10 runs_dir=R >/dev/null 2>&1 ||
    { echo "training failed"; exit 1; }

echo "== 4. a tiny checkpoint that describes a large model"
ck=$(ls R/run-1-*/step-*.safetensors | grep -v optim | head -1)
python3 - "$ck" <<'PY'
import json, struct, sys
b = open(sys.argv[1], 'rb').read()
n = struct.unpack('<Q', b[:8])[0]
meta = json.loads(b[8:8 + n])['__metadata__']
big = {'d': 'd=2048', 'nhid': 'nhid=8192', 'layers': 'layers=12'}
meta['config'] = '\n'.join(big.get(l.split('=')[0], l) for l in meta['config'].splitlines()) + '\n'
meta.pop('weights_fnv1a', None)
h = json.dumps({'__metadata__': meta}).encode()     # the settings, no tensor at all
open('big.safetensors', 'wb').write(struct.pack('<Q', len(h)) + h)
PY
check "the crafted checkpoint is under 2 KB" [ "$(stat -c %s big.safetensors)" -lt 2048 ]
limited() { (ulimit -v 2000000; lm "$@") >lim.out 2>&1; }
for c in "open big.safetensors" "import big.safetensors" \
         "use quick; set d=2048 nhid=8192 layers=12; train init_from=big.safetensors steps=1"; do
    limited -c "$c"
    check "'$c' under 2 GB: refused naming the missing tensor, nothing allocated" \
        has lim.out "tensor 'encoder.weight' is missing"
done
# sample runs=: the checkpoint it reads (the run record's best, as open) is the crafted one
newest=$(ls R/run-1-*/best.safetensors)
cp "$newest" newest.keep && cp big.safetensors "$newest"
limited -c "sample runs=1 tokens=5"
check "'sample runs=1' on it under 2 GB: refused naming the missing tensor" \
    has lim.out "tensor 'encoder.weight' is missing"
cp newest.keep "$newest"

echo "== 6. ulimit -v, a second signal, a damaged store"
(ulimit -v 300000; timeout -s KILL 120 "$L" --db u.db train quick d=256 bptt=256 batch=16 \
    threads=1 steps=50 runs_dir=R) >ulim.out 2>&1
rc=$?
check "a model too large for ulimit -v 300 MB is refused at once (exit $rc, 137 = hung)" \
    bash -c "[ $rc -ne 0 ] && [ $rc -ne 137 ]"
check "... naming the address-space limit" has ulim.out "under the address-space limit \(ulimit -v"
"$L" --db s6.db train quick steps=1000000 runs_dir=R >sig.out 2>&1 &
pid=$!
for _ in $(seq 1 600); do grep -q "^step" sig.out && break; sleep 0.1; done
kill -TERM $pid; kill -HUP $pid
bwait $pid 60 "lmlab after two signals"
check "a second signal ends lmlab at once, saying so" has sig.out "a second signal: exiting now"
cp "$DB" clean.db
sqlite3 clean.db "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
cp clean.db dam.db
pg=$(sqlite3 dam.db "SELECT rootpage FROM sqlite_master WHERE name='metrics'")
head -c 4096 /dev/urandom | dd of=dam.db bs=1 seek=$(((pg - 1) * 4096)) conv=notrunc 2>/dev/null
for c in runs "run 1" "export 1"; do
    timeout 60 "$L" --db dam.db -c "$c" >dam.out 2>&1
    check "'$c' on a store with a damaged metrics table: exit status not 0" [ $? -ne 0 ]
    check "... and says the store is damaged" has dam.out "dam.db is damaged"
done
# a large store is checked whole once a day (every page read: 1.5 s a GB at each command);
# here "large" is anything, and the check's time is in store_meta
cp clean.db big.db
LMLAB_TEST_WHOLE_CHECK_BYTES=0 "$L" --db big.db -c runs >big.out 2>&1
check "a clean large store: its whole check is remembered" \
    [ -n "$(sqlite3 big.db "SELECT value FROM store_meta WHERE key='whole_checked'")" ]
sqlite3 big.db "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
head -c 4096 /dev/urandom | dd of=big.db bs=1 seek=$(((pg - 1) * 4096)) conv=notrunc 2>/dev/null
LMLAB_TEST_WHOLE_CHECK_BYTES=0 timeout 60 "$L" --db big.db -c runs >big.out 2>&1
check "... within the day it is not read again (runs reads the run list only)" [ $? -eq 0 ]
sqlite3 big.db "DELETE FROM store_meta WHERE key='whole_checked'" 2>/dev/null
LMLAB_TEST_WHOLE_CHECK_BYTES=0 timeout 60 "$L" --db big.db -c runs >big.out 2>&1
check "... and the next whole check finds the damage" has big.out "big.db is damaged"

echo "== 7. no silent cuts"
"$L" --db "$DB" train quick steps=20 checkpoint_every=10 runs_dir=R >/dev/null 2>&1   # run 2
note_file() { { printf 'note 1 "'; head -c "$1" /dev/zero | tr '\0' a; printf '"\n'; } >note.lm; }
note_file 60000
lm note.lm >note.out 2>&1
check "a 60,000-byte note is kept whole" eq "$(q 'SELECT length(notes) FROM runs WHERE id=1')" 60000
note_file 120000
lm note.lm >note.out 2>&1
check "a 120,000-byte note is refused (exit 1)" eq "$?" 1
check "... naming the limit" has note.out "the note is 120000 bytes; a note holds at most 65536 bytes"
check "... and the stored note is unchanged" eq "$(q 'SELECT length(notes) FROM runs WHERE id=1')" 60000
q "WITH RECURSIVE k(i) AS (SELECT 3 UNION ALL SELECT i + 1 FROM k WHERE i < 300)
   INSERT INTO runs(id, name, status, created) SELECT i, 'r' || i, 'finished', 1 FROM k"
echo "group many $(seq -s ' ' 1 257)" >group.lm
lm group.lm >group.out 2>&1
check "group with 257 ids files 257" has group.out "^257 runs filed into group many"
check "... all of them in the store" eq "$(q "SELECT count(*) FROM run_groups WHERE name='many'")" 257
lm --json group many >groupj.out 2>&1
check "--json group lists all 257 ids" eq "$(python3 -c 'import json,sys; print(len(json.load(open("groupj.out"))["runs"]))')" 257
lm fork 1 step=1234567890123456789012 steps=5 >fork.out 2>&1
check "a 22-digit fork step is refused" has fork.out "step=1234567890123456789012 is not a step number"
check "... never read as 9223372036854775807" hasnt fork.out "9223372036854775807 "
lm run 123456789012345678901234 >big.out 2>&1
check "a 24-digit run id is refused, not cut" hasnt big.out "9223372036854775807"

echo "== 8. --json prints every object"
before=$(q "SELECT count(*) FROM run_groups")
lm group "$(printf 'bad\xff')" 1 2 >g8.out 2>&1
check "a group name that is not UTF-8 is refused (exit status not 0)" [ $? -ne 0 ]
check "... saying so" has g8.out "group name.*not valid UTF-8"
check "... and the store is unchanged" \
    eq "$(q "SELECT count(*) || ':' || sum(hex(name) LIKE '%FF') FROM run_groups")" "$before:0"
# stored by an older lmlab (or by hand): printed, escaped
q "INSERT OR REPLACE INTO run_groups(run_id, name) VALUES(1, CAST(X'6f6c64ff' AS TEXT)), (2, CAST(X'6f6c64ff' AS TEXT))"
q "UPDATE runs SET name=CAST(X'6e616d65ff' AS TEXT) WHERE id=2"
lm --json group "$(printf 'old\xff')" >j1.out 2>&1
check "--json group OLD<ff>: its object is printed" has j1.out '"event":"group".*"n":2'
lm --json runs group_by=group >j2.out 2>&1
check "--json runs group_by=group: the group OLD<ff> is printed (escaped)" \
    has j2.out '"event":"run_group","key":"group","value":"old\\\\xff","n":2' 
lm --json sample runs=1,2 tokens=5 >j3.out 2>&1
check "--json sample runs=1,2: both objects" eq "$(grep -c '"event":"sample"' j3.out)" 2
check "every line printed is JSON" python3 -c 'import json,sys
for f in ("j1.out", "j2.out", "j3.out"):
    [json.loads(l) for l in open(f) if l.strip()]'

echo "== 9. small ones"
DB=s9.db
lm -c "use quick; train seeds=1 group=solo steps=20; wait" >s9a.out 2>&1
check "train seeds=1 group=solo files the run into group solo" \
    eq "$(q "SELECT count(*) FROM run_groups WHERE name='solo'")" 1
"$L" --db "$DB" train quick steps=100000 checkpoint_every=50 log_every=100000 runs_dir=R9 >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 1200); do   # until the store holds its checkpoint at 100
    [ "$(q "SELECT count(*) FROM checkpoints WHERE run_id=2 AND step >= 100")" -ge 1 ] 2>/dev/null && break
    sleep 0.1
done
kill -9 $pid
bwait $pid 30 "the killed training" 2>/dev/null
lm runs >/dev/null 2>&1
step=$(q "SELECT reason FROM runs WHERE id=2" | grep -oE '[0-9]+$')
check "a killed run's reason names a step at or past its checkpoint at 100 (says ${step:-?})" \
    [ "${step:-0}" -ge 100 ]
mkdir adir
"$L" --db "$DB" ./adir >dir.out 2>&1
check "lmlab ./adir (a directory): exit status not 0" [ $? -ne 0 ]
check "... saying it is a directory" has dir.out "adir: not a regular file \(a directory\)"
"$L" --db "$DB" --json nosuchcommand >js.out 2>js.err
check "--json nosuchcommand: exit status 2" eq "$?" 2
check "... and its error is JSON" python3 -c 'import json; o = json.load(open("js.err")); assert not o["ok"] and "nosuchcommand" in o["error"]'
lm -c "use quick; sweep name=imp lr=1e-3,3e-3 steps=30 eval_every=10; sweep wait" >/dev/null 2>&1
q "UPDATE sweep_trials SET params = params || ' d=32' WHERE sweep_id=1"   # one value of d
lm sweep importance 1 >imp.out 2>&1
check "sweep importance: a numeric setting with one value is not called categorical" \
    bash -c "grep -E '^ +d ' imp.out | grep -qv categorical"

DB=fork.db
"$L" --db "$DB" train quick steps=60 checkpoint_every=30 runs_dir=RF >/dev/null 2>&1
lm -c "fork 1 step=30 steps=60; wait" >/dev/null 2>&1
lm rm 1 yes >/dev/null 2>&1
lm run 2 >fork.out 2>&1
check "after rm of a fork's parent, the fork still says where it started" \
    has fork.out "forked from: a deleted run, at its step 30"
check "the fork's reason says what it trained (30 steps from #1@30), not \"finished 60 steps\"" \
    has fork.out "status: +finished — finished at step 60: trained 30 steps from #1@30 after "
: >afile
timeout 60 bash "$START" --install afile/pre >st.out 2>&1
check "start.sh --install under a file (relative): refused at once (exit 2)" eq "$?" 2
check "... saying which part is a file, as an absolute path" has st.out "$W/afile is a file, not a folder"
timeout 60 bash "$START" --install "" >st.out 2>&1
check "start.sh --install '': refused, no traceback" bash -c "grep -q 'the prefix is empty' st.out && ! grep -q Traceback st.out"

echo "== R. hostile arguments to every new command: a clear error, the store unchanged"
DB=t.db
BAD=$(printf 'x\xff\xfe'); ESC=$(printf '\033[31mred\033[0m'); BIG=$(head -c 10000 /dev/zero | tr '\0' a)
IDS=$(seq -s ' ' 1000 1199); CIDS=$(seq -s , 1000 1199)
before=$(sqlite3 "$DB" .dump | md5sum)
bad_args=("jobs $BAD" "pause 999" "pause $BAD" "resume 999" "stop $ESC" "stop 999"
          "fork 999 step=10" "fork 1 step=10 lr=$BAD" "fork 1 step=$BIG" "fork 1 step=10 name=$ESC"
          "group $ESC 1" "group $BAD 1" "group g $IDS" "group $BIG 1" "group g 999"
          "runs columns=$BAD" "runs columns=nosuch,lr" "runs group_by=$ESC" "runs columns=$BIG"
          "sweep importance $BAD" "sweep importance 999" "plot sweep 999 file=p.png"
          "plot sweep $BAD file=p.png" "sample runs=999" "sample runs=$BAD" "sample runs=$CIDS"
          "sample runs=1 prompt=$BAD")
for c in "${bad_args[@]}"; do
    timeout 60 "$L" --db "$DB" $c >r.out 2>&1
    rc=$?
    shown=$(printf '%s' "$c" | cut -c1-40 | cat -v)
    check "'$shown': exit status not 0 ($rc), an error said" \
        bash -c "[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q 'error' r.out"
done
printf 'group g\000x 1\n' >nul.lm
timeout 60 "$L" --db "$DB" nul.lm >r.out 2>&1
check "a NUL byte in a script line: refused, nothing run" has r.out "holds a NUL byte"
check "the store is unchanged by all of them" eq "$(sqlite3 "$DB" .dump | md5sum)" "$before"

echo "$FAILS failed"
[ "$FAILS" -eq 0 ]
