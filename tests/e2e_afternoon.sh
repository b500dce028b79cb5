#!/usr/bin/env bash
# e2e_afternoon.sh — issue 49's findings from the shell, one check per item: compare's
# values in the order of its runs (1), a fork's own steps, time and speed (2), prompts
# encoded as typed (3), tokenize with the opened model's tokenizer (4), and the items after
# them as they land. Usage: e2e_afternoon.sh LMLAB_BINARY
set -u
bin=$(readlink -f "$1")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
export LMLAB_DB="$dir/t.db"
fail() { echo "FAIL: $*"; exit 1; }
# near A B: |A - B| <= TOL (default 1e-6 relative)
near() { awk -v a="$1" -v b="$2" -v t="${3:-1e-6}" 'BEGIN { d = a - b; if (d < 0) d = -d;
         m = (a < 0 ? -a : a); if (m < 1) m = 1; exit !(d <= t * m) }'; }

# --- item 1: compare prints run A's value first for "run A vs run B"
"$bin" train quick steps=400 checkpoint_every=200 >t1.txt 2>&1 || fail "train: $(cat t1.txt)"
"$bin" train quick steps=100 seed=9 >t2.txt 2>&1 || fail "train seed=9: $(cat t2.txt)"
"$bin" compare 1 2 >cmp.txt 2>&1 || fail "compare: $(cat cmp.txt)"
line=$(grep "^numbers, run 1 vs run 2: part at step" cmp.txt) || fail "compare: $(cat cmp.txt)"
step=$(echo "$line" | sed -E 's/.*part at step ([0-9]+) .*/\1/')
va=$(echo "$line" | sed -E 's/.*\(loss ([^ ]+) vs ([^ )]+)\).*/\1/')
vb=$(echo "$line" | sed -E 's/.*\(loss ([^ ]+) vs ([^ )]+)\).*/\2/')
"$bin" -c "export 1 format=csv" >e1.csv && "$bin" -c "export 2 format=csv" >e2.csv || fail export
l1=$(grep -E "^1,$step,loss," e1.csv | cut -d, -f4)
l2=$(grep -E "^2,$step,loss," e2.csv | cut -d, -f4)
near "$va" "$l1" && near "$vb" "$l2" ||
    fail "compare 1 2 says $line; run 1's loss there is $l1, run 2's $l2"
echo "ok: item 1 compare order"

# --- item 2: a fork states its own steps, seconds and speed
"$bin" --json fork 1 step=200 lr=1e-3 >f.json 2>&1 || fail "fork: $(cat f.json)"
end=$(grep '"event":"end"' f.json) || fail "fork: no end: $(cat f.json)"
echo "$end" | grep -q '"trained_steps":200' || fail "fork's end does not count its own 200 steps: $end"
run=$(echo "$end" | sed -E 's/.*"run":([0-9]+).*/\1/')
el=$(echo "$end" | sed -E 's/.*"elapsed":([0-9.e+-]+).*/\1/')
tps=$(echo "$end" | sed -E 's/.*"tokens_per_s":([0-9.e+-]+).*/\1/')
"$bin" -c "export $run format=csv" >ef.csv || fail "export fork"
f400=$(grep -E "^$run,400,elapsed," ef.csv | cut -d, -f4)
p200=$(grep -E "^1,200,elapsed," e1.csv | cut -d, -f4)
t400=$(grep -E "^$run,400,tokens," ef.csv | cut -d, -f4)
t200=$(grep -E "^1,200,tokens," e1.csv | cut -d, -f4)
own=$(awk -v a="$f400" -v b="$p200" 'BEGIN { printf "%.9f", a - b }')
near "$el" "$own" 1e-4 || fail "fork says $el s of training, its own is $f400 - $p200 = $own"
want=$(awk -v a="$t400" -v b="$t200" -v s="$own" 'BEGIN { printf "%.3f", (a - b) / s }')
near "$tps" "$want" 1e-3 || fail "fork says $tps tokens/s, its own tokens over its own seconds are $want"
"$bin" fork 1 step=200 lr=1e-3 >f.txt 2>&1 || fail "fork text"
grep -qE "^  200 steps \(#1@200 to 400\) in " f.txt || fail "fork's summary: $(tail -2 f.txt)"
"$bin" compare 1 "$run" >cf.txt 2>&1 || fail "compare fork"
shown=$(grep "^tokens/s" cf.txt | awk '{ print $3 }')
near "$shown" "$want" 2e-3 || fail "compare shows the fork at $shown tokens/s, its own is $want"
echo "ok: item 2 fork's own time and speed"
