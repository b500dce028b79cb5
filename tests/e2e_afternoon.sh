#!/usr/bin/env bash
# e2e_afternoon.sh — issue 49's findings from the shell, one check per item: compare's
# values in the order of its runs (1), a fork's own steps, time and speed (2), prompts
# encoded as typed (3), tokenize with the opened model's tokenizer (4), and the items after
# them as they land. Usage: e2e_afternoon.sh LMLAB_BINARY
set -u
bin=$(readlink -f "$1")
. "$(dirname "$0")/bounded.sh"   # bwait: every wait on a child is bounded
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
export LMLAB_DB="$dir/t.db"
# die: the setup broke, nothing after it means anything; fail: this item is wrong, the
# others still run (so one run against an old binary names every item it gets wrong)
die() { echo "FAIL: $*"; exit 1; }
status=0
fail() { echo "FAIL: $*"; status=1; }
# near A B: |A - B| <= TOL (default 1e-6 relative)
near() { awk -v a="$1" -v b="$2" -v t="${3:-1e-6}" 'BEGIN { d = a - b; if (d < 0) d = -d;
         m = (a < 0 ? -a : a); if (m < 1) m = 1; exit !(d <= t * m) }'; }

# --- item 1: compare prints run A's value first for "run A vs run B"
"$bin" train quick steps=400 checkpoint_every=200 >t1.txt 2>&1 || die "train: $(cat t1.txt)"
"$bin" train quick steps=100 seed=9 >t2.txt 2>&1 || die "train seed=9: $(cat t2.txt)"
"$bin" compare 1 2 >cmp.txt 2>&1 || die "compare: $(cat cmp.txt)"
if line=$(grep "^numbers, run 1 vs run 2: part at step" cmp.txt); then
    step=$(echo "$line" | sed -E 's/.*part at step ([0-9]+) .*/\1/')
    va=$(echo "$line" | sed -E 's/.*\(loss ([^ ]+) vs ([^ )]+)\).*/\1/')
    vb=$(echo "$line" | sed -E 's/.*\(loss ([^ ]+) vs ([^ )]+)\).*/\2/')
    "$bin" -c "export 1 format=csv" >e1.csv && "$bin" -c "export 2 format=csv" >e2.csv || die export
    l1=$(grep -E "^1,$step,loss," e1.csv | cut -d, -f4)
    l2=$(grep -E "^2,$step,loss," e2.csv | cut -d, -f4)
    near "$va" "$l1" && near "$vb" "$l2" ||
        fail "compare 1 2 says $line; run 1's loss there is $l1, run 2's $l2"
else
    fail "compare 1 2 has no 'numbers, run 1 vs run 2: part at step' line: $(cat cmp.txt)"
fi
echo "checked: item 1 compare order"

# --- item 2: a fork states its own steps, seconds and speed
"$bin" --json fork 1 step=200 lr=1e-3 >f.json 2>&1 || die "fork: $(cat f.json)"
end=$(grep '"event":"end"' f.json) || die "fork: no end: $(cat f.json)"
echo "$end" | grep -q '"trained_steps":200' || fail "fork's end does not count its own 200 steps: $end"
run=$(echo "$end" | sed -E 's/.*"run":([0-9]+).*/\1/')
el=$(echo "$end" | sed -E 's/.*"elapsed":([0-9.e+-]+).*/\1/')
tps=$(echo "$end" | sed -E 's/.*"tokens_per_s":([0-9.e+-]+).*/\1/')
"$bin" -c "export $run format=csv" >ef.csv || die "export fork"
f400=$(grep -E "^$run,400,elapsed," ef.csv | cut -d, -f4)
"$bin" -c "export 1 format=csv" >e1.csv || die export
p200=$(grep -E "^1,200,elapsed," e1.csv | cut -d, -f4)
t400=$(grep -E "^$run,400,tokens," ef.csv | cut -d, -f4)
t200=$(grep -E "^1,200,tokens," e1.csv | cut -d, -f4)
own=$(awk -v a="$f400" -v b="$p200" 'BEGIN { printf "%.9f", a - b }')
near "$el" "$own" 1e-4 || fail "fork says $el s of training, its own is $f400 - $p200 = $own"
want=$(awk -v a="$t400" -v b="$t200" -v s="$own" 'BEGIN { printf "%.3f", (a - b) / s }')
near "$tps" "$want" 1e-3 || fail "fork says $tps tokens/s, its own tokens over its own seconds are $want"
"$bin" fork 1 step=200 lr=1e-3 >f.txt 2>&1 || die "fork text"
grep -qE "^  200 steps \(#1@200 to 400\) in " f.txt || fail "fork's summary: $(tail -2 f.txt)"
"$bin" compare 1 "$run" >cf.txt 2>&1 || die "compare fork"
shown=$(grep "^tokens/s" cf.txt | awk '{ print $3 }')
near "$shown" "$want" 2e-3 || fail "compare shows the fork at $shown tokens/s, its own is $want"
echo "checked: item 2 fork's own time and speed"

# --- item 11 (the report's part; test_plot checks the figures' styles and legend): a
# fork's lineage in the report
"$bin" report runs=1,"$run" file=rep.html >rep.txt 2>&1 || die "report: $(cat rep.txt)"
grep -q "<td>fork of #1 at step 200</td>" rep.html || fail "the report does not show run $run's lineage"
echo "checked: item 11 lineage in the report"

# --- items 3 and 4: a prompt is encoded as typed; tokenize after open uses the model's
"$bin" train quick tokenizer=word vocab_size=2000 steps=5 eval_every=5 name=words >tw.txt 2>&1 ||
    die "train word: $(cat tw.txt)"
wid=$("$bin" --json runs name=words | sed -E 's/.*"id":([0-9]+).*/\1/' | head -1)
"$bin" -c "open $wid; tokenize \"the king was\"" >tok.txt 2>&1 || fail "tokenize: $(cat tok.txt)"
grep -q "^tokenizer=word (2000 tokens, of the open model run #$wid): 3 pieces" tok.txt ||
    fail "tokenize after open $wid: $(cat tok.txt)"
grep -q "<eos>" tok.txt && fail "tokenize appends <eos> to a typed text: $(cat tok.txt)"
"$bin" -c "set tokenizer=word; tokenize \"the king was\"" >tok2.txt 2>&1 || fail "tokenize: $(cat tok2.txt)"
grep -q ": 3 pieces" tok2.txt || fail "tokenize under the settings: $(cat tok2.txt)"
"$bin" -c "open $wid; coeffs layer=0 prompt=\"the king was\"" >co.txt 2>&1 || fail "coeffs: $(cat co.txt)"
grep -q "<eos>" co.txt && fail "coeffs shows an <eos> row the prompt does not have: $(cat co.txt)"
grep -qE "^ +was " co.txt || fail "coeffs: no row for 'was': $(cat co.txt)"
"$bin" --json -c "open $wid; sample prompt=\"the king was\" tokens=3" >sa.json 2>&1 || fail "sample: $(cat sa.json)"
grep '"event":"sample"' sa.json | grep -q '"prompt_tokens":3' ||
    fail "sample encodes \"the king was\" as other than its 3 words: $(cat sa.json)"
echo "checked: items 3-4 prompts as typed, tokenize with the open model's tokenizer"

# --- item 9: sweep status ID and sweep wait ID from another shell, live and ended
"$bin" sweep base=quick steps=150 eval_every=50 lr=1e-3,3e-3 name=sw9 >sw.txt 2>&1 &
swpid=$!
sid=""
# The sweep is stored with its trials: its row is committed first and each trial's row
# after it, so a sweep already listed may have 0 or 1 of its 2 trials (what `sweep status`
# then counts): listed with its 2 trials, not by its name alone.
for _ in $(seq 1 300); do   # bounded: 60 s for the sweep to be stored
    sid=$("$bin" --json sweep list 2>/dev/null | grep '"name":"sw9"' | grep '"trials":2,' |
          sed -E 's/.*"sweep":([0-9]+).*/\1/')
    [ -n "$sid" ] && break
    sleep 0.2
done
[ -n "$sid" ] || die "the sweep never appeared in sweep list with its 2 trials within 60 s: $(cat sw.txt)"
"$bin" sweep status "$sid" >ss.txt 2>&1 || fail "sweep status $sid from another shell: $(cat ss.txt)"
grep -q "^sweep #$sid sw9 \(running\|finished\): 2 trials" ss.txt ||
    fail "sweep status $sid: $(cat ss.txt)"
"$bin" sweep wait "$sid" >sww.txt 2>&1 &
wpid=$!
bwait "$wpid" 120 "sweep wait $sid"; wrc=$?
[ "$wrc" = 0 ] || fail "sweep wait $sid from another shell ended $wrc: $(cat sww.txt)"
grep -q "^sweep #$sid sw9 finished: 2 trials: 2 done" sww.txt || fail "sweep wait $sid: $(cat sww.txt)"
bwait "$swpid" 60 "the sweep" >/dev/null || fail "the sweep process: $(cat sw.txt)"
"$bin" sweep wait "$sid" >sww2.txt 2>&1 || fail "sweep wait on an ended sweep: $(cat sww2.txt)"
grep -q "finished: 2 trials: 2 done" sww2.txt || fail "sweep wait on an ended sweep: $(cat sww2.txt)"
"$bin" sweep status 99 >s99.txt 2>&1 && fail "sweep status 99 (none) succeeded: $(cat s99.txt)"
grep -q "no sweep 99" s99.txt || fail "sweep status 99: $(cat s99.txt)"
echo "checked: item 9 sweep status/wait ID from any shell"

# --- item 10: untag, rename, note edit and delete, each recorded with its time
"$bin" tag 1 baseline >/dev/null 2>&1 || die "tag 1 baseline"
"$bin" tag 1 -baseline >tg.txt 2>&1 && fail "tag 1 -baseline added a tag: $(cat tg.txt)"
grep -q "untag 1 baseline" tg.txt || fail "tag 1 -baseline does not point to untag: $(cat tg.txt)"
"$bin" untag 1 baseline >ut.txt 2>&1 || fail "untag 1 baseline: $(cat ut.txt)"
"$bin" --json runs id=1 | grep -q '"tags":\[\]\|"tags":""\|"tags":null' ||
    fail "run 1 still tagged after untag: $("$bin" --json runs id=1)"
"$bin" untag 1 baseline >ut2.txt 2>&1 && fail "untag of a tag the run lacks succeeded"
grep -q "run 1 has no tag 'baseline'" ut2.txt || fail "untag of a missing tag: $(cat ut2.txt)"
"$bin" rename 1 "reference run" >rn.txt 2>&1 || fail "rename: $(cat rn.txt)"
"$bin" --json runs id=1 | grep -q '"name":"reference run"' || fail "rename did not rename run 1"
"$bin" note 1 "lr too high" >/dev/null && "$bin" note 1 "second thought" >/dev/null || die "note"
n1=$("$bin" --json run 1 | sed -E 's/.*"note_list":\[\{"id":([0-9]+).*/\1/')
n2=$((n1 + 1))
"$bin" note 1 edit="$n1" "lr fine after all" >ne.txt 2>&1 || fail "note edit: $(cat ne.txt)"
"$bin" note 1 delete="$n2" >nd.txt 2>&1 || fail "note delete: $(cat nd.txt)"
"$bin" note 2 delete="$n1" >nx.txt 2>&1 && fail "deleted run 1's note through run 2"
"$bin" run 1 >r1.txt 2>&1 || die "run 1"
grep -qE "note $n1 +lr fine after all" r1.txt || fail "the edited note: $(cat r1.txt)"
grep -q "second thought" r1.txt && ! grep -q "deleted (was: second thought)" r1.txt &&
    fail "the deleted note is still listed: $(cat r1.txt)"
for w in "untagged 'baseline'" "renamed 'dispatcher-tinyshakespeare' to 'reference run'" \
         "note $n1 edited (was: lr too high)" "note $n2 deleted (was: second thought)"; do
    grep -F "  $w" r1.txt | grep -qE "^  [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}  " ||
        fail "run 1 does not list the edit \"$w\" with its time: $(sed -n '/^edits/,$p' r1.txt)"
done
echo "checked: item 10 untag, rename, note edit/delete with their times"

# --- item 12: the paper presets say what their two downloads are and how to try without
"$bin" train wikitext2_dispatcher_paper data=wikitext-small steps=1 >p1.txt 2>&1 &&
    fail "the paper preset trained without its vocab.txt: $(cat p1.txt)"
for w in "placeholder is still set: vocab=" "BERT's vocab.txt" "huggingface.co" "at once on bundled data: tokenizer=word"; do
    grep -qF "$w" p1.txt || fail "the missing vocab= does not say \"$w\": $(cat p1.txt)"
done
grep -q "preparing" p1.txt && fail "data prepared before the placeholder was named: $(cat p1.txt)"
"$bin" train wikitext2_dispatcher_paper steps=1 >p2.txt 2>&1 && fail "trained on a placeholder"
# every placeholder at once, and every setting that tries the preset on bundled data
for w in "placeholders are still set: data=/path/to/wikitext-2, vocab=" "data=wikitext-small tokenizer=word"; do
    grep -qF "$w" p2.txt || fail "the placeholders do not say \"$w\": $(cat p2.txt)"
done
"$bin" train wikitext103_dispatcher_after_openwebtext steps=1 >p4.txt 2>&1 && fail "trained on a placeholder"
grep -qF "data=wikitext-small init_from= (an empty init_from= starts from scratch)" p4.txt ||
    fail "the fine-tuning preset's placeholders: $(cat p4.txt)"
"$bin" train wikitext2_dispatcher_paper data=wikitext-small tokenizer=word steps=1 d=16 nhid=16 \
    layers=1 bptt=16 batch=2 eval_batches=1 >p3.txt 2>&1 ||
    fail "the suggested tokenizer=word does not train: $(cat p3.txt)"
echo "checked: item 12 the paper presets' downloads explained"

# --- the low list: wording and small things
# `train EXPERIMENT` at the prompt as from the shell; the start line says what trains
"$bin" -c "train quick steps=3 d=16; wait" >lq.txt 2>&1 || fail "train quick at the prompt: $(cat lq.txt)"
grep -qE "^run #[0-9]+ started: dispatcher d=16 layers=2 bptt=32 on tinyshakespeare" lq.txt ||
    fail "the start line does not say d=16: $(cat lq.txt)"
# a fork has its own name, and its console says forked, not resumed
fid=$run   # item 2's fork of run 1 at step 200
"$bin" --json runs id="$fid" | grep -q '"name":"[^"]*-fork@200"' || fail "fork $fid keeps its parent's name"
"$bin" log "$fid" >fl.txt 2>&1
grep -q "running: forked from run #1 at step 200" fl.txt || fail "fork $fid's console: $(head -2 fl.txt)"
if grep -q "resumed from a checkpoint" fl.txt; then fail "fork $fid's console says resumed"; fi
# tags~ is taken (a tag contains)
"$bin" tag 2 baseline-x >/dev/null 2>&1
"$bin" runs 'tags~base' >tt.txt 2>&1 || fail "runs tags~base: $(cat tt.txt)"
grep -qE "^ +2 " tt.txt || fail "runs tags~base does not list run 2: $(cat tt.txt)"
# show model of an LSTM names no heads and no norm
"$bin" -c "use wikismall_lstm; show model" >sm.txt 2>&1 || fail "show model: $(cat sm.txt)"
grep -E "^model +lstm:" sm.txt | grep -qE "heads=|norm=" && fail "show model of an LSTM: $(grep '^model' sm.txt)"
# coeffs shows a long token whole ("releas" was cut at 6)
"$bin" -c "open $wid; coeffs layer=0 prompt=\"NORTHUMBERLAND: the king\"" >cl.txt 2>&1 || fail "coeffs: $(cat cl.txt)"
grep -qE "^ +NORTHUMBERLAND: " cl.txt || fail "coeffs cuts a long token: $(cat cl.txt)"
# a SIGTERM stop says its cause
"$bin" train quick steps=10000000 log_every=50 eval_every=100000 checkpoint_every=1000000 \
    sample_every=0 name=sigterm >st.txt 2>&1 &
tpid=$!
up=""
for _ in $(seq 1 300); do   # bounded: 60 s for its first logged step
    # the run's own steps follow its status (its config's "steps" is the 10000000 asked for)
    "$bin" --json runs name=sigterm 2>/dev/null | grep -qE '"status":"[a-z]+","steps":[1-9]' && { up=1; break; }
    sleep 0.2
done
[ -n "$up" ] || die "the sigterm run never logged a step: $(cat st.txt)"
kill -TERM "$tpid"
bwait "$tpid" 60 "the run stopped by SIGTERM" >/dev/null
"$bin" --json runs name=sigterm | grep -q '"reason":"stopped at step [0-9]*: its lmlab process got a termination signal' ||
    fail "a SIGTERM stop gives no cause: $("$bin" --json runs name=sigterm | grep -o '"reason":"[^"]*"')"
echo "checked: low list (train EXPERIMENT at the prompt, start line, fork name and console, tags~, show model)"
exit $status
