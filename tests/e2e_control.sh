#!/usr/bin/env bash
# e2e_control.sh — control requests through the run store against hostile rows (issue 38,
# items 1-3), every row crafted with the sqlite3 command-line shell: a request left for an
# owner that died (SIGSTOP, `stop 1`, SIGKILL) never reaches the run's next owner (the
# resume trains all its steps) and shows as expired; a row for another host's owner (a
# store copied from another machine) and a row written for a run id that does not exist
# yet act on nothing; 10,000 junk rows (unknown verbs, ids that do not exist, rows for
# nobody) do not delay a real `stop`; a verb "stop" followed by a NUL byte is answered as
# unknown and changes nothing. Every wait is bounded. Usage: e2e_control.sh LMLAB_BINARY.
set -u
. "$(dirname "$0")/e2e_lib.sh"   # ok, bad, check and FAILS
. "$(dirname "$0")/bounded.sh"   # bwait: every wait on a child is bounded
L=$(readlink -f "$1")
command -v sqlite3 >/dev/null || { echo "sqlite3 (the shell) not installed: skipped"; exit 77; }
W=$(mktemp -d /tmp/lmlab_control_XXXXXX)
pids=""
trap 'for p in $pids; do kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
      rm -rf "$W"' EXIT
cd "$W" || exit 1
q() { sqlite3 -cmd ".timeout 5000" "$DB" "$1"; }
has() { grep -qE -- "$2" "$1"; }
eq() { [ "$1" == "$2" ]; }
# Polls (every 50 ms, at most $1 seconds) until the command succeeds.
until_ok() {
    local secs=$1
    shift
    for _ in $(seq 1 $((secs * 20))); do "$@" 2>/dev/null && return 0; sleep 0.05; done
    echo "     waited $secs s for: $*"
    return 1
}
run_past() { [ "$(q "SELECT coalesce(max(last_step), 0) > $2 FROM runs WHERE id=$1")" == 1 ]; }
status_is() { [ "$(q "SELECT status FROM runs WHERE id=$1")" == "$2" ]; }
# The columns a request addressed to run $1's current owner carries (none in an older
# store, whose rows are addressed to nobody).
addressed() {
    if [ -n "$(q "SELECT 1 FROM pragma_table_info('run_control') WHERE name='owner_pid'")" ]; then
        echo "owner_pid, owner_host, owner_since|pid, host, owner_since"
    else
        echo "requested_at|1"
    fi
}
# craft RUN VERB_SQL: a row addressed to run RUN's owner now, written by sqlite3
craft() {
    local a
    a=$(addressed)
    q "INSERT INTO run_control(run_id, verb, requested_at, ${a%|*}) SELECT id, $2, 1, ${a#*|}
       FROM runs WHERE id=$1; SELECT max(id) FROM run_control;"
}
train_bg() { "$L" --db "$DB" "$@" >/dev/null 2>&1 & }
# SIGSTOPs owner $1 between two of its writes (at most 100 tries, 50 ms apart): a process
# stopped inside a write transaction (a metrics flush) keeps the store's write lock, and
# every writer, the `stop` and `pause` below included, would wait for it and fail with
# "database is locked" instead of leaving a request.
stop_between_writes() {
    for _ in $(seq 1 100); do
        kill -STOP "$1"
        sqlite3 "$DB" "BEGIN IMMEDIATE; ROLLBACK;" 2>/dev/null && return 0
        kill -CONT "$1"
        sleep 0.05
    done
    echo "     the owner held the store's write lock at each of 100 stops"
    return 1
}

echo "== 1. a request for an owner that died never reaches the next owner"
DB=dead.db
train_bg train quick steps=100000 checkpoint_every=20 runs_dir=R
owner=$!; pids="$pids $owner"
until_ok 120 run_past 1 25 || bad "setup: run 1 did not pass step 25 within 120 s"
stop_between_writes $owner || bad "setup: the owner could not be frozen between two writes"
"$L" --db "$DB" stop 1 >stop.out 2>&1
st=$?; check "stop to a stopped (SIGSTOP) owner: exit 3, not answered yet" eq "$st" 3 || { echo "     exit $st:"; sed "s/^/     /" stop.out; }
kill -KILL $owner
kill -CONT $owner 2>/dev/null
bwait $owner 30 "the killed owner" 2>/dev/null
# the target counts from where the owner was killed: a fast machine is far past step 25
to=$(( $(q 'SELECT last_step FROM runs WHERE id=1') + 600 ))
timeout 300 "$L" --db "$DB" --json -c "train resume=1 steps=$to; wait" >resume.out 2>&1
check "the resumed run (a new owner) trained all $to steps" \
    eq "$(q 'SELECT status || ":" || last_step FROM runs WHERE id=1')" "finished:$to"
check "the dead owner's request shows as expired" \
    has <(q "SELECT reply FROM run_control WHERE run_id=1") "^expired: "
# a stale pause would have paused it and the headless wait would never end
DB=pause.db
train_bg train quick steps=100000 checkpoint_every=20 runs_dir=R
owner=$!; pids="$pids $owner"
until_ok 120 run_past 1 25 || bad "setup: run 1 did not pass step 25 within 120 s"
stop_between_writes $owner || bad "setup: the owner could not be frozen between two writes"
"$L" --db "$DB" pause 1 >/dev/null 2>&1
kill -KILL $owner; kill -CONT $owner 2>/dev/null
bwait $owner 30 "the killed owner" 2>/dev/null
to=$(( $(q 'SELECT last_step FROM runs WHERE id=1') + 200 ))   # from where it was killed
timeout 300 "$L" --db "$DB" -c "train resume=1 steps=$to; wait" >/dev/null 2>&1
check "a dead owner's pause does not pause the resumed run (its wait ends, within 300 s)" \
    eq "$?:$(q 'SELECT status || ":" || last_step FROM runs WHERE id=1')" "0:finished:$to"

echo "== 1b. a copied store's request and a row for a run id not yet made"
DB=copy.db
"$L" --db "$DB" train quick steps=20 checkpoint_every=20 runs_dir=R >/dev/null 2>&1
q "UPDATE runs SET host='far-away-machine', status='stopped' WHERE id=1"   # stopped on another machine
craft 1 "'stop'" >/dev/null
timeout 300 "$L" --db "$DB" -c "train resume=1 steps=300; wait" >/dev/null 2>&1
check "the first resume on the copy trains all its steps" \
    eq "$(q 'SELECT status || ":" || last_step FROM runs WHERE id=1')" "finished:300"
q "INSERT INTO run_control(run_id, verb, requested_at) VALUES(2, 'stop', 1)"
timeout 300 "$L" --db "$DB" train quick steps=300 runs_dir=R >/dev/null 2>&1
check "a row written for run 2 before it existed does not stop run 2" \
    eq "$(q 'SELECT status || ":" || last_step FROM runs WHERE id=2')" "finished:300"
check "... and shows as expired" has <(q "SELECT reply FROM run_control WHERE run_id=2") "^expired: "

echo "== 2. 10,000 junk rows do not starve a real stop"
DB=flood.db
train_bg train quick steps=1000000 checkpoint_every=0 runs_dir=R
owner=$!; pids="$pids $owner"
until_ok 120 run_past 1 5 || bad "setup: run 1 did not pass step 5 within 120 s"
q "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 10000)
   INSERT INTO run_control(run_id, verb, requested_at)
   SELECT CASE i % 2 WHEN 0 THEN 1 ELSE 1000 + i END, 'junk-' || i, 1 FROM k"
"$L" --db "$DB" stop 1 >flood.out 2>&1
until_ok 60 status_is 1 stopped
check "a real stop among 10,000 junk rows is acted on within 60 s" status_is 1 stopped
bwait $owner 60 "the stopped owner" >/dev/null 2>&1
check "... and the junk cost the owner nothing: at most 2 rows answered, not thousands" \
    [ "$(q "SELECT count(*) FROM run_control WHERE reply NOT LIKE 'expired:%' AND reply != ''")" -le 2 ]

echo "== 3. a verb is its bytes: stop + NUL + more is unknown"
DB=nul.db
train_bg train quick steps=1000000 checkpoint_every=0 runs_dir=R
owner=$!; pids="$pids $owner"
until_ok 120 run_past 1 5 || bad "setup: run 1 did not pass step 5 within 120 s"
id=$(craft 1 "CAST(X'73746f700078797a' AS TEXT)")
answered() { [ -n "$(q "SELECT acknowledged_at FROM run_control WHERE id=$id")" ]; }
until_ok 60 answered
check "the row is answered within 60 s" answered
check "... as an unknown control, its bytes shown" \
    has <(q "SELECT reply FROM run_control WHERE id=$id") 'unknown control .stop\\x00xyz.: ignored'
at=$(q "SELECT last_step FROM runs WHERE id=1")
# the step itself, not the status: a run that made no step after the answer still reads
# "running" (the check passed with the owner frozen, and on a machine too slow for 20 steps)
check "the run goes on training past step $((at + 20)) after the answer" until_ok 60 run_past 1 $((at + 20))
check "... and is still running" status_is 1 running
"$L" --db "$DB" stop 1 >/dev/null 2>&1
until_ok 60 status_is 1 stopped
bwait $owner 60 "the stopped owner" >/dev/null 2>&1
check "a real stop then stops it" status_is 1 stopped

echo "$FAILS failed"
[ "$FAILS" -eq 0 ]
