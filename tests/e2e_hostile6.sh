#!/usr/bin/env bash
# e2e_hostile6.sh — round 6 of hostile input (issue 46) against the real binary: a shared
# store is data, never code. Commands planted in the store by another user (no code, or a
# code under another user's key) and an over-long command are refused, said in `alert ID`
# and the run's console, and never run, while the user's own command runs. Every wait is
# bounded. Usage: e2e_hostile6.sh LMLAB_BINARY
set -u
bin=$(readlink -f "$1")
. "$(dirname "$0")/bounded.sh"   # bwait: every wait on a child is bounded
dir=$(mktemp -d)
bgpid=
trap 'kill $bgpid 2>/dev/null; rm -rf "$dir" 2>/dev/null || { sleep 1; rm -rf "$dir"; }' EXIT
cd "$dir"
export LMLAB_DB="$dir/s.db" XDG_CONFIG_HOME="$dir/victim-config"
command -v sqlite3 >/dev/null || { echo "sqlite3 is needed (scripts/deps.sh installs it)"; exit 1; }
q() { sqlite3 -cmd '.timeout 5000' "$LMLAB_DB" "$1"; }
fail() { echo "FAIL: $*"; exit 1; }
run() { "$bin" "$@" >out 2>err || { cat out err; fail "lmlab $*: exit $?"; }; }

# ---- item 1: planted commands (the issue's reproduction), item 2: an over-long one ------
run train quick steps=50
# mallory plants rows for run 2 before it exists: raw SQL, and through lmlab under her key
q "INSERT INTO alerts(run_id,rule,cmd,created,origin) VALUES(2,'step>5','sh -c \"id > $dir/pwned\"',0,'live')"
q "INSERT INTO alerts(run_id,rule,cmd,created,origin) VALUES(2,'step>6','touch $dir/A$(printf '%*s' 1100 '') $dir/B',0,'live')"
# item 9: an alert on a finished run could never fire: refused, nothing stored
"$bin" alert 1 on=finished run="touch $dir/never" >out 2>&1 && fail "an alert on finished run 1 was accepted"
grep -q "run #1 has finished .* could never fire" out || fail "item 9's message: $(cat out)"
[ "$(q 'SELECT count(*) FROM alerts WHERE run_id=1')" = 0 ] || fail "the refused alert was stored"
echo "item 9: an alert on a finished run is refused"
"$bin" train quick steps=1000000 >train.out 2>&1 &
bgpid=$!
wait_until 60 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$LMLAB_DB' \"SELECT last_step FROM runs WHERE id=2\")\" -gt 0 ]" ||
    fail "run 2 did not start within 60 s: $(cat train.out)"
# mallory again, through lmlab itself: signed, but with her own key
XDG_CONFIG_HOME="$dir/mallory-config" "$bin" alert 2 on=step\>1 run="touch $dir/pwned2" >out 2>&1 ||
    fail "mallory's alert on run 2: $(cat out)"
run alert 2 on=step\>1 run="touch $dir/mine"
wait_until 60 test -e mine || fail "the user's own alert command did not run within 60 s"
wait_until 60 sh -c "[ \$(sqlite3 -cmd '.timeout 5000' '$LMLAB_DB' 'SELECT count(*) FROM alert_events WHERE run_id=2') -ge 4 ]" ||
    fail "the four rules did not fire within 60 s: $(q 'SELECT * FROM alert_events')"
run stop 2
bwait "$bgpid" 60 "the stopped run"; bgpid=
[ ! -e pwned ] && [ ! -e pwned2 ] || fail "a command planted by another user ran: $(cat pwned 2>/dev/null)"
[ ! -e A ] && [ ! -e B ] || fail "the over-long planted command ran (cut or whole)"
run alert 2
[ "$(grep -c "not written by you: refused" out)" -eq 6 ] ||
    fail "alert 2 does not say the 3 planted commands are refused (rules and events): $(cat out)"
grep -q "touch $dir/mine\"  (live)$" out || fail "the user's own rule is marked: $(cat out)"
grep -q "command exit 0" out || fail "the user's own command's exit is not recorded: $(cat out)"
run --json alert 2
python3 -c "
import json,sys; o=json.load(open('out'))
r=[a for a in o['alerts'] if a['refused']]; assert len(r)==3, o['alerts']
assert all('not written by you' in a['refused'] for a in r), r" || fail "--json alert 2: $(cat out)"
run log 2
[ "$(grep -c 'its command was not run — not written by you: refused' out)" -eq 3 ] ||
    fail "the console does not say the 3 commands were refused: $(grep alert out)"
echo "item 1, 2: planted commands refused and said; the user's own ran"

# ---- item 7: a trial stopped from the shell is listed stopped, not pending -------------
export LMLAB_DB="$dir/sweep.db"
"$bin" sweep base=quick steps=1000000 lr=1e-3,3e-3 >sweep.out 2>&1 &
bgpid=$!
running() { [ "$(q "SELECT count(*) FROM runs WHERE id=$1 AND status='running' AND last_step>0")" = 1 ]; }
wait_until 60 running 1 || fail "trial 1 did not start within 60 s: $(cat sweep.out)"
run stop 1
wait_until 60 running 2 || fail "trial 2 did not start after trial 1 was stopped: $(cat sweep.out)"
run sweep show 1
grep -qE "t1 +#1 .*stopped at step [0-9]+$" out || fail "trial 1 stopped from the shell: $(cat out)"
run stop 2
bwait "$bgpid" 60 "the sweep"; bgpid=
run --json sweep show 1
python3 -c "
import json; t=[json.loads(l) for l in open('out') if '"sweep_trial"' in l]
assert [x['status'].split(' at ')[0] for x in t]==['stopped','stopped'], t" ||
    fail "sweep show --json after both trials were stopped: $(cat out)"
echo "item 7: trials stopped with \`stop RUN\` are listed stopped"
echo "PASS"
