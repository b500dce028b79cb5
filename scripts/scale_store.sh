#!/usr/bin/env bash
# Builds a run store at scale, for measuring commands on big stores (docs/hostile8.md,
# "A store at scale"): two real tiny runs trained by the current binary, then their rows
# multiplied with SQL (recursive CTEs, INSERT ... SELECT), so the schema, the settings
# text and the value ranges are the binary's own. Not a benchmark of its own and not a
# test: it only builds the file. Needs the sqlite3 shell.
#   scripts/scale_store.sh OUT.db [--huge]
#   LMLAB=path/to/lmlab (default build/app/lmlab, else b/app/lmlab)
# OUT.db must not exist; its checkpoints go to runs/ beside it. Put it outside the repo
# (e.g. /work/scale/big.db). What it holds (5,008 runs, 633 MB; 18 s here):
#   1      a real `train quick log_every=1` run (200 steps), the template of the clones
#   2      the diagnostics run: a real `train quick diagnostics=10` run whose 151 series
#          are stretched to 30,000 points each for its 101 scalar series (3.0 M points)
#          and 2,000 histograms each for its 50 histogram series (100 k histograms),
#          with 30,000 logged steps
#   3,4,5  runs of 5 M, 1 M and 200 k logged steps (log_every=1), a smooth falling loss
#          with a little deterministic noise, one spike (loss 9 at the middle), one
#          missing loss (NULL, as a NaN is stored) at a third and one +inf grad_norm at
#          a quarter; an evaluation every 1,000 logged steps; a system metric every 1,000
#   6..    5,003 clones of run 1 (rows, evaluations and samples; no checkpoints, no
#          checkpoint folder), best_val and created spread
# --huge: the long runs are 15 M, 3 M and 600 k steps and 15,003 clones (1.7 GB; 46 s).
set -euo pipefail
usage() { echo "usage: scripts/scale_store.sh OUT.db [--huge]" >&2; exit 2; }
[ $# -ge 1 ] || usage
OUT=$1; HUGE=0
[ $# -ge 2 ] && { [ "$2" = --huge ] && HUGE=1 || usage; }
[ -e "$OUT" ] && { echo "scale_store: $OUT exists; remove it first" >&2; exit 1; }
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${LMLAB:-}" ]; then
    LMLAB=$here/build/app/lmlab; [ -x "$LMLAB" ] || LMLAB=$here/b/app/lmlab
fi
[ -x "$LMLAB" ] || { echo "scale_store: no lmlab at $LMLAB (set LMLAB=)" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "scale_store: needs the sqlite3 shell" >&2; exit 1; }
mkdir -p "$(dirname "$OUT")"
OUT=$(cd "$(dirname "$OUT")" && pwd)/$(basename "$OUT")
cd "$(dirname "$OUT")"

if [ $HUGE = 1 ]; then L1=15000000; L2=3000000; L3=600000; NCLONE=15003
else L1=5000000; L2=1000000; L3=200000; NCLONE=5003; fi
DIAG_STEPS=30000; DIAG_HISTS=2000

# The rows of one long run (id $1, $2 logged steps), in key order: steps, evaluations,
# system metrics.
long_rows() {
    cat <<SQL
WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM i WHERE n < $2)
INSERT INTO metrics SELECT $1, n, n*0.0000129, 256*n,
    CASE WHEN n = $2/2 THEN 9.0 WHEN n = $2/3 THEN NULL
         ELSE 1.6 + 2.2*exp(-n*5.0/$2) + 0.04*((n*2654435761) % 1000)/1000.0 END,
    0.003, CASE WHEN n = $2/4 THEN 9e999 ELSE 0.4 + 0.3*((n*40503) % 997)/997.0 END,
    300000 + (n*7919) % 50000, n*0.0008 FROM i;
WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM i WHERE n < $2/1000)
INSERT INTO evals SELECT $1, 1000*n, 'valid', 1.65 + 2.2*exp(-n*5000.0/$2),
    exp(1.65 + 2.2*exp(-n*5000.0/$2)), (1.65 + 2.2*exp(-n*5000.0/$2))/ln(2), 111539, n*8.0
    FROM i;
WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM i WHERE n < $2/1000)
INSERT INTO run_sysmetrics(run_id, rank, t, step, cpu, rss_mb, threads, load1, mem_avail_mb,
    mem_total_mb, tokens_per_s)
SELECT $1, 0, 1795990000 + 0.8*n, 1000*n, 95 + (n % 10), 40 + (n % 7), 2, 1.5, 4000, 8000,
    300000 FROM i;
SQL
}

t0=$(date +%s)
"$LMLAB" --db "$OUT" train quick steps=200 log_every=1 >/dev/null
"$LMLAB" --db "$OUT" train quick steps=200 diagnostics=10 >/dev/null
echo "scale_store: two real runs in $(( $(date +%s) - t0 )) s; multiplying rows"

sqlite3 "$OUT" >/dev/null <<SQL
PRAGMA journal_mode=DELETE;
PRAGMA journal_mode=OFF;
PRAGMA synchronous=OFF;
PRAGMA cache_size=-200000;
PRAGMA temp_store=MEMORY;
BEGIN;
-- ---- the diagnostics run (2): 30,000 logged steps, 151 series stretched ----------------
DELETE FROM metrics WHERE run_id=2;
WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM i WHERE n < $DIAG_STEPS)
INSERT INTO metrics SELECT 2, 10*n, n*0.000129, 2560*n,
    1.6 + 2.2*exp(-n/6000.0) + 0.04*((n*2654435761) % 1000)/1000.0, 0.003,
    0.4 + 0.3*((n*40503) % 997)/997.0, 300000 + (n*7919) % 50000, n*0.008 FROM i;
CREATE TEMP TABLE diag_base AS SELECT series_id AS sid, avg(value) AS v
    FROM series_points WHERE series_id IN (SELECT id FROM series_names WHERE run_id=2)
    GROUP BY series_id;
DELETE FROM series_points WHERE series_id IN (SELECT sid FROM diag_base);
WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM i WHERE n < $DIAG_STEPS)
INSERT INTO series_points SELECT b.sid, 10*i.n,
    b.v*(0.9 + 0.2*((i.n*2654435761 + b.sid*97) % 1000)/1000.0)
    FROM diag_base b CROSS JOIN i;
CREATE TEMP TABLE hist_base AS SELECT h.* FROM series_hists h
    WHERE h.series_id IN (SELECT id FROM series_names WHERE run_id=2)
    AND h.step = (SELECT min(step) FROM series_hists g WHERE g.series_id=h.series_id);
DELETE FROM series_hists WHERE series_id IN (SELECT series_id FROM hist_base);
WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM i WHERE n < $DIAG_HISTS)
INSERT INTO series_hists SELECT h.series_id, 150*i.n, h.lo*(1 + i.n/4000.0),
    h.hi*(1 + i.n/4000.0), h.num, h.sum, h.sum_sq, h.n_nan, h.n_posinf, h.n_neginf, h.counts
    FROM hist_base h CROSS JOIN i;
UPDATE runs SET last_step=10*$DIAG_STEPS, name='diagnostics-stretched',
    reason=replace(reason, '200 steps', (10*$DIAG_STEPS) || ' steps'),
    config=replace(config, char(10) || 'steps=200' || char(10),
                   char(10) || 'steps=' || (10*$DIAG_STEPS) || char(10)) WHERE id=2;

-- ---- the long runs (3, 4, 5), from run 1's row ---------------------------------------
CREATE TEMP TABLE longs(id INTEGER PRIMARY KEY, n INTEGER);
INSERT INTO longs VALUES (3, $L1), (4, $L2), (5, $L3);
INSERT INTO runs(id, name, created, started, ended, status, reason, config, model, data_name,
    data_hash, tokenizer, tokenizer_hash, params, machine, git_rev, notes, pid, host,
    last_step, best_val, final_val, checkpoint_dir, heartbeat, tags, sweep_id)
SELECT l.id, 'long-' || l.n, r.created + l.id, r.started + l.id, r.ended + l.id,
    r.status, replace(r.reason, '200 steps', l.n || ' steps'),
    replace(r.config, char(10) || 'steps=200' || char(10), char(10) || 'steps=' || l.n || char(10)),
    r.model, r.data_name, r.data_hash, r.tokenizer, r.tokenizer_hash, r.params, r.machine,
    r.git_rev, NULL, r.pid, r.host, l.n, 1.6, 1.6, NULL, r.heartbeat, r.tags, NULL
    FROM runs r CROSS JOIN longs l WHERE r.id=1 ORDER BY l.id;
$(for r in "3 $L1" "4 $L2" "5 $L3"; do long_rows $r; done)
UPDATE runs SET best_val=(SELECT min(loss) FROM evals e WHERE e.run_id=runs.id),
    final_val=(SELECT loss FROM evals e WHERE e.run_id=runs.id ORDER BY step DESC LIMIT 1)
    WHERE id IN (SELECT id FROM longs);
INSERT INTO samples(run_id, step, prompt, settings, text, created)
SELECT l.id, l.n, s.prompt, s.settings, s.text, s.created FROM samples s CROSS JOIN longs l
    WHERE s.run_id=1;

-- ---- the clones of run 1 (6 ..) ------------------------------------------------------
CREATE TEMP TABLE clones(id INTEGER PRIMARY KEY);
WITH RECURSIVE i(n) AS (SELECT 6 UNION ALL SELECT n+1 FROM i WHERE n < 5 + $NCLONE)
INSERT INTO clones SELECT n FROM i;
INSERT INTO runs(id, name, created, started, ended, status, reason, config, model, data_name,
    data_hash, tokenizer, tokenizer_hash, params, machine, git_rev, notes, pid, host,
    last_step, best_val, final_val, checkpoint_dir, heartbeat, tags, sweep_id)
SELECT c.id, 'clone-' || c.id, r.created - 60.0*c.id, r.started - 60.0*c.id,
    r.ended - 60.0*c.id, r.status, r.reason, r.config, r.model, r.data_name, r.data_hash,
    r.tokenizer, r.tokenizer_hash, r.params, r.machine, r.git_rev, NULL, r.pid, r.host,
    r.last_step, r.best_val + ((c.id*7919) % 1000)/2000.0,
    r.final_val + ((c.id*7919) % 1000)/2000.0, NULL, r.heartbeat, r.tags, NULL
    FROM runs r CROSS JOIN clones c WHERE r.id=1 ORDER BY c.id;
INSERT INTO metrics SELECT c.id, m.step, m.epoch, m.tokens, m.loss, m.lr, m.grad_norm,
    m.tokens_per_s, m.elapsed FROM clones c CROSS JOIN metrics m WHERE m.run_id=1
    ORDER BY c.id, m.step;
INSERT INTO evals SELECT c.id, e.step, e.split, e.loss + ((c.id*7919) % 1000)/2000.0, e.ppl,
    e.bpc, e.tokens, e.elapsed FROM clones c CROSS JOIN evals e WHERE e.run_id=1
    ORDER BY c.id, e.step;
INSERT INTO samples(run_id, step, prompt, settings, text, created)
SELECT c.id, s.step, s.prompt, s.settings, s.text, s.created FROM clones c
    CROSS JOIN samples s WHERE s.run_id=1 ORDER BY c.id;
COMMIT;
PRAGMA journal_mode=WAL;
SQL
"$LMLAB" --db "$OUT" runs limit=3 >/dev/null
echo "scale_store: $OUT, $(du -h "$OUT" | cut -f1), $(sqlite3 "$OUT" 'SELECT count(*) FROM runs') runs, $(( $(date +%s) - t0 )) s"
