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
bgpid= fpid=
trap 'kill $bgpid $fpid 2>/dev/null; rm -rf "$dir" 2>/dev/null || { sleep 1; rm -rf "$dir"; }' EXIT
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

# ---- item 3: log follow of a run whose owner is killed ends with the truth -------------
export LMLAB_DB="$dir/follow.db"
"$bin" train quick steps=1000000 >train3.out 2>&1 &
bgpid=$!
wait_until 60 running 1 || fail "run 1 did not start within 60 s: $(cat train3.out)"
# item 4 resumes this run from its checkpoint: killed once one is recorded. A stored step is
# not that: the store flushes a run's rows every 2 s too, so on a slow machine its first
# stored step is step 10, long before the step-100 checkpoint.
wait_until 120 sh -c "[ -n \"\$(sqlite3 -cmd '.timeout 5000' '$LMLAB_DB' 'SELECT step FROM checkpoints WHERE run_id=1 LIMIT 1')\" ]" ||
    fail "run 1 recorded no checkpoint within 120 s: $(cat train3.out)"
timeout 120 "$bin" log 1 follow >follow.out 2>&1 &
fpid=$!
wait_until 30 test -s follow.out || fail "log follow printed nothing within 30 s"
kill -KILL "$bgpid"; bwait "$bgpid" 10 "the killed run"; bgpid=
bwait "$fpid" 30 "log follow of a killed run" || fail "log follow did not end: $(tail -3 follow.out)"
tail -1 follow.out | grep -qE "^\(run 1 is interrupted: process [0-9]+ ended without closing the run at step [0-9]+\)$" ||
    fail "log follow's last line: $(tail -2 follow.out)"
[ "$(q 'SELECT status FROM runs WHERE id=1')" = interrupted ] || fail "the store still says $(q 'SELECT status FROM runs WHERE id=1')"
echo "item 3: log follow ends with 'interrupted, at step N'"

# ---- item 4: a resume that changes settings is recorded: what, from which step ---------
ck=$(q "SELECT max(step) FROM checkpoints WHERE run_id=1")
[ -n "$ck" ] && [ "$ck" -gt 0 ] || fail "the killed run has no checkpoint to resume"
prec_was=$(q "SELECT config FROM runs WHERE id=1" | sed -n 's/^precision=//p')
# (the newest checkpoint file may be newer than the store's last record of one: SIGKILL)
run train resume=1 steps=$((ck + 300)) precision=bf16 shards=3
at=$(sed -n 's/.*resumed from step \([0-9]*\).*/\1/p' out | head -1)
run run 1
grep -qE "^  precision: +bf16" out || fail "run 1 does not say it now trains in bf16: $(grep -i precision out)"
grep -qE "resumed at step ${at:-[0-9]+} with steps=$((ck + 300)) \(was 1000000\), precision=bf16 \(was $prec_was\)" out &&
    grep -qF "shards=3 (was" out || fail "run 1 does not say what changed, from which step: $(grep resumed out)"
grep -qE "^settings changed at step ${at:-[0-9]+}: precision $prec_was -> bf16, shards .* -> 3" out ||
    fail "run 1 has no 'settings changed at step' line: $(grep -i changed out)"
run --json run 1
python3 -c "
import json; o=json.loads(open('out').readline())
assert o['precision']=='bf16', o['precision']
assert any('precision=bf16 (was' in n['text'] for n in o['note_list']), o['note_list']
assert any(c['key']=='precision' and c['to']=='bf16' for c in o['setting_changes']), o['setting_changes']" ||
    fail "--json run 1 after a bf16 resume"
echo "item 4: a resume's changed settings are recorded with their step"
# the changes are rows of their own (schema step 13), never parsed back from the note's
# wording: a value holding ", ", "->" and " (was " comes back whole
export LMLAB_DB="$dir/changes.db"
"$bin" train quick steps=1000000 checkpoint_every=20 >train4.out 2>&1 &
bgpid=$!
wait_until 60 sh -c "[ -n \"\$(sqlite3 -cmd '.timeout 5000' '$LMLAB_DB' 'SELECT step FROM checkpoints WHERE run_id=1 LIMIT 1')\" ]" ||
    fail "run 1 wrote no checkpoint within 60 s: $(cat train4.out)"
kill -KILL "$bgpid"; bwait "$bgpid" 10 "the killed run"; bgpid=
ck=$(q "SELECT max(step) FROM checkpoints WHERE run_id=1")
run train resume=1 steps=$((ck + 100)) 'sample_prompt=hi, there -> x (was y), z' shards=3
run --json run 1
python3 -c "
import json; o=json.loads(open('out').readline()); c={x['key']: x for x in o['setting_changes']}
assert c['sample_prompt']['to']=='hi, there -> x (was y), z' and c['sample_prompt']['from']=='\\n', c
assert c['shards']['to']=='3' and set(c)=={'sample_prompt','shards'}, c" || fail "--json run 1: $(cat out)"
run run 1
grep -qF 'settings changed at step' out && grep -qF 'sample_prompt \n -> hi, there -> x (was y), z, shards' out ||
    fail "run 1's settings line: $(grep changed out)"
echo "item 4: a setting's value with ', ' and '->' is recorded and read back whole"

# ---- item 1's audit: stored settings that name files act as the user who resumes ------
export LMLAB_DB="$dir/trust.db"
"$bin" train quick steps=1000000 checkpoint_every=50 >train5.out 2>&1 &
bgpid=$!
wait_until 60 sh -c "[ -n \"\$(sqlite3 -cmd '.timeout 5000' '$LMLAB_DB' 'SELECT step FROM checkpoints WHERE run_id=1 LIMIT 1')\" ]" ||
    fail "run 1 wrote no checkpoint within 60 s: $(cat train5.out)"
kill -KILL "$bgpid"; bwait "$bgpid" 10 "the killed run"; bgpid=
echo "secret: the resuming user's" >secret.txt
q "UPDATE runs SET config=replace(config, 'data=tinyshakespeare', 'data=$dir/secret.txt') WHERE id=1"
"$bin" train resume=1 steps=10 >out 2>&1 && fail "a resume took data= another writer put in the store"
grep -q "stored data=$dir/secret.txt is not what its checkpoint .* was trained with (data=tinyshakespeare)" out ||
    fail "the refused resume's message: $(cat out)"
if [ "$(id -u)" = 0 ]; then   # a checkpoint of another user's: its settings are not trusted
    ckdir=$(q "SELECT checkpoint_dir FROM runs WHERE id=1")
    chown 65534 "$ckdir"/*.safetensors
    "$bin" train resume=1 data=tinyshakespeare >out 2>&1 && fail "resumed from another user's checkpoint"
    grep -q "belongs to uid 65534, not to you" out || fail "another user's checkpoint: $(cat out)"
    chown 0 "$ckdir"/*.safetensors
fi
ck=$(q "SELECT max(step) FROM checkpoints WHERE run_id=1")
run train resume=1 data=tinyshakespeare steps=$((ck + 300))
echo "item 1's audit: a resume refuses stored file settings its checkpoint does not have"
# ---- item 1's audit: a sweep's stored spec and fork's stored settings -------------------
export LMLAB_DB="$dir/spec.db"
run sweep base=quick steps=20 lr=1e-3,3e-3 parallel=2   # the user's own, in two workers
grep -q "sweep #1 .*finished: 2 trials: 2 done" out || fail "the user's own parallel sweep: $(cat out)"
# mallory plants sweep 2 (no code) whose base settings write into $dir/evil, read $dir/secret.txt
spec=$(q "SELECT spec FROM sweeps WHERE id=1" | sed "s#^runs_dir=.*#runs_dir=$dir/evil#; s#^data=.*#data=$dir/secret.txt#")
q "INSERT INTO sweeps(id,name,spec,strategy,status,created) VALUES(2,'planted','$spec','grid','running',0);
   INSERT INTO sweep_trials VALUES(2,1,NULL,'lr=1e-3','pending'); INSERT INTO sweep_trials VALUES(2,2,NULL,'lr=3e-3','pending')"
"$bin" sweep worker=2 trial=1 >out 2>&1 && fail "a worker trained a planted sweep's trial"
grep -q "sweep 2's spec was not written by you: refused (it carries no code)" out || fail "the worker's refusal: $(cat out)"
[ "$(q 'SELECT status FROM sweep_trials WHERE sweep_id=2 ORDER BY trial' | tr '\n' ' ')" = "refused pending " ] ||
    fail "the worker's trial is not recorded refused: $(q 'SELECT * FROM sweep_trials WHERE sweep_id=2')"
"$bin" sweep resume 2 >out 2>&1 && fail "sweep resume trained a planted spec"
grep -q "sweep 2's spec was not written by you: refused (it carries no code); nothing trains" out ||
    fail "sweep resume's refusal: $(cat out)"
# the user's own sweep 1, edited afterwards by mallory: refused too
q "UPDATE sweeps SET spec=replace(spec, 'runs_dir=runs', 'runs_dir=$dir/evil') WHERE id=1"
"$bin" sweep worker=1 trial=2 >out 2>&1 && fail "a worker trained an edited spec"
grep -q "sweep 1's spec was not written by you: refused (its code does not match your key)" out ||
    fail "an edited spec's refusal: $(cat out)"
run sweep show 2
grep -q "^  sweep 2's spec was not written by you: refused" out && [ "$(grep -c ' refused$' out)" = 2 ] ||
    fail "sweep show 2 does not say it is refused, trial by trial: $(cat out)"
run --json sweep show 2
python3 -c "
import json; o=[json.loads(l) for l in open('out')]
assert 'not written by you' in o[0]['refused'], o[0]
assert [t['status'] for t in o[1:]]==['refused','refused'], o" || fail "--json sweep show 2: $(cat out)"
[ "$(q 'SELECT count(*) FROM runs')" = 2 ] && [ ! -e evil ] || fail "a refused sweep trained or wrote into evil/"
# the way forward: read the whole spec, then sign exactly that text
run sweep trust 2
grep -q "^runs_dir=$dir/evil$" out || fail "sweep trust does not show the whole spec: $(cat out)"
fp=$(sed -n 's/.*`sweep trust 2 spec=\([0-9a-f]*\)`.*/\1/p' out)
"$bin" sweep trust 2 spec=0123456789abcdef >out 2>&1 && fail "sweep trust signed with a wrong fingerprint"
run sweep trust 2 spec="$fp"
run sweep show 2
! grep -q "not written by you" out || fail "a trusted sweep is still refused: $(cat out)"
echo "item 1's audit: a planted or edited sweep spec trains nothing, says so; sweep trust signs it"

export LMLAB_DB="$dir/fork.db"
python3 -c "
import random; random.seed(1); w=['the','cat','sat','on','a','mat','and','dog','ran','far']
open('corpus.txt','w').write('\n'.join(' '.join(random.choice(w) for _ in range(12)) for _ in range(3000)))"
run train quick steps=40 checkpoint_every=20 runs_dir="$dir/myruns"
run fork 1 step=20 steps=60                   # the user's own run: its stored paths are taken
grep -q "run #2 forked from run #1 at step 20" out || fail "fork of the user's own run: $(cat out)"
q "UPDATE runs SET config=replace(config, 'runs_dir=$dir/myruns', 'runs_dir=$dir/evil') WHERE id=1"
"$bin" fork 1 step=20 steps=60 >out 2>&1 && fail "fork took runs_dir= another writer put in the store"
grep -q "run 1's stored runs_dir=$dir/evil was not written by you (its code does not match your key): give runs_dir= on the command line to fork it" out ||
    fail "fork's refusal: $(cat out)"
run fork 1 step=20 steps=60 runs_dir="$dir/myruns"
# a colleague's run (her key): data= must be given; lr (data, not a path) is taken from it
XDG_CONFIG_HOME="$dir/mallory-config" "$bin" train quick steps=40 checkpoint_every=20 data="$dir/corpus.txt" lr=0.002 >out 2>&1 ||
    fail "mallory's run: $(cat out)"
"$bin" fork 4 step=20 steps=60 >out 2>&1 && fail "fork took data= of another user's run"
grep -q "run 4's stored data=$dir/corpus.txt was not written by you" out || fail "fork's data refusal: $(cat out)"
[ ! -e evil ] && [ "$(q 'SELECT count(*) FROM runs')" = 4 ] || fail "a refused fork wrote a run or into evil/"
run fork 4 step=20 steps=60 data="$dir/corpus.txt"
q "SELECT config FROM runs WHERE id=5" | grep -qx "lr=0.002" || fail "the fork did not take the colleague's lr"
echo "item 1's audit: fork takes stored file settings only from the user's own runs"
# rm checkpoints=true deletes files named in the store only for the user's own runs, and
# only inside the run's own folder
echo "the victim's" >victim.safetensors
q "INSERT INTO checkpoints(run_id, step, path) VALUES(4, 999, '$dir/victim.safetensors'), (2, 999, '$dir/victim.safetensors')"
run rm 4 checkpoints=true --yes
grep -q "deleted run 4; no file was removed: its settings and folder were not written by you" out || fail "rm of another user's run: $(cat out)"
run rm 2 checkpoints=true --yes   # the user's own fork (run 1's settings were edited above)
grep -q "deleted run 2 and the [1-9][0-9]* files it wrote" out || fail "rm of the user's own run: $(cat out)"
[ "$(cat victim.safetensors)" = "the victim's" ] || fail "rm deleted a file a row of the store named"
! ls -d myruns/run-2-* 2>/dev/null || fail "rm left the user's own run folder: $(ls myruns)"
echo "item 1's audit: rm checkpoints=true removes only the user's own run's files, in its folder"
# ---- any bytes in any field; item 10 (bidi controls), 12 (a crafted console number) ----
export LMLAB_DB="$dir/bytes.db"
run train quick steps=100 name=plain
long=$(head -c 70000 /dev/zero | tr '\0' L)
# NUL, ESC sequences, U+202E, invalid UTF-8 and a 70 KB string, straight into the store
q "UPDATE runs SET name='x'||char(8238)||'gnp.exe'||char(27)||'[2J'||CAST(X'FF00' AS TEXT)||'end',
   tags='t'||char(27)||']0;T'||char(7)||char(8238)||'ab',
   config=config||'sample_prompt=p'||char(27)||'[1m'||char(8238)||'q'||CAST(X'FE' AS TEXT)||char(10) WHERE id=1;
   INSERT INTO notes(run_id,t,text) VALUES(1,0,'n'||char(8238)||'gnp'||char(27)||'[31m'||CAST(X'C3' AS TEXT)||'|$long|END');
   INSERT INTO run_console(run_id,seq,t,kind,text) VALUES(1,999999,0,'info','crafted'||char(8238)||'line')"
lines_before=$(q "SELECT count(*) FROM run_console WHERE run_id=1")
raw_bidi=$(printf '\342\200\256')
for c in "runs" "run 1" "log 1" "compare 1 1"; do
    "$bin" $c >term.out 2>&1 || fail "lmlab $c on hostile bytes: exit $? $(head -c 300 term.out)"
    python3 -c "
import sys; t=open('term.out','rb').read().decode('utf-8')   # valid UTF-8 throughout
assert '\x1b' not in t, 'a raw ESC'
assert '\u202e' not in t, 'a raw U+202E (item 10)'" || fail "lmlab $c printed raw bytes"
    cp term.out "term-$(echo $c | tr ' ' _).out"
done
grep -qF 'x\u202egnp.exe\e[2J\xff␀end' term-runs.out || fail "runs: the name is not whole and escaped: $(head -3 term-runs.out)"
# the note whole (python: grep -F with a 70 KB pattern of one letter takes minutes)
has_long() {   # exactly 70,000 L between | and |END (a Markdown \| allowed)
    python3 - "$1" <<'PY'
import re, sys
sys.exit(0 if re.search(rb'\\?[|]L{70000}\\?[|]END', open(sys.argv[1], 'rb').read()) else 1)
PY
}
has_long term-run_1.out || fail "run 1: the 70 KB note was cut"
grep -qF 'sample_prompt=p\e[1m\u202eq\xfe' term-run_1.out || fail "run 1: the hostile setting: $(grep sample_prompt term-run_1.out)"
grep -qF 't\e]0;T\a\u202eab' term-run_1.out || fail "run 1: the hostile tag"
# item 12: the console shows every line, and no cut is made up from a crafted number
[ "$(grep -c '' term-log_1.out)" -ge "$lines_before" ] || fail "log 1 dropped lines: $(cat term-log_1.out)"
grep -qF 'crafted\u202eline' term-log_1.out || fail "log 1: the crafted line"
! grep -q "999998" term-log_1.out || fail "log 1 counts a cut from the crafted number"
grep -q "line numbers have a gap" term-log_1.out || fail "log 1 does not say the numbers have a gap"
run --json runs
run --json run 1
python3 - "$long" <<'PY' || fail "--json: the hostile fields are not whole"
import json, sys
long = sys.argv[1]
o = [json.loads(l) for l in open('out')]
r = o[0]
assert r['name'] == 'x\u202egnp.exe\x1b[2J\\xff\u2400end', repr(r['name'])
assert r['tags'] == ['t\x1b]0;T\x07\u202eab'], r['tags']
txt = json.dumps(o)
assert ('|' + long + '|END') in ''.join(json.dumps(x) for x in o), 'note cut'
PY
run export 1 format=json file=e.json
python3 -c "
import json; o=json.load(open('e.json'))[0]
assert o['name']=='x\u202egnp.exe\x1b[2J\\\\xff\u2400end', repr(o['name'])" || fail "export json: $(head -c 300 e.json)"
run plot 1 file=p.svg
grep -q "<svg" p.svg || fail "plot of a run with a hostile name"
run report runs=1 file=r.html
# the loss curves and the gates, plus the series grid (issue 48): none dropped for the name
grep -qE " ([3-9]|[1-9][0-9]+) figures" out || fail "the report dropped the figures of a hostile name: $(cat out)"
run report runs=1 file=r.md
for f in r.html r.md; do
    ! grep -q $'\x1b' $f && ! grep -qF "$raw_bidi" $f || fail "$f holds a raw ESC or U+202E"
    has_long $f || fail "$f cut the 70 KB note"
    ! grep -q "999998" $f || fail "$f counts a cut from the crafted console number (item 12)"
done
grep -qF 'x\u202egnp.exe\x1b[2J\xff' r.html || fail "report: the name: $(grep -o 'x.u202e[^<]*' r.html | head -1)"
echo "any bytes: runs, run, log, --json, export, plot and report escape them, nothing cut; items 10, 12"

# ---- item 11: report file= never replaces silently, never follows a link ---------------
echo keep >existing.html
"$bin" report runs=1 file=existing.html >out 2>&1 && fail "report replaced an existing file without overwrite=true"
grep -q "existing.html exists; add overwrite=true" out || fail "item 11 message: $(cat out)"
[ "$(cat existing.html)" = keep ] || fail "the existing file changed"
run report runs=1 file=existing.html overwrite=true
grep -q "replaced the old one" out || fail "overwrite=true does not say it replaced: $(cat out)"
echo target >target.txt
ln -s target.txt link.html
"$bin" report runs=1 file=link.html overwrite=true >out 2>&1 && fail "report wrote through a symbolic link"
grep -q "symbolic link" out && [ "$(cat target.txt)" = target ] || fail "the link's target: $(cat out)"
mkdir elsewhere
ln -s elsewhere fig_files
"$bin" report runs=1 file=fig.md overwrite=true >out 2>&1 && fail "report wrote figures into a symlinked NAME_files/"
[ -z "$(ls elsewhere)" ] || fail "figures landed through the link"
mkdir -p real_files && echo victim >victim.txt && ln -s ../victim.txt real_files/fig1.svg
run report runs=1 file=real.md overwrite=true
[ "$(cat victim.txt)" = victim ] || fail "a figure was written through a link planted in NAME_files/"
echo "item 11: report refuses to replace silently or follow a link"
# ---- a run that cannot be signed says so (an unsafe key file): fork and rm then treat it
# as another user's, and the user is told at the start, not when they fork it
mkdir -p "$dir/loose-config/lmlab" && cp "$XDG_CONFIG_HOME/lmlab/key" "$dir/loose-config/lmlab/key"
chmod 644 "$dir/loose-config/lmlab/key"
XDG_CONFIG_HOME="$dir/loose-config" "$bin" train quick steps=3 >out 2>&1 || fail "train with a loose key: $(cat out)"
grep -q "is not signed under your key (.*mode 644.*chmod 600" out || fail "an unsigned run is not said: $(cat out)"
run train quick steps=3
grep -q "not signed" out && fail "a signed run says it is not: $(cat out)"
echo "unsigned runs: said at the start"
echo "PASS"
