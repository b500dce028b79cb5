#!/usr/bin/env bash
# e2e_faults.sh — faults and bad input against the real lmlab binary: kill -9 during
# training, during checkpoint writes and during evaluations; SIGTERM/SIGHUP/SIGINT; a full
# disk and a read-only directory (root only: tmpfs mounts); corrupt, truncated and foreign
# checkpoints, a newer database, changed/vanished/odd dataset paths; two processes on one
# database; absurd settings. Each scenario asserts on the store with sqlite3 and on the
# files, and that nothing already recorded was lost. Usage: e2e_faults.sh LMLAB [SCENARIO...]
# (scenarios 1-9; all by default; 8 = the reproductions of issue 13, 9 = issue 25's store items). Not a benchmark and not a soak test (tests/soak.sh).
set -uo pipefail
. "$(dirname "$0")/e2e_lib.sh"   # ok, bad, check and FAILS
. "$(dirname "$0")/bounded.sh"   # bwait: every wait on a child is bounded
L=$(realpath "$1")
SRC=$(cd "$(dirname "$0")/.." && pwd)
shift
ONLY=" ${*:-1 2 3 4 5 6 7 8 9} "
W=$(mktemp -d /tmp/lmlab_faults_XXXXXX)
MOUNTS=()
cleanup() {
    for m in "${MOUNTS[@]}"; do umount -l "$m" 2>/dev/null; done
    rm -rf "$W"
}
trap cleanup EXIT
cd "$W" || exit 1
command -v sqlite3 >/dev/null || { echo "sqlite3 is needed (scripts/deps.sh installs it)"; exit 1; }

q() { sqlite3 -cmd '.timeout 5000' "$DB" "$1"; }
eq() { [ "$1" == "$2" ] || { echo "     expected '$2', got '$1'"; return 1; }; }
has() { grep -qE -- "$2" "$1" || { echo "     '$2' not in $1:"; head -c 600 "$1" | sed 's/^/     | /'; return 1; }; }

# The store is whole: SQLite's own check, and no (run, step) metric row twice.
store_ok() {
    eq "$(q 'PRAGMA integrity_check')" ok &&
        eq "$(q 'SELECT count(*) FROM (SELECT run_id FROM metrics GROUP BY run_id
                 HAVING count(*) != count(DISTINCT step))')" 0
}
# The newest complete step checkpoint of a run directory (temporary files excluded).
# A run's folder: run-N-<store id> (issue 13: folders cannot collide between stores), or
# the older run-N; rd R1/run-1 gives whichever exists.
rd() { local d; for d in "$1" "$1"-*; do [ -d "$d" ] && { echo "$d"; return; }; done; echo "$1"; }
newest_ckpt() { ls "$(rd "$1")" 2>/dev/null | grep -E '^step-[0-9]+\.safetensors$' | sort | tail -1; }
ckpt_step() { local n=${1#step-}; echo $((10#${n%%.*})); }
loads() { "$L" --db "$DB" -c "open \"$1\"; sample tokens=5" >loads.log 2>&1 || { cat loads.log; return 1; }; }
# Only checkpoints, their optimizer files, best, and a crash's temporary leftovers.
only_known_files() {
    local extra
    extra=$(ls "$1" | grep -vE '^(step-[0-9]{8}(\.optim)?|best)\.safetensors(\.tmp\.[0-9]+)?$')
    [ -z "$extra" ] || { echo "     unexpected files in $1: $extra"; return 1; }
}
# Opens the store once (a dead process's run becomes interrupted).
reopen() { "$L" --db "$DB" --json -c runs >/dev/null 2>&1; }
rand_delay() { echo "$1.$((RANDOM % 10))"; }
# Polls until the command succeeds (every 50 ms, at most $1 seconds). Every scenario waits
# for the state it needs (a run in the store, a checkpoint on disk) instead of sleeping a
# fixed time, so its result does not depend on the machine's speed or load.
wait_until() {
    local secs=$1
    shift
    for _ in $(seq 1 $((secs * 20))); do
        "$@" 2>/dev/null && return 0
        sleep 0.05
    done
    echo "     waited ${secs} s for: $*"
    return 1
}
# Run $1 is in the store and has logged a step past $2 (default 0).
run_past() { [ "$(q "SELECT coalesce(max(last_step), 0) > ${2:-0} FROM runs WHERE id=$1" 2>/dev/null)" == 1 ]; }
has_ckpt() { [ -n "$(newest_ckpt "$1")" ]; }

scenario_kill_training() {
    echo "== 1. kill -9 during training, then resume"
    DB=s1.db
    "$L" --db "$DB" train quick steps=100000 checkpoint_every=20 runs_dir=R1 >s1.log 2>&1 &
    local pid=$!
    wait_until 120 has_ckpt R1/run-1
    wait_until 60 run_past 1 40
    kill -9 $pid
    bwait $pid 30 "the killed training" 2>/dev/null
    reopen
    local last ck cs
    last=$(q "SELECT last_step FROM runs WHERE id=1")
    check "killed run is interrupted" eq "$(q 'SELECT status FROM runs WHERE id=1')" interrupted
    check "interrupted run keeps its last step ($last)" [ "${last:-0}" -gt 0 ]
    check "store consistent after kill -9" store_ok
    ck=$(newest_ckpt R1/run-1)
    cs=$(ckpt_step "$ck")
    check "newest checkpoint $ck loads" loads "$(rd R1/run-1)/$ck"
    local before
    before=$(q "SELECT group_concat(step || ':' || loss) FROM metrics WHERE run_id=1 AND step <= $cs")
    "$L" --db "$DB" --json -c "train resume=1 steps=$((cs + 200)); wait" >s1.resume 2>&1
    check "resume exits 0" eq $? 0
    check "resume continues run #1" has s1.resume '"run":1,'
    check "resumed run finished" eq "$(q 'SELECT status FROM runs WHERE id=1')" finished
    check "resumed run reached step $((cs + 200))" eq "$(q 'SELECT last_step FROM runs WHERE id=1')" $((cs + 200))
    check "first new metric row follows the checkpoint step $cs" \
        eq "$(q "SELECT min(step) FROM metrics WHERE run_id=1 AND step > $cs")" $((cs + 10))
    check "rows up to the checkpoint unchanged by the resume" \
        eq "$(q "SELECT group_concat(step || ':' || loss) FROM metrics WHERE run_id=1 AND step <= $cs")" "$before"
    check "no duplicated metric rows after resume" store_ok
    check "one run in the store" eq "$(q 'SELECT count(*) FROM runs')" 1
}

# kill -9 at random moments of a run dominated by checkpoint writes (or evaluations),
# resuming the same run each time.
kill_loop() {
    local db=$1 dir=$2 n=$3 extra=$4 torn=0
    DB=$db
    for i in $(seq 1 "$n"); do
        if [ "$i" -eq 1 ]; then
            "$L" --db "$DB" train quick steps=100000 runs_dir="$dir" $extra >/dev/null 2>&1 &
        else
            "$L" --db "$DB" -c "train resume=1; wait" >/dev/null 2>&1 &
        fi
        local pid=$!
        # the random moment is counted from the first checkpoint (a slow start is no fault)
        [ "$i" -gt 1 ] || wait_until 120 has_ckpt "$dir/run-1"
        sleep "$(rand_delay $((i % 2)))"
        kill -9 $pid
        bwait $pid 30 "the killed training" 2>/dev/null
        reopen
        local st ck
        st=$(q "SELECT status FROM runs WHERE id=1")
        ck=$(newest_ckpt "$dir/run-1")
        ls "$(rd "$dir/run-1")" | grep -q '\.tmp\.' && torn=$((torn + 1))
        { eq "$st" interrupted && store_ok && [ -n "$ck" ] && loads "$(rd "$dir/run-1")/$ck" &&
            only_known_files "$(rd "$dir/run-1")"; } ||
            { bad "kill $i: store or newest checkpoint $ck (status $st)"; return; }
    done
    ok "$n kills: every time interrupted, store consistent, newest checkpoint loads ($torn left a torn .tmp file, ignored)"
    local cs
    cs=$(ckpt_step "$(newest_ckpt "$dir/run-1")")
    "$L" --db "$DB" -c "train resume=1 steps=$((cs + 40)); wait" >/dev/null 2>&1
    check "after the kills the run resumes and finishes" eq "$(q 'SELECT status FROM runs WHERE id=1')" finished
    check "store consistent at the end" store_ok
}

scenario_kill_writes() {
    echo "== 2. kill -9 during checkpoint writes and during evaluations"
    kill_loop s2a.db R2a 10 "checkpoint_every=1 log_every=1 eval_every=0 sample_every=0"
    kill_loop s2b.db R2b 6 "eval_every=5 eval_batches=0 checkpoint_every=5 sample_every=0"
}

scenario_signals() {
    echo "== 3. SIGTERM, SIGHUP, SIGINT to a headless training"
    DB=s3.db
    local id=0
    for sig in TERM HUP INT; do
        id=$((id + 1))
        "$L" --db "$DB" train quick steps=100000 checkpoint_every=50 runs_dir=R3 >"s3_$sig.log" 2>&1 &
        local pid=$!
        wait_until 120 run_past $id 20
        kill -$sig $pid
        bwait $pid 120 "the training after SIG$sig"
        local rc=$? st stop ck
        st=$(q "SELECT status FROM runs WHERE id=$id")
        # "stopped at step N", then since issue 49 the cause (": its lmlab process got a
        # termination signal (SIGTERM or SIGHUP)")
        stop=$(q "SELECT reason FROM runs WHERE id=$id" | grep -oE '^stopped at step [0-9]+' | grep -oE '[0-9]+$')
        ck=$(newest_ckpt R3/run-$id)
        check "SIG$sig: exit status $rc is a clean failure (1), not a signal death" eq "$rc" 1
        check "SIG$sig: run recorded stopped" eq "$st" stopped
        check "SIG$sig: checkpoint at the stop step ${stop:-?}" eq "$ck" "$(printf 'step-%08d.safetensors' "${stop:-0}")"
        check "SIG$sig: that checkpoint loads" loads "$(rd R3/run-$id)/$ck"
        # TERM and HUP end the session: `train` stops the run and prints its end (it
        # printed nothing after "signal received" until round 10's list); INT only stops
        # the waiting
        [ $sig == INT ] || check "SIG$sig: the output ends with the run's end line" \
            grep -q "^run #$id stopped: stopped at step ${stop:-?}: its lmlab process got a termination signal" "s3_$sig.log"
    done
    check "store consistent after signals" store_ok
}

# A session driven through a FIFO, so the test can act while a run is paused.
start_session() {
    rm -f in.fifo
    mkfifo in.fifo
    "$L" --db "$DB" --json <in.fifo >"$1" 2>&1 &
    SESSION=$!
    exec 7>in.fifo
}
say() { echo "$*" >&7; }
end_session() {
    say quit
    exec 7>&-
    bwait "$SESSION" 120 "the session told to quit"
}
wait_status() {
    for _ in $(seq 1 1200); do
        [ "$(q "SELECT status FROM runs WHERE id=1")" == "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

# $1 what, $2 mount point, $3 command that breaks it, $4 that repairs it, $5 reason word.
pause_and_recover() {
    local what=$1 mnt=$2 breakit=$3 fixit=$4 word=$5
    start_session "s4_$what.out"
    # long enough (seconds) that the fault lands mid-run even on a much faster machine
    say "use quick; set runs_dir=$mnt/runs; train steps=10000 checkpoint_every=20 log_every=5"
    wait_until 120 run_past 1 20
    eval "$breakit"
    if ! wait_status paused; then
        bad "$what: run never paused (status $(q 'SELECT status FROM runs WHERE id=1'))"
        eval "$fixit"
        end_session
        return
    fi
    ok "$what: run paused"
    check "$what: the reason says '$word'" has <(q "SELECT reason FROM runs WHERE id=1") "$word"
    local step before
    step=$(q "SELECT last_step FROM runs WHERE id=1")
    before=$(q "SELECT group_concat(step || ':' || loss) FROM metrics WHERE run_id=1")
    eval "$fixit"
    say resume
    say wait
    end_session
    check "$what: run finished after resume" eq "$(q 'SELECT status FROM runs WHERE id=1')" finished
    check "$what: rows recorded before the fault (to step $step) kept" \
        eq "$(q "SELECT group_concat(step || ':' || loss) FROM metrics WHERE run_id=1 AND step <= $step")" "$before"
    check "$what: all 10000 steps recorded" eq "$(q 'SELECT count(*) FROM metrics WHERE run_id=1')" 2000
    check "$what: final checkpoint loads" loads "$(rd "$mnt/runs/run-1")/$(newest_ckpt "$mnt/runs/run-1")"
    check "$what: store consistent" store_ok
}

scenario_disk() {
    echo "== 4. disk full and a read-only directory while training"
    if [ "$(id -u)" -ne 0 ] || ! mkdir -p D4 || ! mount -t tmpfs -o size=2M tmpfs D4 2>/dev/null; then
        echo "skip: disk full / read-only need root and a tmpfs mount"
        return
    fi
    MOUNTS+=("$W/D4")
    DB=s4a.db
    head -c 1400000 /dev/zero >D4/filler
    pause_and_recover "disk full" D4 ":" "rm -f D4/filler" "disk full"
    mkdir -p R4 && mount -t tmpfs -o size=8M tmpfs R4 && MOUNTS+=("$W/R4")
    DB=s4b.db
    local ro='for _ in 1 2 3 4 5 6 7 8 9 10; do mount -o remount,ro R4 2>/dev/null && break; sleep 0.05; done'
    pause_and_recover "read-only dir" R4 "$ro" "mount -o remount,rw R4" "Read-only"
}

# Runs lmlab with the arguments; passes when it fails cleanly (exit 1 or 2, no signal)
# with a message containing $1.
refused() {
    local want=$1
    shift
    timeout 60 "$L" --db "$DB" "$@" >refused.log 2>&1
    local rc=$?
    { [ $rc -ge 1 ] && [ $rc -le 2 ]; } || { echo "     exit status $rc"; cat refused.log; return 1; }
    has refused.log "$want"
}

scenario_bad_files() {
    echo "== 5. corrupt, truncated and foreign checkpoints; newer store; changed and odd data"
    DB=s5.db
    "$L" --db "$DB" train quick steps=40 checkpoint_every=20 runs_dir=R5 >/dev/null 2>&1
    local c; c=$(rd R5/run-1)/step-00000020.safetensors
    cp $c trunc.safetensors && truncate -s 30000 trunc.safetensors
    cp $c header.safetensors && printf 'XXXXXXXXXXXXXXXX' | dd of=header.safetensors bs=1 seek=8 conv=notrunc 2>/dev/null
    cp $c bytes.safetensors && printf '\x7f\x7f\x7f\x7f\x01\x02' | dd of=bytes.safetensors bs=1 seek=$(($(stat -c %s $c) - 40)) conv=notrunc 2>/dev/null
    : >empty.safetensors
    mkdir dir.safetensors
    mkfifo fifo.safetensors
    check "truncated checkpoint refused" refused "trunc.safetensors: .*truncated" -c "open trunc.safetensors"
    check "corrupt header refused" refused "header.safetensors: invalid JSON" -c "open header.safetensors"
    check "damaged weights refused (checksum)" refused "bytes.safetensors: .*checksum" -c "open bytes.safetensors"
    check "empty checkpoint refused" refused "empty.safetensors" -c "open empty.safetensors"
    check "a directory as checkpoint refused" refused "dir.safetensors: not a regular file" -c "open dir.safetensors"
    check "a FIFO as checkpoint refused (no hang)" refused "fifo.safetensors: not a regular file" -c "open fifo.safetensors"
    check "checkpoint of another shape refused" refused "$c: tensor .*another model shape" \
        -c "use quick; train init_from=$c d=64 steps=5"
    check "init_from a truncated checkpoint refused" refused "trunc.safetensors: .*truncated" \
        -c "use quick; train init_from=trunc.safetensors steps=5"
    cp "$DB" newer.db && sqlite3 newer.db 'PRAGMA user_version=99'
    check "newer database refused" refused "newer.db was created by a newer lmlab" --db newer.db -c runs
    check "newer database: not modified" eq "$(sqlite3 newer.db 'PRAGMA user_version')" 99
    head -c 200000 "$SRC/data/tinyshakespeare.txt" >book.txt
    "$L" --db "$DB" train quick data=book.txt steps=100000 checkpoint_every=20 runs_dir=R5 >/dev/null 2>&1 &
    local pid=$!
    wait_until 120 run_past 2 20
    kill -TERM $pid
    bwait $pid 120 "the training after SIGTERM"
    echo "one more line" >>book.txt
    check "resume on a changed dataset refused, naming the hash change" \
        refused "book.txt now hashes to .*the dataset changed" -c "train resume=2"
    mv book.txt gone.txt
    check "resume on a vanished dataset refused" refused "no dataset 'book.txt'" -c "train resume=2"
    check "runs still listed after the refusals" eq "$(q 'SELECT count(*) FROM runs')" 2
    check "store consistent" store_ok
}

scenario_two_processes() {
    echo "== 6. two processes on one database"
    DB=s6.db
    "$L" --db "$DB" train quick steps=6000 checkpoint_every=100 log_every=5 runs_dir=R6 >s6_train.log 2>&1 &
    local pid=$! reads=0 readfail=0 half=0
    for _ in $(seq 1 100); do # until the run exists
        [ "$(q 'SELECT count(*) FROM runs' 2>/dev/null)" == 1 ] && break
        sleep 0.05
    done
    while kill -0 $pid 2>/dev/null; do   # bounded: a 6000-step run; meson's timeout past that
        "$L" --db "$DB" --json -c "runs; run 1" >s6_read.log 2>&1 ||
            { readfail=$((readfail + 1)); head -3 s6_read.log; }
        # one read transaction: last_step always equals the largest stored metric step
        local pair
        pair=$(q "SELECT (SELECT coalesce(last_step,0) FROM runs WHERE id=1) || ' ' ||
                         (SELECT coalesce(max(step),0) FROM metrics WHERE run_id=1)")
        [ "${pair% *}" == "${pair#* }" ] || half=$((half + 1))
        reads=$((reads + 1))
    done
    bwait $pid 60 "the training after its last read"
    check "training alongside a reader finished" eq "$?" 0
    check "reader: $reads reads, none failed" eq "$readfail/$((reads > 0))" 0/1
    check "reader never saw a half-written step" eq "$half" 0
    "$L" --db "$DB" train quick steps=600 runs_dir=R6 name=a >s6_a.log 2>&1 &
    local a=$!
    "$L" --db "$DB" train quick steps=600 runs_dir=R6 name=b >s6_b.log 2>&1 &
    local b=$!
    bwait $a 240 "training a (600 steps)"
    local ra=$?
    bwait $b 240 "training b (600 steps)"
    local rb=$?
    check "two trainings at once both exit 0" eq "$ra $rb" "0 0"
    check "both recorded finished with all steps" \
        eq "$(q "SELECT group_concat(status || ':' || last_step, ' ') FROM runs WHERE name IN ('a','b') ORDER BY id")" \
        "finished:600 finished:600"
    check "store consistent" store_ok
}

scenario_absurd() {
    echo "== 7. absurd settings"
    DB=s7.db
    check "d=0" refused "d=0 is out of range" -c "use quick; train d=0"
    check "heads not dividing d" refused "heads=3 does not divide d=32" -c "use quick; train heads=3"
    check "bptt=1" refused "bptt=1 is out of range" -c "use quick; train bptt=1"
    check "batch=10^9" refused "batch=1000000000 is out of range" -c "use quick; train batch=1000000000"
    check "negative lr" refused "lr=-1 is out of range" -c "use quick; train lr=-1"
    check "model too large: memory estimate in GiB" refused "needs about .* GiB" \
        -c "use quick; train d=8192 layers=64 bptt=65536"
    seq 1 300000 | sed 's/^/w/' | paste -d' ' - - - - - - - - - - >words.txt
    check "vocabulary too large for memory" refused "needs about .* GiB .*vocabulary 2[0-9]{5}" \
        -c "use quick; train data=words.txt tokenizer=word d=8192 nhid=64 layers=1"
    # a directory is a corpus of its files (issue 47 item 2): one with no files, and one
    # whose files hold no text (an empty one, a binary one: skipped and counted), refused
    mkdir -p nofiles notext && : >notext/empty.txt && head -c 4096 /dev/zero >notext/blob.dat
    check "data= an empty directory" refused "directory '$W/nofiles' has no files" \
        -c "use quick; train data=nofiles"
    check "data= a directory without text" refused "'$W/notext' holds no text to build a vocabulary" \
        -c "use quick; train data=notext"
    mkfifo data.fifo
    check "data= a FIFO" refused "data.fifo: not a regular file \\(a FIFO\\)" \
        -c "use quick; train data=data.fifo"
    check "no run recorded by refused settings" eq "$(q 'SELECT count(*) FROM runs' 2>/dev/null || echo 0)" 0
    DB=s7b.db
    "$L" --db "$DB" train quick steps=20 runs_dir=R7 >/dev/null 2>&1
    { printf 'open %s/best.safetensors\nsample tokens=5 prompt="' "$(rd R7/run-1)"
      head -c 1000000 /dev/zero | tr '\0' a
      printf '"\n'; } >big.lmlab
    check "1 MB prompt refused" refused "prompt of 1000000 bytes" big.lmlab
}

no_raw_escape() { ! grep -q $'\e' "$1" || { echo "     raw ESC in $1"; return 1; }; }

scenario_issue13() {
    echo "== 8. issue 13: run ids and folders, text settings, terminal escapes, divergence"
    DB=s8.db
    "$L" --db "$DB" train quick steps=20 runs_dir=R8 >/dev/null 2>&1
    "$L" --db "$DB" train quick steps=20 runs_dir=R8 >/dev/null 2>&1
    # 1. rm of the newest run, then train: a new id and a new folder
    "$L" --db "$DB" -c "rm 2" >rm1.log 2>&1
    check "1. rm in a script without --yes deletes nothing" has rm1.log "add yes \\(or --yes\\)"
    check "1. run 2 still there" eq "$(q 'SELECT count(*) FROM runs WHERE id=2')" 1
    "$L" --db "$DB" -c "rm 2 --yes" >rm2.log 2>&1
    check "1. rm says the files are kept" has rm2.log "checkpoint files are kept"
    "$L" --db "$DB" train quick steps=20 runs_dir=R8 >/dev/null 2>&1
    check "1. the deleted run's id is not reused" eq "$(q 'SELECT max(id) FROM runs')" 3
    check "1. run 3 has a folder of its own" eq "$(ls -d R8/run-3-* 2>/dev/null | wc -l)" 1
    local d3; d3=$(rd R8/run-3)
    cp "$(rd R8/run-1)/step-00000020.safetensors" "$d3/step-99999999.safetensors"
    check "1. open of another run's checkpoint in the folder refused" \
        refused "written by run 1 of store" -c "open 3 which=last"
    rm -f "$d3/step-99999999.safetensors"
    DB=s8b.db   # a new store beside the old runs folder never writes into its run-1
    "$L" --db "$DB" train quick steps=20 runs_dir=R8 >/dev/null 2>&1
    check "1. a new store's run 1 gets its own folder" eq "$(ls -d R8/run-1-* | wc -l)" 2
    # 5. a run left "running" on another host: stale heartbeat, then force=true
    DB=s8.db
    q "UPDATE runs SET status='running', host='elsewhere', pid=4242, heartbeat=1 WHERE id=3"
    check "5. resume of a stale other-host run says how to take it over" \
        refused "train resume=3 force=true" -c "train resume=3"
    "$L" --db "$DB" -c "train resume=3 force=true; wait" >force.log 2>&1
    check "5. force=true takes it over" eq "$?" 0
    check "5. and it ends" eq "$(q 'SELECT status FROM runs WHERE id=3')" finished
    DB=s8b.db
    # 2. invalid UTF-8 in a text setting is refused when set
    check "2. name with invalid UTF-8 refused" refused "not valid UTF-8" train quick $'name=a\x9bb'
    check "2. name with an escape refused" refused "escape" train quick $'name=\e]0;PWNED\a\e[2J'
    check "2. nothing recorded" eq "$(q 'SELECT count(*) FROM runs')" 1
    # 6. text stored by an older lmlab is escaped at output
    DB=s8.db
    q "UPDATE runs SET name=char(27)||']0;PWNED'||char(7)||char(27)||'[2J',
         notes='n'||char(27)||'[31m', tags='t'||char(27) WHERE id=1"
    q "INSERT INTO samples(run_id, step, text) VALUES(1, 20, 'x'||char(27)||'[2Jy')"
    "$L" --db "$DB" -c "runs; run 1; compare 1 3" >esc.log 2>&1
    check "6. runs/run/compare print no raw ESC" no_raw_escape esc.log
    check "6. the escape is shown as \\e" has esc.log '\\e\]0;PWNED\\a\\e\[2J'
    "$L" --db "$DB" --json -c "run 1" >esc.json 2>&1
    check "6. JSON escapes it as JSON does" has esc.json '\\u001[bB]'
    # 8. lr=10 is recorded as diverged, not finished
    "$L" --db "$DB" train quick lr=10 steps=300 runs_dir=R8 >div.log 2>&1
    check "8. lr=10 exits non-zero" eq "$?" 1
    check "8. lr=10 recorded diverged" eq "$(q 'SELECT status FROM runs ORDER BY id DESC LIMIT 1')" diverged
    check "8. the reason names ln(V)" has div.log "uniform guess"
}

scenario_issue25() {
    echo "== 9. issue 25: one store through two names, a store moved under a run, damaged and foreign files"
    DB=s9.db
    ln -s s9.db s9link.db
    "$L" --db s9link.db train quick steps=1 runs_dir=R9 >/dev/null 2>&1   # an older lmlab made s9link.db-runlocks here
    "$L" --db "$DB" train quick steps=100000 checkpoint_every=20 runs_dir=R9 >s9.log 2>&1 &
    local pid=$!
    wait_until 120 run_past 2 20
    "$L" --db s9link.db -c "run 2" >s9run.log 2>&1
    check "3. through a symbolic link, the live run stays running" has s9run.log "status: +running"
    "$L" --db s9link.db -c "use quick; train resume=2" >s9res.log 2>&1
    check "3. resume of the live run through the link refused" has s9res.log "running in process|being trained by process"
    ln "$DB" s9hard.db
    "$L" --db s9hard.db -c runs >s9hard.log 2>&1
    check "3. a hard-linked store refused" has s9hard.log "has 2 names \\(hard links\\)"
    rm -f s9hard.db
    mv "$DB" s9moved.db
    bwait $pid 120 "the training whose store was moved"
    check "4. mv under a training run: it stops, exit 1" eq "$?" 1
    check "4. ... saying the store was moved" has s9.log "was moved, deleted or replaced"
    "$L" --db "$DB" -c runs >s9new.log 2>&1
    check "4. no new store over the -wal left at the old name" has s9new.log "does not exist but s9.db-wal does"
    check "4. ... and no file made there" [ ! -e "$DB" ]
    mv s9moved.db "$DB"
    check "4. moved back: the rows before the mv are there" run_past 2 20
    check "4. moved back: whole" store_ok
    # 5. damage in the run list, a foreign file, an unknown version: refused, files unchanged
    q "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
    cp "$DB" s9bad.db
    local pg sum
    pg=$(sqlite3 s9bad.db "SELECT rootpage FROM sqlite_master WHERE name='runs'")
    head -c 512 /dev/urandom | dd of=s9bad.db bs=1 seek=$(((pg - 1) * 4096)) conv=notrunc 2>/dev/null
    sum=$(md5sum <s9bad.db)
    "$L" --db s9bad.db -c runs >s9bad.log 2>&1
    check "5. damaged store refused, saying .recover" has s9bad.log "is damaged.*\\.recover"
    check "5. ... and left as it was" eq "$(md5sum <s9bad.db)" "$sum"
    sqlite3 s9plain.db "CREATE TABLE photos(x)"
    "$L" --db s9plain.db -c runs >s9plain.log 2>&1
    check "5. a plain SQLite file refused" has s9plain.log "not an lmlab run store"
    check "5. ... before WAL mode" eq "$(sqlite3 s9plain.db 'PRAGMA journal_mode')" delete
    cp "$DB" s9minus.db
    sqlite3 s9minus.db "PRAGMA user_version=-1"
    "$L" --db s9minus.db -c runs >s9minus.log 2>&1
    check "5. user_version -1: a clear message" has s9minus.log "schema version -1, which no lmlab writes"
}

[[ $ONLY == *" 1 "* ]] && scenario_kill_training
[[ $ONLY == *" 2 "* ]] && scenario_kill_writes
[[ $ONLY == *" 3 "* ]] && scenario_signals
[[ $ONLY == *" 4 "* ]] && scenario_disk
[[ $ONLY == *" 5 "* ]] && scenario_bad_files
[[ $ONLY == *" 6 "* ]] && scenario_two_processes
[[ $ONLY == *" 7 "* ]] && scenario_absurd
[[ $ONLY == *" 8 "* ]] && scenario_issue13
[[ $ONLY == *" 9 "* ]] && scenario_issue25
echo "e2e_faults: $FAILS failed"
[ "$FAILS" -eq 0 ]
