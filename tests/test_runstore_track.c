/* test_runstore_track.c — schema step 7 (issue 37): the migration from a version-4 store
 * (tables created, the single runs.notes copied into the notes table), notes on runs and
 * sweeps (every one kept with its time, over-long and control-character text refused with
 * the limit named), the console (a line cut at the byte cap, the oldest lines cut past
 * the per-run cap and the cut counted, tail and after), system metrics (a real /proc
 * sample, stored, means and peaks), alert rules (parse, fire, fire once per run) and an
 * alert's command: split without a shell, the run's facts only in its environment, so a
 * hostile run name never runs as shell text. */
#include "runstore_util.h"
#include "runstore_notes.h"
#include "alertrule.h"
#include "alertseen.h"
#include "alerts.h"
#include "sysmetrics.h"

static void test_migration(void)
{
    char path[128], err[LM_ERR_LEN];
    db_path(path, sizeof path, "old.db");
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long a = new_run(s, "a", "msa", "lr=1\n", NULL);
    runstore_close(s);
    /* back to version 4 as an older lmlab left it: no step-7 tables, one note in runs */
    CHECK(q_exec(path, "DROP TABLE alert_events; DROP TABLE alerts; DROP TABLE notes;"
                       " DROP TABLE run_console; DROP TABLE run_sysmetrics;"
                       " UPDATE runs SET notes='old note'; PRAGMA user_version=4;") == 0,
          "downgrade");
    CHECK(runstore_open(path, &s, err) == LM_OK, "reopen: %s", err);
    CHECK(q_long(path, "PRAGMA user_version") == RUNSTORE_SCHEMA_VERSION, "user_version %d "
          "(the newest; step 7 is this test's): %ld", RUNSTORE_SCHEMA_VERSION,
          q_long(path, "PRAGMA user_version"));
    NoteRow *nt = NULL;
    int n = 0;
    CHECK(runstore_notes(s, a, 0, &nt, &n, err) == LM_OK && n == 1 &&
          !strcmp(nt[0].text, "old note"), "the old note became the first note (n=%d)", n);
    runstore_notes_free(nt, n);
    runstore_close(s);
    CHECK(runstore_open(path, &s, err) == LM_OK, "third open: %s", err);
    CHECK(q_long(path, "SELECT count(*) FROM notes") == 1, "copied once, not at every open");
    runstore_close(s);
}

static void test_notes(void)
{
    char path[128], err[LM_ERR_LEN];
    db_path(path, sizeof path, "notes.db");
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long a = new_run(s, "a", "msa", "lr=1\n", NULL), id = 0, sw = 0;
    CHECK(runstore_sweep_create(s, "sw", "lr=1,2", "grid", &sw, err) == LM_OK, "sweep: %s", err);
    CHECK(runstore_note_add(s, a, 0, "first", &id, err) == LM_OK && id > 0, "add: %s", err);
    CHECK(runstore_note_add(s, a, 0, "second\nline two", NULL, err) == LM_OK, "add 2: %s", err);
    CHECK(runstore_note_add(s, 0, sw, "sweep note <b>", NULL, err) == LM_OK, "sweep: %s", err);
    NoteRow *nt = NULL;
    int n = 0;
    CHECK(runstore_notes(s, a, 0, &nt, &n, err) == LM_OK && n == 2 && !strcmp(nt[0].text, "first")
          && !strcmp(nt[1].text, "second\nline two") && nt[0].t > 1e9, "both kept, oldest first");
    runstore_notes_free(nt, n);
    CHECK(runstore_notes(s, 0, sw, &nt, &n, err) == LM_OK && n == 1 && nt[0].sweep_id == sw,
          "the sweep's note");
    runstore_notes_free(nt, n);
    char big[RUNSTORE_NOTE_MAX + 2];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    CHECK(runstore_note_add(s, a, 0, big, NULL, err) == LM_EARG && strstr(err, "at most 65536 bytes"),
          "over-long refused with the limit named: %s", err);
    big[RUNSTORE_NOTE_MAX] = 0;
    CHECK(runstore_note_add(s, a, 0, big, NULL, err) == LM_OK, "exactly the limit: %s", err);
    CHECK(runstore_note_add(s, a, 0, "esc \x1b[31m", NULL, err) == LM_EARG && strstr(err, "U+001B"),
          "escape refused: %s", err);
    CHECK(runstore_note_add(s, a, 0, "bad \xff utf8", NULL, err) == LM_EARG, "invalid UTF-8");
    CHECK(runstore_note_add(s, 999, 0, "x", NULL, err) == LM_EARG && strstr(err, "no run 999"),
          "unknown run: %s", err);
    CHECK(runstore_note_add(s, 0, 999, "x", NULL, err) == LM_EARG && strstr(err, "no sweep 999"),
          "unknown sweep: %s", err);
    RunRow *rows = NULL;
    CHECK(runstore_list(s, "note~SECOND", NULL, 0, &rows, &n, err) == LM_OK && n == 1 &&
          rows[0].id == a, "note~ finds the run (case-insensitive): %d", n);
    runstore_rows_free(rows, n);
    CHECK(runstore_list(s, "note~nothing-like-it", NULL, 0, &rows, &n, err) == LM_OK && n == 0,
          "no match");
    runstore_rows_free(rows, n);
    CHECK(runstore_list(s, "note=first", NULL, 0, &rows, &n, err) == LM_EARG &&
          strstr(err, "note takes ~"), "note= refused: %s", err);
    CHECK(runstore_delete_run(s, a, 0, err) == LM_OK, "delete: %s", err);
    CHECK(q_long(path, "SELECT count(*) FROM notes WHERE run_id IS NOT NULL") == 0,
          "a deleted run's notes go with it");
    runstore_close(s);
}

static void test_console(void)
{
    char path[128], err[LM_ERR_LEN], line[64];
    db_path(path, sizeof path, "console.db");
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long a = new_run(s, "a", "msa", "lr=1\n", NULL);
    char big[3000];
    memset(big, 'y', sizeof big - 1);
    big[sizeof big - 1] = 0;
    memcpy(big + RUNSTORE_CONSOLE_LINE_MAX - 4, "\xc3\xa9\xc3\xa9", 4);   /* é at the cut */
    CHECK(runstore_console_append(s, a, "warning", big, err) == LM_OK, "long line: %s", err);
    ConsoleLine *l = NULL;
    int n = 0;
    long cut = -1;
    CHECK(runstore_console_read(s, a, 0, 0, &l, &n, &cut, err) == LM_OK && n == 1 && cut == 0,
          "one line, nothing cut");
    CHECK(n == 1 && strlen(l[0].text) <= RUNSTORE_CONSOLE_LINE_MAX &&
          !strcmp(l[0].text + strlen(l[0].text) - 3, "\xe2\x80\xa6") &&
          !strcmp(l[0].kind, "warning"), "cut to the cap with an ellipsis");
    runstore_console_free(l, n);
    int total = RUNSTORE_CONSOLE_MAX_LINES + 300;
        for (int i = 2; i <= total; i++) {
        snprintf(line, sizeof line, "line %d", i);
        if (runstore_console_append(s, a, "progress", line, err)) {
            CHECK(0, "append %d: %s", i, err);
            break;
        }
    }
    CHECK(runstore_console_read(s, a, 0, 0, &l, &n, &cut, err) == LM_OK, "read: %s", err);
    CHECK(n == RUNSTORE_CONSOLE_MAX_LINES && cut == total - RUNSTORE_CONSOLE_MAX_LINES,
          "capped at %d lines, %ld cut (n=%d)", RUNSTORE_CONSOLE_MAX_LINES, cut, n);
    snprintf(line, sizeof line, "line %d", total);
    CHECK(n > 0 && !strcmp(l[n - 1].text, line) && l[n - 1].seq == total, "newest kept");
    runstore_console_free(l, n);
    CHECK(q_long(path, "SELECT count(*) FROM run_console") <= RUNSTORE_CONSOLE_MAX_LINES + 64,
          "old rows deleted: %ld", q_long(path, "SELECT count(*) FROM run_console"));
    CHECK(runstore_console_read(s, a, 0, 3, &l, &n, &cut, err) == LM_OK && n == 3 &&
          l[2].seq == total && l[0].seq == total - 2, "tail=3");
    runstore_console_free(l, n);
    CHECK(runstore_console_read(s, a, total - 1, 0, &l, &n, &cut, err) == LM_OK && n == 1 &&
          l[0].seq == total, "after: only newer lines");
    runstore_console_free(l, n);
    CHECK(runstore_console_append(s, 999, "info", "x", err) == LM_EARG, "unknown run");
    runstore_close(s);
}

static void test_sysmetrics(void)
{
    char path[128], err[LM_ERR_LEN];
    db_path(path, sizeof path, "sys.db");
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long a = new_run(s, "a", "msa", "lr=1\n", NULL);
    SysMeter m;
    SysSample x = {0}, y = {0};
    sysmetrics_init(&m);
    sysmetrics_sample(&m, &x);
    CHECK(isnan(x.cpu), "no CPU %% without a previous sample");
    /* Spin until this process has used 0.3 s of CPU (not of wall time: on a loaded machine
     * the wall clock says nothing of how much CPU we got), then compare the sample with the
     * share the process's own clocks give over the same interval. */
    struct timespec c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    double w0 = now_s(), sink = 0, used = 0;
    while (used < 0.3) {
        for (int i = 0; i < 10000; i++) sink += sqrt(sink + 1.0);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
        used = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
    }
    sysmetrics_sample(&m, &y);
    double expect = 100.0 * used / (now_s() - w0);
    CHECK(y.cpu > 0 && fabs(y.cpu - expect) < 5 + 0.25 * expect,
          "busy: cpu %.1f%% where the process clocks say %.1f%% (%g)", y.cpu, expect,
          sink > 0 ? 1.0 : 0.0);
    CHECK(y.rss_mb > 0.5 && y.threads >= 1 && y.load1 >= 0 && y.mem_avail_mb > 0 &&
          y.mem_total_mb >= y.mem_avail_mb, "rss %.1f threads %d load %.2f mem %.0f/%.0f",
          y.rss_mb, y.threads, y.load1, y.mem_avail_mb, y.mem_total_mb);
    SysSample rows[3] = {{.t = 100, .cpu = 50, .rss_mb = 10, .threads = 2, .load1 = 1,
                          .mem_avail_mb = 900, .tokens_per_s = 1000},
                         {.t = 105, .cpu = 150, .rss_mb = 30, .threads = 4, .load1 = 3,
                          .mem_avail_mb = 700, .tokens_per_s = 600},
                         {.t = 105, .rank = 1, .cpu = 100, .rss_mb = 20, .threads = 3,
                          .load1 = 2, .mem_avail_mb = 800, .tokens_per_s = NAN}};
    for (int i = 0; i < 3; i++)
        CHECK(runstore_sys_log(s, a, &rows[i], err) == LM_OK, "log %d: %s", i, err);
    SysSummary sum;
    CHECK(runstore_sys_summary(s, a, &sum, err) == LM_OK && sum.n == 3 && sum.ranks == 2,
          "summary: %d samples, %d ranks", sum.n, sum.ranks);
    CHECK(fabs(sum.cpu_mean - 100) < 1e-9 && sum.cpu_peak == 150 && sum.rss_peak == 30 &&
          fabs(sum.load_mean - 2) < 1e-9 && sum.mem_avail_min == 700 && sum.threads_peak == 4,
          "means and peaks: cpu %.1f/%.1f rss %.1f load %.2f", sum.cpu_mean, sum.cpu_peak,
          sum.rss_peak, sum.load_mean);
    SysSample *got = NULL;
    int n = 0;
    CHECK(runstore_sys_series(s, a, 0, &got, &n, err) == LM_OK && n == 2 &&
          got[1].tokens_per_s == 600, "rank 0's series");
    free(got);
    CHECK(runstore_sys_series(s, a, -1, &got, &n, err) == LM_OK && n == 3 &&
          isnan(got[2].tokens_per_s) && got[2].rank == 1, "every rank, NaN kept");
    free(got);
    runstore_close(s);
}

static void test_rules(void)
{
    AlertRule r;
    char canon[ALERTRULE_LEN], err[LM_ERR_LEN], msg[300];
    CHECK(alertrule_parse("val_loss<1.5", &r, canon, sizeof canon, err) == LM_OK &&
          r.kind == ALERT_BELOW && !strcmp(canon, "val_loss<1.5"), "metric rule");
    CHECK(alertrule_parse("stalled", &r, canon, sizeof canon, err) == LM_OK &&
          r.x == ALERTRULE_STALLED_DEFAULT && !strcmp(canon, "stalled:300"), "stalled default");
    CHECK(alertrule_parse("stalled:0", &r, NULL, 0, err) == LM_EARG, "stalled:0 refused");
    CHECK(alertrule_parse("speed<3", &r, NULL, 0, err) == LM_EARG && strstr(err, "tokens_per_s"),
          "unknown metric lists the metrics: %s", err);
    CHECK(alertrule_parse("loss<abc", &r, NULL, 0, err) == LM_EARG, "bad number");
    CHECK(alertrule_check_list("finished,loss>9,stalled:60", err) == LM_OK, "list");
    CHECK(alertrule_check_list("finished,nope", err) == LM_EARG && strstr(err, "nope"),
          "bad list names the rule: %s", err);
    /* one vocabulary (core/base/series.h): plot's `val` is an alert's too (issue 48) */
    CHECK(alertrule_parse("val<2.0", &r, canon, sizeof canon, err) == LM_OK &&
          !strcmp(canon, "val_loss<2"), "val is val_loss: %s", err);
    CHECK(alertrule_parse("vall<2", &r, NULL, 0, err) == LM_EARG && strstr(err, "did you mean"),
          "did you mean: %s", err);
    CHECK(alertrule_parse("gate/0/1>0.9", &r, canon, sizeof canon, err) == LM_OK &&
          !strcmp(canon, "gate/0/1>0.9"), "a family member: %s", err);
    AlertSeen seen;
    alertseen_init(&seen);
    TrainEvent ev = {.kind = TEV_STEP, .step = {.step = 40, .loss = 2, .grad_norm = 1}};
    alertseen_event(&seen, &ev);
    AlertFacts f = {.status = "running", .step = 40, .loss = 2, .val_loss = NAN,
                    .best_val = NAN, .since_step = 10, .value = alertseen_value, .ud = &seen};
    GateStat g[2] = {{.step = 40, .layer = 0, .level = 0, .mean = 0.5f},
                     {.step = 40, .layer = 0, .level = 1, .mean = 0.95f}};
    CHECK(!alertrule_fires(&r, &f, msg, sizeof msg), "no gates yet: silent");
    ev = (TrainEvent){.kind = TEV_GATES, .gates = g, .n_gates = 2};
    alertseen_event(&seen, &ev);
    CHECK(alertrule_fires(&r, &f, msg, sizeof msg) && strstr(msg, "gate/0/1 0.95"), "gate fires: %s", msg);
    alertrule_parse("grad>0.5", &r, NULL, 0, err);
    CHECK(alertrule_fires(&r, &f, msg, sizeof msg) && strstr(msg, "grad_norm 1 > 0.5"), "alias: %s", msg);
    alertrule_parse("val_loss<1.5", &r, NULL, 0, err);
    CHECK(!alertrule_fires(&r, &f, msg, sizeof msg), "no evaluation yet: silent");
    ev = (TrainEvent){.kind = TEV_EVAL, .eval = {.step = 40, .split = "valid", .loss = 1.4}};
    alertseen_event(&seen, &ev);
    CHECK(alertrule_fires(&r, &f, msg, sizeof msg) && strstr(msg, "1.4 < 1.5"), "fires: %s", msg);
    /* steps went on since the evaluation: the message names the evaluation's step */
    ev = (TrainEvent){.kind = TEV_STEP, .step = {.step = 75, .loss = 2, .grad_norm = 1}};
    alertseen_event(&seen, &ev);
    f.step = 75;
    CHECK(alertrule_fires(&r, &f, msg, sizeof msg) && strstr(msg, "1.4 < 1.5 at step 40"),
          "the evaluation's step, not the run's: %s", msg);
    alertrule_parse("best<1.5", &r, NULL, 0, err);
    CHECK(alertrule_fires(&r, &f, msg, sizeof msg) && strstr(msg, "at step 40"), "best's step: %s", msg);
    alertrule_parse("loss>1.5", &r, NULL, 0, err);
    CHECK(alertrule_fires(&r, &f, msg, sizeof msg) && strstr(msg, "at step 75"), "loss's step: %s", msg);
    alertrule_parse("stalled:5", &r, NULL, 0, err);
    CHECK(alertrule_fires(&r, &f, msg, sizeof msg) && strstr(msg, "no step for 10 s"), "stalled");
    f.status = "paused";
    CHECK(!alertrule_fires(&r, &f, msg, sizeof msg), "a paused run is not stalled");
    f.status = "diverged";
    alertrule_parse("finished", &r, NULL, 0, err);
    CHECK(!alertrule_fires(&r, &f, msg, sizeof msg), "diverged is not finished");
    alertrule_parse("ended", &r, NULL, 0, err);
    CHECK(alertrule_fires(&r, &f, msg, sizeof msg), "ended covers diverged");
}

static void test_split(void)
{
    char buf[256], err[LM_ERR_LEN], *argv[8];
    int n = alerts_split("notify-send 'run done' \"a \\\"b\\\"\" x\\ y ;rm", buf, sizeof buf, argv,
                         8, err);
    CHECK(n == 5 && !strcmp(argv[0], "notify-send") && !strcmp(argv[1], "run done") &&
          !strcmp(argv[2], "a \"b\"") && !strcmp(argv[3], "x y") && !strcmp(argv[4], ";rm") &&
          !argv[5], "split without a shell: n=%d", n);
    CHECK(alerts_split("echo 'open", buf, sizeof buf, argv, 8, err) < 0 && strstr(err, "unclosed"),
          "unclosed quote: %s", err);
    CHECK(alerts_split("   ", buf, sizeof buf, argv, 8, err) < 0, "empty");
    CHECK(alerts_split("a b c d e f g h i", buf, sizeof buf, argv, 8, err) < 0, "too many");
}

/* A rule with a command, fired by alerts_poll against a real store: once per run; the
 * command sees the facts in its environment, and a hostile run name stays data. */
static void test_fire_and_command(void)
{
    char path[128], err[LM_ERR_LEN], out[256], pwn[256], cmd[800];
    db_path(path, sizeof path, "alerts.db");
    snprintf(out, sizeof out, "%s/alert-out", tmpdir);
    snprintf(pwn, sizeof pwn, "%s/pwned", tmpdir);
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long a = new_run(s, "a", "msa", "lr=1\n", NULL);
    snprintf(cmd, sizeof cmd, "sh -c 'printf %%s \"$LMLAB_RUN_NAME|$LMLAB_ALERT_RULE|$LMLAB_STEP\""
             " > %s'", out);
    CHECK(runstore_alert_add(s, a, 0, "finished", cmd, "live", NULL, err) == LM_OK, "add: %s", err);
    CHECK(runstore_alert_add(s, a, 0, "loss<1", "", "live", NULL, err) == LM_OK, "add 2");
    AlertEngine e;
    char hostile[128];
    /* relative: the command runs in this folder; the name fits a run name's 63 bytes */
    CHECK(chdir(tmpdir) == 0, "cd %s", tmpdir);
    snprintf(hostile, sizeof hostile, "$(touch pwned);`touch pwned` <b>\"'");
    alerts_init(&e, a, hostile, path);
    AlertSeen seen;
    alertseen_init(&seen);
    TrainEvent step_ev = {.kind = TEV_STEP, .step = {.step = 7, .loss = 2}};
    alertseen_event(&seen, &step_ev);
    AlertFacts f = {.status = "running", .step = 7, .loss = 2, .val_loss = NAN, .best_val = NAN,
                    .value = alertseen_value, .ud = &seen};
    CHECK(alerts_poll(&e, s, &f, 1) == 0, "nothing fires while running with loss 2");
    f.status = "finished";
    f.loss = seen.last.loss = 0.5f;
    CHECK(alerts_poll(&e, s, &f, 1) == 2, "finished and loss<1 fire");
    CHECK(alerts_poll(&e, s, &f, 1) == 0, "each fires once");
    alerts_finish(&e, s, 10.0);
    CHECK(e.n_kids == 0, "the command ended within 10 s");
    FILE *fp = fopen(out, "r");
    char got[256] = "";
    if (fp) {
        if (!fgets(got, sizeof got, fp)) got[0] = 0;
        fclose(fp);
    }
    char want[400];
    snprintf(want, sizeof want, "%s|finished|7", hostile);
    CHECK(!strcmp(got, want), "the facts arrived as data: '%s'", got);
    CHECK(access(pwn, F_OK) != 0, "the hostile name never ran");
    AlertEvent *ev = NULL;
    int n = 0;
    CHECK(runstore_alert_events(s, a, 0, 0, &ev, &n, err) == LM_OK && n == 2 &&
          !strcmp(ev[0].cmd_status, "exit 0") && !ev[1].cmd_status[0],
          "recorded, with the command's exit: '%s'", n ? ev[0].cmd_status : "");
    free(ev);
    /* a command that cannot start says so */
    CHECK(runstore_alert_add(s, a, 0, "ended", "/nonexistent/cmd", "live", NULL, err) == LM_OK, "add 3: %s", err);
    CHECK(alerts_poll(&e, s, &f, 1) == 1, "ended fires");
    CHECK(runstore_alert_events(s, a, 0, 0, &ev, &n, err) == LM_OK && n == 3 &&
          strstr(ev[2].cmd_status, "not started"), "not started: '%s'", n == 3 ? ev[2].cmd_status : "");
    free(ev);
    runstore_close(s);
}

/* Issue 46 items 1 and 2: only a command its writer's key signed runs. A row planted in
 * the store (no code), a row signed by another user's key, a signed row whose command was
 * changed or moved to another run, and a row whose command is longer than a command may be
 * (cut on reading) are refused: the event says "not written by you: refused" or "not
 * whole", the console says the command was not run, and nothing runs. */
static void test_command_authorship(void)
{
    char path[128], err[LM_ERR_LEN], sql[2400], mine[256], pwn[256], cfg[256];
    db_path(path, sizeof path, "auth.db");
    snprintf(mine, sizeof mine, "%s/mine", tmpdir);
    snprintf(pwn, sizeof pwn, "%s/pwned-auth", tmpdir);
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long a = new_run(s, "a", "msa", "lr=1\n", NULL), b = new_run(s, "b", "msa", "lr=1\n", NULL);
    /* mallory: her own key signs her row for run a */
    snprintf(cfg, sizeof cfg, "%s/mallory-config", tmpdir);
    setenv("XDG_CONFIG_HOME", cfg, 1);
    snprintf(sql, sizeof sql, "touch %s", pwn);
    long m_id = 0;
    CHECK(runstore_alert_add(s, a, 0, "step>1", sql, "live", &m_id, err) == LM_OK, "mallory: %s", err);
    snprintf(cfg, sizeof cfg, "%s/config", tmpdir);
    setenv("XDG_CONFIG_HOME", cfg, 1);
    /* planted with no code, as with sqlite3 */
    snprintf(sql, sizeof sql, "INSERT INTO alerts(run_id, rule, cmd, created, origin)"
             " VALUES(%ld, 'step>2', 'touch %s', 0, 'live')", a, pwn);
    CHECK(q_exec(path, sql) == 0, "plant");
    /* the user's own rows: one kept, one changed afterwards, one moved to run b */
    char cmd[300];
    snprintf(cmd, sizeof cmd, "touch %s", mine);
    long ok_id = 0, chg_id = 0, mv_id = 0;
    CHECK(runstore_alert_add(s, a, 0, "step>3", cmd, "live", &ok_id, err) == LM_OK, "add: %s", err);
    CHECK(runstore_alert_add(s, a, 0, "step>4", "true", "live", &chg_id, err) == LM_OK, "add 2");
    CHECK(runstore_alert_add(s, b, 0, "step>5", "true", "live", &mv_id, err) == LM_OK, "add 3");
    snprintf(sql, sizeof sql, "UPDATE alerts SET cmd='touch %s' WHERE id=%ld;"
             " UPDATE alerts SET run_id=%ld, cmd='touch %s' WHERE id=%ld", pwn, chg_id, a, pwn, mv_id);
    CHECK(q_exec(path, sql) == 0, "tamper");
    /* a whole row the user signed, then made longer than a command may be (item 2) */
    long long_id = 0;
    CHECK(runstore_alert_add(s, a, 0, "step>6", "true", "live", &long_id, err) == LM_OK, "add 4");
    int o = snprintf(sql, sizeof sql, "UPDATE alerts SET cmd='touch %s", pwn);
    for (int i = 0; i < 1100; i++) sql[o++] = ' ';
    snprintf(sql + o, sizeof sql - (size_t)o, "%s-B' WHERE id=%ld", pwn, long_id);
    CHECK(q_exec(path, sql) == 0, "lengthen");
    AlertRow *rows = NULL;
    int n = 0;
    CHECK(runstore_alerts(s, a, &rows, &n, err) == LM_OK && n == 6, "6 rules on run a: %d", n);
    for (int i = 0; i < n; i++) {
        char why[200] = "";
        int allowed = alerts_command_allowed(s, &rows[i], why, sizeof why);
        CHECK(allowed == (rows[i].id == ok_id), "alert %ld (%s): allowed %d: %s", rows[i].id,
              rows[i].rule, allowed, why);
        if (rows[i].id == long_id)   /* cut on reading, so its code fails too */
            CHECK(strstr(why, "not written by you: refused") && strstr(why, "bytes, over the 1023"),
                  "long: '%s'", why);
        if (rows[i].id != ok_id)
            CHECK(strstr(why, "not written by you: refused"), "alert %ld: '%s'", rows[i].id, why);
    }
    free(rows);
    AlertEngine e;
    alerts_init(&e, a, "a", path);
    AlertFacts f = {.status = "running", .step = 10, .loss = 2, .val_loss = NAN,
                    .best_val = NAN};
    CHECK(alerts_poll(&e, s, &f, 1) == 6, "all six rules fire");
    alerts_finish(&e, s, 10.0);
    CHECK(access(mine, F_OK) == 0, "the user's own command ran");
    CHECK(access(pwn, F_OK) != 0, "a command the user did not write ran");
    snprintf(sql, sizeof sql, "%s-B", pwn);
    CHECK(access(sql, F_OK) != 0, "the over-long command ran");
    AlertEvent *ev = NULL;
    CHECK(runstore_alert_events(s, a, 0, 0, &ev, &n, err) == LM_OK && n == 6, "events %d", n);
    int refused = 0;
    for (int i = 0; i < n; i++) refused += !strncmp(ev[i].cmd_status, "not written by you", 18);
    CHECK(refused == 5, "5 events say not written by you: %d", refused);
    free(ev);
    ConsoleLine *cl = NULL;
    long cut = 0;
    int nl = 0;
    CHECK(runstore_console_read(s, a, 0, 0, &cl, &nl, &cut, err) == LM_OK, "console: %s", err);
    int said = 0;
    for (int i = 0; i < nl; i++) said += strstr(cl[i].text, "its command was not run") != NULL;
    CHECK(said == 5, "the console says so for each of the 5 refused: %d", said);
    runstore_console_free(cl, nl);
    runstore_close(s);
}

/* The pid written in file path (0 when none yet). */
static long read_pid(const char *path)
{
    FILE *f = fopen(path, "r");
    long pid = 0;
    if (f) {
        if (fscanf(f, "%ld", &pid) != 1) pid = 0;
        fclose(f);
    }
    return pid;
}

/* Issue 46 item 8: an alert command is bounded. One that hangs is ended at its time limit
 * (with what it started), one that exits leaving a child in the background has the child
 * ended, and one still running when the run ends is ended with it; each end is recorded. */
static void test_command_bounded(void)
{
    char path[128], err[LM_ERR_LEN], cmd[600], pf[3][256];
    db_path(path, sizeof path, "bounded.db");
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long a = new_run(s, "a", "msa", "lr=1\n", NULL);
    const char *shape[3] = {"sleep 300 & echo $! > %s; sleep 300", "sleep 300 & echo $! > %s",
                            "echo $$ > %s; exec sleep 300"};
    const char *rule[3] = {"step>1", "step>2", "step>3"};
    for (int i = 0; i < 3; i++) {
        snprintf(pf[i], sizeof pf[i], "%s/bg%d.pid", tmpdir, i);
        char inner[400];
        snprintf(inner, sizeof inner, shape[i], pf[i]);
        snprintf(cmd, sizeof cmd, "sh -c '%s'", inner);
        CHECK(runstore_alert_add(s, a, 0, rule[i], cmd, "live", NULL, err) == LM_OK, "add: %s", err);
    }
    setenv("LMLAB_ALERT_CMD_SECONDS", "1", 1);
    AlertEngine e;
    alerts_init(&e, a, "a", path);
    unsetenv("LMLAB_ALERT_CMD_SECONDS");
    AlertFacts f = {.status = "running", .step = 3, .loss = 2, .val_loss = NAN, .best_val = NAN};
    CHECK(alerts_poll(&e, s, &f, 1) == 2, "the first two fire");
    /* waits for the state it needs: both ended and recorded (bounded: 30 s) */
    for (int k = 0; k < 600 && e.n_kids; k++) {
        usleep(50000);
        alerts_poll(&e, s, &f, 1);
    }
    CHECK(e.n_kids == 0, "the commands were not ended within 30 s");
    e.cmd_seconds = 300;   /* the third is ended by the run's end, not its limit */
    f.step = 5;
    CHECK(alerts_poll(&e, s, &f, 1) == 1, "the third fires");
    for (int k = 0; k < 600 && !read_pid(pf[2]); k++) usleep(50000);
    alerts_finish(&e, s, 0.2);
    AlertEvent *ev = NULL;
    int n = 0;
    CHECK(runstore_alert_events(s, a, 0, 0, &ev, &n, err) == LM_OK && n == 3, "events: %d", n);
    for (int i = 0; i < n; i++) printf("  %s: %s\n", ev[i].rule, ev[i].cmd_status);
    CHECK(n == 3 && strstr(ev[0].cmd_status, "killed after") &&
          strstr(ev[0].cmd_status, "time limit 1 s"), "hung: '%s'", n ? ev[0].cmd_status : "");
    CHECK(n == 3 && !strcmp(ev[1].cmd_status, "exit 0; what it left running was ended"),
          "forked: '%s'", n > 1 ? ev[1].cmd_status : "");
    CHECK(n == 3 && strstr(ev[2].cmd_status, "ended with the run"), "at the end: '%s'",
          n > 2 ? ev[2].cmd_status : "");
    free(ev);
    for (int i = 0; i < 3; i++) {
        long pid = read_pid(pf[i]);
        CHECK(pid > 0, "no pid from command %d", i);
        for (int k = 0; k < 100 && pid > 0 && kill((pid_t)pid, 0) == 0; k++) usleep(20000);
        CHECK(pid > 0 && kill((pid_t)pid, 0) != 0, "command %d's process %ld outlived it", i, pid);
    }
    runstore_close(s);
}

static void run_all(void)
{
    char cfg[256];   /* the user's key lives here, not in the real home */
    snprintf(cfg, sizeof cfg, "%s/config", tmpdir);
    setenv("XDG_CONFIG_HOME", cfg, 1);
    test_migration();
    test_notes();
    test_console();
    test_sysmetrics();
    test_rules();
    test_split();
    test_fire_and_command();
    test_command_authorship();
    test_command_bounded();
}

int main(void)
{
    return runstore_test_main("runstore_track", run_all);
}
