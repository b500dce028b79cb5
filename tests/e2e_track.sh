#!/usr/bin/env bash
# e2e_track.sh — what a tracker shows (issue 37) against the real binary: a run's system
# metrics in `run ID` and --json, its console from another process (`log ID`, `log ID
# follow` that ends with the run, tail=N), notes on runs and sweeps with `runs note~`, alert
# rules per experiment (alerts=) and live (`alert ID on=... run="CMD"`, the line in an
# attached dashboard (tmux), whose system view shows the run; the command gets
# the run's facts in its environment and a hostile run name stays data), hostile console
# and note text escaped in `log` and the report, and `report` as HTML and Markdown: loaded
# in headless Chromium, which must decode every figure and find the tables (skipped with a
# message when chromium is absent), and 1,000 runs reported in < 10 s and < 20 MB.
# Every wait is bounded. Usage: e2e_track.sh LMLAB_BINARY
set -u
bin=$(readlink -f "$1")
. "$(dirname "$0")/bounded.sh"   # bwait: every wait on a child is bounded
dir=$(mktemp -d)
bgpid= fpid=
# on a failure the run and `log follow` may still write into $dir: stop them, then remove
trap 'kill $bgpid $fpid 2>/dev/null; tmux -L "lmlab-track-$$" kill-server 2>/dev/null
      rm -rf "$dir" 2>/dev/null || { sleep 1; rm -rf "$dir"; }' EXIT
cd "$dir"
export LMLAB_DB="$dir/t.db" LMLAB_SYSMETRICS_EVERY=0.3 XDG_CONFIG_HOME="$dir/config"   # the alert key
command -v sqlite3 >/dev/null || { echo "sqlite3 is needed (scripts/deps.sh installs it)"; exit 1; }
q() { sqlite3 -cmd '.timeout 5000' "$LMLAB_DB" "$1"; }
fail() { echo "FAIL: $*"; exit 1; }
run() { "$bin" "$@" >out 2>err || { cat out err; fail "lmlab $*: exit $?"; }; }

# ---- per-experiment alerts, system metrics, console -------------------------------------
run train quick steps=300 name=first alerts=finished,loss\<9
q "SELECT count(*) FROM run_sysmetrics WHERE run_id=1" | grep -qv '^0$' ||
    fail "no system samples for run 1"
run run 1
grep -q "^system (" out && grep -q "cpu %  *mean" out && grep -q "rss MiB  *mean" out ||
    fail "run 1 has no system block: $(cat out)"
grep -q "finished: finished at step 300" out || fail "the finished alert did not fire: $(cat out)"
run --json run 1
python3 -c "
import json,sys; o=json.load(open('out'))
s=o['system']; assert s['samples']>=1 and s['rss_mb_peak']>0 and s['threads_peak']>=1, s
assert {a['rule'] for a in o['alerts_fired']}=={'finished','loss<9'}, o['alerts_fired']
" || fail "run --json: $(cat out)"
run log 1
grep -q "eval  *step 300  valid loss" out && grep -q "status  *finished" out || fail "log 1: $(cat out)"
run log 1 tail=2
[ "$(wc -l <out)" = 2 ] || fail "tail=2 printed $(wc -l <out) lines"

# ---- live alert with a command; log follow from another process --------------------------
"$bin" train quick steps=1000000 name='$(touch pwned)' >train.out 2>&1 &
bgpid=$!
wait_until 60 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$LMLAB_DB' \"SELECT last_step FROM runs WHERE id=2\")\" -gt 0 ]" ||
    fail "run 2 did not start within 60 s: $(cat train.out)"
# a dashboard attached to run 2 (tmux): the system view, then the alert as a line
sock="lmlab-track-$$"
if command -v tmux >/dev/null; then
    export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8
    tmux -L "$sock" new-session -d -s t -x 120 -y 40 "$bin"
    screen_has() { tmux -L "$sock" capture-pane -p -t t | grep -qF "$1"; }
    wait_until 30 screen_has "lmlab>" || fail "the dashboard did not start"
    tmux -L "$sock" send-keys -t t -l "attach 2"
    tmux -L "$sock" send-keys -t t Enter
    wait_until 30 screen_has "attached run #2" || fail "attach 2: $(tmux -L "$sock" capture-pane -p -t t)"
    tmux -L "$sock" send-keys -t t 7
    wait_until 30 screen_has "run #2: tokens/s" || fail "no system view: $(tmux -L "$sock" capture-pane -p -t t)"
    wait_until 30 screen_has "valid loss" || fail "no console in the system view (its eval lines)"
fi
run alert 2 on=ended run="sh -c 'env > alert_env.txt'"
grep -q "alert [0-9]* on run 2: ended, then runs sh -c" out || fail "alert: $(cat out)"
run alert 2 on=step\>1
timeout 120 "$bin" log 2 follow >follow.out 2>&1 &
fpid=$!
wait_until 30 sh -c "sqlite3 -cmd '.timeout 5000' '$LMLAB_DB' 'SELECT rule FROM alert_events WHERE run_id=2' | grep -q 'step>1'" ||
    fail "the live rule step>1 did not fire within 30 s"
if command -v tmux >/dev/null; then
    # the status bar keeps the newest alert (its scrollback line may scroll off at once
    # behind the run's evaluation lines on a fast machine)
    wait_until 30 screen_has "alert step>1 " ||
        fail "no alert in the attached dashboard's status bar: $(tmux -L "$sock" capture-pane -p -t t)"
    tmux -L "$sock" kill-server
else
    echo "SKIP: tmux is not installed: the dashboard part did not run"
fi
run stop 2
bwait "$bgpid" 60 "the stopped run"; bgpid=
bwait "$fpid" 60 "log follow" || fail "log follow did not end with the run: $(tail -3 follow.out)"
fpid=
grep -q "status  *stopped" follow.out || fail "log follow missed the end: $(tail -5 follow.out)"
grep -q "(run 2 is stopped)" follow.out || fail "log follow did not say the run ended"
wait_until 15 test -s alert_env.txt || fail "the alert's command did not run within 15 s"
grep -q "^LMLAB_RUN_ID=2$" alert_env.txt && grep -q "^LMLAB_ALERT_RULE=ended$" alert_env.txt &&
    grep -qF 'LMLAB_RUN_NAME=$(touch pwned)' alert_env.txt || fail "facts: $(grep LMLAB alert_env.txt)"
[ ! -e pwned ] || fail "the hostile run name was run as shell text"
run alert 2
grep -q "command exit 0" out || fail "the command's exit not recorded: $(cat out)"
"$bin" alert 2 on=nonsense >out 2>&1 && fail "a bad rule was accepted"
grep -q "tokens_per_s" out || fail "a bad rule's message lists no metrics: $(cat out)"
"$bin" log 2 follow tail=x >out 2>&1 && fail "tail=x accepted"

# ---- notes, hostile text ----------------------------------------------------------------
run note 1 "baseline: lr 3e-3 <script>alert(1)</script>"
run note 1 "second look"
q "INSERT INTO sweeps(name, spec, strategy, status, created) VALUES('sw', 'lr=1', 'grid', 'finished', 0)"
q "UPDATE runs SET sweep_id=1 WHERE id=2"
run note sweep=1 "the sweep went nowhere"
run runs note~NOWHERE
grep -qE "^ +2 " out && ! grep -qE "^ +1 " out || fail "note~ via the sweep's note: $(cat out)"
run runs note~baseline
grep -qE "^ +1 " out || fail "runs note~baseline: $(cat out)"
# (a script: a shell command line holds at most 16 KB, lmlab says so)
{ printf 'note 1 "'; head -c 70000 /dev/zero | tr '\0' x; printf '"\n'; } >longnote.lm
"$bin" longnote.lm >out 2>&1 && fail "an over-long note was accepted"
grep -q "at most 65536 bytes" out || fail "the note limit is not named: $(cat out)"
# hostile text written past lmlab's checks (an old build, a hand edit): shown escaped
q "INSERT INTO run_console(run_id, seq, t, kind, text) VALUES(1, 999, 0, 'warning',
   'evil '||char(27)||']0;pwned'||char(7)||' <img src=x onerror=alert(1)> '||CAST(X'FF' AS TEXT))"
q "UPDATE notes SET text='n '||char(27)||'[31m red' WHERE id=(SELECT max(id) FROM notes WHERE run_id=1)"
"$bin" log 1 >out 2>&1
grep -q $'\e' out && fail "log printed a raw escape"
grep -qF 'evil \e]0;pwned\a' out || fail "log: the escape is not shown escaped: $(grep evil out)"

# ---- report -----------------------------------------------------------------------------
run train quick steps=200 lr=1e-3 name=second
# run 3's console as if the store had cut its first 6,999 lines (it keeps the newest 5,000)
q "INSERT INTO run_console(run_id, seq, t, kind, text) VALUES(3, 7000, 0, 'info', 'the last line')"
# run 1's console longer than the report's tail: 60 lines before its hostile one (seq 999)
q "WITH RECURSIVE n(i) AS (SELECT 900 UNION ALL SELECT i + 1 FROM n WHERE i < 959)
   INSERT INTO run_console(run_id, seq, t, kind, text) SELECT 1, i, 0, 'info', 'filler' FROM n"
run report runs=1,2,3 sweep=1 file=report.html title="<b>team</b> report"
grep -q "wrote report.html: 3 runs" out || fail "report: $(cat out)"
grep -q $'\e' report.html && fail "a raw escape in the HTML"
grep -q "<script" report.html && fail "a <script> in the HTML"
grep -qF '&lt;script&gt;alert(1)&lt;/script&gt;' report.html || fail "the note is not escaped"
grep -qF '&lt;b&gt;team&lt;/b&gt; report' report.html || fail "the title is not escaped"
grep -qF 'n \x1b[31m red' report.html || fail "a stored escape in a note is not shown as \\x1b"
[ "$(grep -o 'data:image/svg+xml;base64' report.html | wc -l)" -ge 2 ] || fail "no inline figures"
grep -q 'http' report.html && fail "the report refers to the network"
# the console tails of the best runs, escaped, with what was left out said
[ "$(grep -c '<pre class="console">' report.html)" = 3 ] || fail "not 3 console tails in the report"
grep -qF 'evil \x1b]0;pwned\x07 &lt;img src=x onerror=alert(1)&gt; \xff' report.html ||
    fail "the hostile console line is not escaped in the report: $(grep -a evil report.html)"
grep -qF 'The store cut the first 6999 lines of this console (it keeps the newest 5000' report.html ||
    fail "the store's cut of run 3's console is not said"
grep -qE 'Lines 1 to [0-9]+ are left out of this report \(it shows the newest 40\): `lmlab log 1`' \
    report.html || fail "the report's own cut of run 1's console is not said"
grep -qE 'Lines 1 to 920 are left out' report.html || fail "run 1's tail does not start at line 921"
grep -qE '<span class="when">[0-9:]{8} status   </span>stopped' report.html ||
    fail "run 2's last console line (its end) is not in the report"
run note 1 "naïve_ş*x"
run report runs=1,2,3 file=report.md
grep -qF 'naïve\_ş\*x' report.md || fail "markdown escaping of UTF-8 text: $(grep -a naïve report.md)"
[ -s report_files/fig1.svg ] && grep -q '](report_files/fig1.svg)' report.md ||
    fail "markdown figures: $(ls report_files) $(grep -c svg report.md)"
grep -qF '&lt;script&gt;' report.md || fail "markdown: the note is not escaped"
grep -qF '### run \#3 second' report.md && grep -qF 'evil \x1b\]0;pwned\x07 &lt;img src=x onerror=alert(1)&gt; \xff' report.md ||
    fail "markdown: the console tails: $(grep -a -A3 '^## Console' report.md)"
"$bin" report runs=1 file=report.txt >out 2>&1 && fail "file=report.txt accepted"
grep -q "file=NAME.html" out || fail "bad file= message: $(cat out)"

if command -v chromium >/dev/null; then
    # a copy with a probe: the browser must decode every figure and lay out the tables
    sed 's|</body>|<script>addEventListener("load",()=>{const i=[...document.images];document.body.setAttribute("data-probe","imgs="+i.length+" decoded="+i.filter(x=>x.complete\&\&x.naturalWidth>0).length+" tables="+document.querySelectorAll("table").length+" runs_rows="+document.querySelectorAll("#runs-table tbody tr").length+" consoles="+document.querySelectorAll("pre.console").length+" console_text="+[...document.querySelectorAll("pre.console")].filter(p=>p.textContent.includes("<img src=x onerror=alert(1)>")).length)})</script></body>|' report.html >probe.html
    timeout 90 chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=5000 \
        --dump-dom "file://$dir/probe.html" >dom.html 2>chromium.err ||
        fail "chromium failed: $(tail -3 chromium.err)"
    probe=$(grep -o 'data-probe="[^"]*"' dom.html)
    echo "chromium: $probe"
    n_img=$(echo "$probe" | sed -n 's/.*imgs=\([0-9]*\).*/\1/p')
    n_dec=$(echo "$probe" | sed -n 's/.*decoded=\([0-9]*\).*/\1/p')
    [ -n "$n_img" ] && [ "$n_img" -ge 2 ] && [ "$n_img" = "$n_dec" ] ||
        fail "chromium decoded $n_dec of $n_img figures ($probe)"
    echo "$probe" | grep -q "runs_rows=3" || fail "chromium: the runs table has not 3 rows ($probe)"
    [ "$(echo "$probe" | sed -n 's/.*tables=\([0-9]*\).*/\1/p')" -ge 3 ] || fail "tables: $probe"
    echo "$probe" | grep -q "consoles=3 console_text=1" ||
        fail "chromium: not 3 console tails, or the hostile line not shown as text ($probe)"
else
    echo "SKIP: chromium is not installed (Debian package chromium): the browser check did not run"
fi

# ---- 1,000 runs -------------------------------------------------------------------------
q "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
   INSERT INTO runs(name, created, status, model, config, last_step, best_val, final_val, notes)
   SELECT 'bulk-' || i, 1e9 + i, 'finished', 'msa', 'model=msa'||char(10)||'lr='||(i % 7)||char(10)||'d=64',
   100, 2.0 + i / 1000.0, 2.1, '' FROM n;
   WITH RECURSIVE s(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM s WHERE k < 100)
   INSERT INTO metrics(run_id, step, loss) SELECT r.id, s.k, 4.0 / s.k + r.id / 1e4 FROM runs r, s
   WHERE r.name LIKE 'bulk-%';
   INSERT INTO evals(run_id, step, split, loss) SELECT id, 100, 'valid', best_val FROM runs
   WHERE name LIKE 'bulk-%';"
start=$(date +%s.%N)
run report runs="name~bulk" file=big.html
secs=$(echo "$(date +%s.%N) - $start" | bc)
bytes=$(stat -c %s big.html)
echo "1000-run report: $secs s, $bytes bytes ($(cat /proc/loadavg))"
grep -q "wrote big.html: 1000 runs" out || fail "big report: $(cat out)"
[ "$(echo "$secs < 10" | bc)" = 1 ] || fail "1000 runs took $secs s (limit 10 s)"
[ "$bytes" -lt 20000000 ] || fail "1000 runs made $bytes bytes (limit 20 MB)"
echo "e2e_track: ok"
