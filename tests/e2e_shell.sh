#!/usr/bin/env bash
# e2e_shell.sh — every command of the prompt runs from the shell as `lmlab CMD ARGS`
# (issue 27 item 3): the same words, exit status 0/1/2, --json; a word names a script only
# when it is a regular file and no command (both: the command runs, stderr says so).
# Usage: e2e_shell.sh LMLAB_BINARY
set -u
bin=$(readlink -f "$1")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
export LMLAB_DB="$dir/t.db"
fail() { echo "FAIL: $*"; exit 1; }
expect() { # expect STATUS DESCRIPTION -- command...
    local want=$1 what=$2; shift 3
    "$@" >"$dir/out" 2>"$dir/err"; local rc=$?
    [ "$rc" = "$want" ] || { cat "$dir/out" "$dir/err"; fail "$what: exit $rc, want $want"; }
}

expect 0 "train EXP from the shell" -- "$bin" train quick steps=30
grep -q "finished 30 steps" out || fail "train did not wait for its run: $(cat out)"
expect 0 "train with a value holding spaces" -- "$bin" train quick steps=20 name="two words"

# a runs/ folder in the project folder is no script: `lmlab runs` lists the runs
mkdir -p runs
expect 0 "runs with a runs/ folder here" -- "$bin" runs
grep -q "two words" out || fail "runs did not list the runs: $(cat out err)"
grep -qE "^ +1 " out || fail "runs did not list run 1: $(cat out)"

expect 0 "compare 1 2" -- "$bin" compare 1 2
grep -q "run 1" out && grep -q "run 2" out || fail "compare: $(cat out)"
[ "$(grep -c '^name ' out)" = 1 ] || fail "compare prints the name row $(grep -c '^name ' out) times: $(cat out)"
grep -q "^steps (budget) " out || fail "compare: the steps budget not labelled: $(cat out)"
expect 0 "note with spaces" -- "$bin" note 1 "a note; with # and \"quotes\""
expect 0 "tag" -- "$bin" tag 1 keep
expect 0 "run 1" -- "$bin" run 1
grep -q 'a note; with # and "quotes"' out || fail "the note was not stored as typed: $(cat out)"
expect 0 "runs filter" -- "$bin" runs tag=keep
grep -qE "^ +1 " out && ! grep -qE "^ +2 " out || fail "runs tag=keep: $(cat out)"

# export to stdout under --json joins the one-object-per-line stream (issue 25 item 8)
expect 0 "export json under --json" -- "$bin" --json export 1 2 format=json
python3 -c '
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
runs = [json.loads(l) for l in lines]
assert [r["id"] for r in runs] == [1, 2] and all(r["event"] == "export" for r in runs), runs
assert all(len(r["metrics"]) > 0 for r in runs)
' out || fail "export under --json is not one object a line: $(head -c 300 out)"
expect 0 "export csv under --json" -- "$bin" --json export 1
python3 -c '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert len(o) == 1 and o[0]["format"] == "csv" and o[0]["csv"].startswith("run,step,"), o
' out || fail "csv export under --json: $(head -c 300 out)"

# --json before or after the command
expect 0 "--json after" -- "$bin" runs --json
head -1 out | grep -q '^{"id":' || fail "runs --json: $(head -2 out)"
expect 0 "--json before" -- "$bin" --json run 2
grep -q '"name":"two words"' out || fail "--json run 2: $(head -c 300 out)"

# train resume=ID: a stopped run continues from the shell
"$bin" -c "use quick; train steps=300; stop" >/dev/null 2>&1 || fail "could not make a stopped run"
expect 0 "train resume=3" -- "$bin" train resume=3
grep -q "finished 300 steps" out || fail "resume=3 did not train to its end: $(cat out err)"

# exit statuses: 2 usage, 1 failure
expect 2 "unknown command" -- "$bin" runz
grep -q "did you mean 'runs'" err || fail "no suggestion for runz: $(cat err)"
expect 2 "unknown key" -- "$bin" runs sort=bogus
expect 2 "no such run" -- "$bin" run 99
expect 2 "a directory" -- "$bin" experiments_dir_not_there/
mkdir -p somedir
expect 2 "a directory named like no command" -- "$bin" somedir
grep -q "directory" err || fail "directory: $(cat err)"
expect 1 "a failing command" -- "$bin" open "$dir/nothing.safetensors"

# a regular file named like a command: the command runs, stderr says which; ./NAME runs it
printf 'help quit\n' >status
expect 0 "status is a file and a command" -- "$bin" status
grep -q "is a command and also a file" err || fail "no note on stderr: $(cat err)"
expect 0 "./status runs the file" -- "$bin" ./status
grep -q "leave lmlab" out || fail "./status did not run the script: $(cat out)"
printf 'runs limit=1\n' >tour.lmlab
expect 0 "a script" -- "$bin" tour.lmlab
grep -qE "^ +3 " out || fail "script: $(cat out)"

# filters and sorts name known keys only (issue 27 item 4); JSON field names are aliases
expect 0 "filter by the JSON name best_val" -- "$bin" runs "best_val<100"
grep -qE "^ +1 " out || fail "best_val<100 matched nothing: $(cat out err)"
expect 2 "unknown filter key" -- "$bin" runs "lrr<1"
grep -q "did you mean 'lr'" err || fail "no suggestion for lrr: $(cat err)"
expect 2 "unknown sort key" -- "$bin" runs sort=stpes
grep -q "did you mean 'steps'" err || fail "no suggestion for stpes: $(cat err)"
expect 0 "sort by any column, descending" -- "$bin" runs sort=-steps
[ "$(sed -n 2p out | awk '{print $1}')" = 3 ] || fail "sort=-steps: $(cat out)"
expect 0 "sort by a config key" -- "$bin" runs sort=steps limit=1
[ "$(sed -n 2p out | awk '{print $1}')" = 2 ] || fail "sort=steps limit=1: $(cat out)"

# one-shot commands that would do nothing are refused; eval/save name a run; rm lists its
# plan; sample runs= checks every id before sampling any (issue 33 item 12)
expect 2 "use EXP one-shot" -- "$bin" use quick
grep -q "would do nothing" err || fail "use quick: $(cat err)"
expect 2 "set one-shot" -- "$bin" set lr=1e-3
grep -q "lmlab train quick lr=1e-3" err || fail "set: $(cat err)"
expect 0 "use alone lists" -- "$bin" use
grep -q quick out || fail "use: $(cat out)"
expect 0 "eval ID" -- "$bin" eval 1 batches=2
grep -q "^run #1 best.safetensors (step 30 of 30" out || fail "eval 1: $(cat out err)"
expect 2 "eval of no run" -- "$bin" eval 99
expect 0 "save ID PATH" -- "$bin" save 1 "$dir/one.safetensors"
[ -s "$dir/one.safetensors" ] || fail "save 1 wrote nothing: $(cat out err)"
expect 2 "rm without yes in a script" -- "$bin" rm 2 </dev/null
grep -q "rm would delete 1 run" out && grep -q "run 2 " out || fail "rm plan: $(cat out err)"
expect 0 "run 2 still there" -- "$bin" run 2
expect 2 "sample runs= with a missing run" -- "$bin" sample runs=1,999 tokens=3
[ ! -s out ] || fail "sample sampled before failing on 999: $(cat out)"
grep -q "no run 999" err || fail "sample runs=1,999: $(cat err)"

# generic: every command of the table is found from the shell (none is "unknown")
for c in $("$bin" help | sed -n 's/^  \([a-z]*\).*/\1/p'); do
    case $c in train|sweep|bench|watch|wait) continue ;; esac   # these block by design
    timeout 60 "$bin" "$c" </dev/null >/dev/null 2>"$dir/err"
    rc=$?
    grep -q "unknown command" err && fail "'$c' is unknown from the shell"
    [ $rc -le 2 ] || fail "'$c' exit $rc"
done
echo "e2e_shell: ok"
