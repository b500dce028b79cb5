#!/usr/bin/env bash
# e2e_watch.sh — issue 49 items 5, 6 and 7: alerts no owner can judge are judged by any lmlab
# process (a frozen owner's `stalled`, a dead owner's `ended`), fired once; the jobs board
# says "no step for N s" of a frozen run; every fired alert reaches the run's console
# (`log ID`) and the owner's terminal; a live run of another process is sampled from any
# shell (its newest checkpoint, one written on request when it has none).
# Usage: e2e_watch.sh LMLAB_BINARY
set -u
bin=$(readlink -f "$1")
. "$(dirname "$0")/bounded.sh"   # bwait: every wait on a child is bounded
dir=$(mktemp -d)
cd "$dir"
export LMLAB_DB="$dir/t.db"
kids=()
cleanup() { for p in "${kids[@]}"; do kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
            rm -rf "$dir"; }
trap cleanup EXIT
die() { echo "FAIL: $*"; exit 1; }
status=0
fail() { echo "FAIL: $*"; status=1; }
LONG="steps=10000000 log_every=50 eval_every=100000 checkpoint_every=1000000 sample_every=0"

# the pid of run ID's owner once it has logged a step (60 s at most)
owner_of() {
    local id=$1 p=""
    for _ in $(seq 1 300); do   # bounded: 60 s
        p=$("$bin" --json jobs 2>/dev/null | grep "\"id\":$id," | grep -v '"step":0,' |
            sed -E 's/.*"pid":([0-9]+).*/\1/')
        [ -n "$p" ] && break
        sleep 0.2
    done
    echo "$p"
}

# --- item 6: an alert the owner fires reaches its terminal and the run's console
"$bin" train quick steps=300 'alerts=step>50' >o1.txt 2>&1 || die "train: $(cat o1.txt)"
grep -q "note: alert step>50 fired: step" o1.txt || fail "the owner's terminal has no alert line: $(cat o1.txt)"
"$bin" log 1 >l1.txt 2>&1 || die "log 1"
grep -qE "^[0-9:]{8} alert +alert step>50 fired: step" l1.txt || fail "log 1 has no alert line: $(cat l1.txt)"
echo "checked: item 6 the owner's alert on its terminal and console"

# --- item 5: a frozen owner's stalled:3, judged by `jobs`, once; its terminal hears it
"$bin" train quick $LONG alerts=stalled:3 >o2.txt 2>&1 &
kids+=($!)
tpid=$!
pid=$(owner_of 2)
[ -n "$pid" ] || die "run 2 never logged a step: $(cat o2.txt)"
kill -STOP "$pid"
seen=""
for _ in $(seq 1 100); do   # bounded: 20 s for the silence to pass 3 s
    "$bin" jobs >j.txt 2>&1
    grep -q "^alert: run #2 stalled:3 fired: stalled: no step for" j.txt && { seen=1; break; }
    sleep 0.2
done
[ -n "$seen" ] || fail "jobs never fired run 2's stalled:3 while its owner was frozen: $(cat j.txt)"
"$bin" jobs >j2.txt 2>&1
grep -q "^alert:" j2.txt && fail "stalled:3 fired twice: $(cat j2.txt)"
"$bin" log 2 >l2.txt 2>&1
grep -q "alert stalled:3 fired: stalled: no step for .*(seen by pid [0-9]*, jobs)" l2.txt ||
    fail "log 2 has no line of the alert jobs fired: $(tail -3 l2.txt)"
quiet=""
for _ in $(seq 1 400); do   # bounded: 80 s for the board's 45 s of silence
    "$bin" jobs >j3.txt 2>&1
    grep -qE "^#2 .*no step for [0-9]+ s$" j3.txt && { quiet=1; break; }
    sleep 0.2
done
[ -n "$quiet" ] || fail "the board never says run 2 made no step: $(cat j3.txt)"
grep -E "^#2 " j3.txt | grep -qE " [0-9]+h[0-9]+ | [0-9]+:[0-9]+ " && fail "an ETA for a frozen run: $(cat j3.txt)"
kill -CONT "$pid"
told=""
for _ in $(seq 1 100); do   # bounded: 20 s for the thawed owner to print it
    grep -q "note: alert stalled:3 fired" o2.txt && { told=1; break; }
    sleep 0.2
done
[ -n "$told" ] || fail "the owner's terminal never heard of its stalled alert"
"$bin" stop 2 >/dev/null 2>&1
bwait "$tpid" 60 "run 2" >/dev/null
echo "checked: item 5 a frozen owner's stalled alert, judged by jobs; the board marks it"

# --- item 5: a dead owner's `ended`, judged by `watch`
"$bin" train quick $LONG alerts=ended >o3.txt 2>&1 &
kids+=($!)
tpid=$!
pid=$(owner_of 3)
[ -n "$pid" ] || die "run 3 never logged a step: $(cat o3.txt)"
kill -KILL "$pid"
bwait "$tpid" 10 "run 3 killed" >/dev/null
"$bin" watch seconds=2 >w.txt 2>&1 || fail "watch: $(cat w.txt)"
grep -q "^alert: run #3 ended fired: ended (interrupted) at step [0-9]*: its process (pid $pid) is gone" w.txt ||
    fail "watch did not fire run 3's ended: $(cat w.txt)"
"$bin" watch seconds=1 >w2.txt 2>&1
grep -q "^alert:" w2.txt && fail "ended fired twice: $(cat w2.txt)"
"$bin" log 3 | grep -q "alert ended fired: ended (interrupted)" || fail "log 3 has no alert line"
echo "checked: item 5 a dead owner's ended alert, judged by watch"

# --- item 7: a live run of another process, sampled from any shell
"$bin" train quick $LONG >o4.txt 2>&1 &
kids+=($!)
tpid=$!
pid=$(owner_of 4)
[ -n "$pid" ] || die "run 4 never logged a step: $(cat o4.txt)"
"$bin" run 4 | grep -q "safetensors" && die "run 4 has a checkpoint already"
"$bin" sample runs=4 tokens=5 >s1.txt 2>&1 || fail "sample runs=4 of a live run without a checkpoint: $(cat s1.txt)"
grep -q "run 4 has no checkpoint yet: asking its owner (pid $pid) to write one" s1.txt ||
    fail "sample runs=4 does not say it asked for the weights: $(cat s1.txt)"
"$bin" checkpoint 4 >c1.txt 2>&1 || fail "checkpoint 4: $(cat c1.txt)"
cstep=$(sed -nE 's/^run #4 wrote a checkpoint at step ([0-9]+): .*/\1/p' c1.txt)
[ -n "$cstep" ] || fail "checkpoint 4: $(cat c1.txt)"
[ -n "$cstep" ] && { [ -f "$(sed -nE 's/.*: (runs\/[^ ]+\.safetensors).*/\1/p' c1.txt)" ] ||
    fail "checkpoint 4 names a file that does not exist: $(cat c1.txt)"; }
grep -qF "(\`sample runs=4 which=final\` or \`open 4 which=final\` reads it)" c1.txt ||
    fail "checkpoint 4 does not say what reads it: $(cat c1.txt)"
"$bin" sample runs=4 which=final tokens=5 >s3.txt 2>&1 || fail "sample runs=4 which=final: $(cat s3.txt)"
grep -qF "$(printf 'step-%08d.safetensors' "${cstep:-0}")" s3.txt ||
    fail "sample runs=4 which=final does not read the step-$cstep checkpoint: $(cat s3.txt)"
"$bin" -c "sample tokens=5" >s2.txt 2>&1 || fail "sample in a shell following run 4: $(cat s2.txt)"
grep -qE "weights: run #4 step-[0-9]+\.safetensors \(its newest checkpoint, step [0-9]+\)" s2.txt ||
    fail "a shell following run 4 does not sample its newest checkpoint: $(cat s2.txt)"
"$bin" -c "coeffs layer=0 prompt=ROMEO" >g.txt 2>&1 || fail "coeffs following run 4: $(cat g.txt)"
"$bin" pause 4 >/dev/null 2>&1
"$bin" checkpoint 4 >c2.txt 2>&1 || fail "checkpoint of a paused run: $(cat c2.txt)"
"$bin" stop 4 >/dev/null 2>&1
bwait "$tpid" 60 "run 4" >/dev/null
"$bin" checkpoint 4 >c3.txt 2>&1 && fail "checkpoint of an ended run succeeded: $(cat c3.txt)"
grep -q "has no live owner" c3.txt || fail "checkpoint of an ended run: $(cat c3.txt)"
echo "checked: item 7 a live run sampled from another shell; checkpoint ID"
exit $status
