/* cmd_log.c — what a tracker shows of a run beside its curves: `log ID [follow] [tail=N]`
 * (the run's console, from any process), `note ID|sweep=ID "text"` (every note kept with
 * its time), `alert` (rules that fire on a run or a sweep) and the blocks `run ID` adds
 * (notes, system metrics' means and peaks, alerts). Reads and writes the store through
 * runstore_track.h / runstore_notes.h; stored text is escaped by session_printf and by
 * jansson. Not the recording (core/run) nor the report (cmd_report.c). */
#include "cmd_log.h"
#include "output.h"
#include "jsonval.h"
#include "alertrule.h"
#include "alerts.h"
#include "runchanges.h"
#include "safetext.h"
#include "runstore_edits.h"
#include "runstore_notes.h"
#include "sysinfo.h"

#include "err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG_FOLLOW_POLL_US 300000
#define LOG_DEFAULT_TAIL 0

void cmd_log_fmt_time(char *buf, size_t cap, double t, int with_date)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (t <= 0 || !localtime_r(&tt, &tm)) snprintf(buf, cap, "-");
    else strftime(buf, cap, with_date ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tm);
}

static const char *key_of(const LexWord *w, const char *key)
{
    return w->key && !strcmp(w->key, key) ? w->value : NULL;
}

/* run id (bare word) or sweep=ID; exactly one. */
static int parse_target(Session *s, int argc, const LexWord *argv, const char *usage, long *run,
                        long *sweep)
{
    *run = *sweep = 0;
    if (argc >= 2 && !argv[1].key) *run = session_parse_run_id(argv[1].text);
    else if (argc >= 2 && key_of(&argv[1], "sweep")) *sweep = session_parse_run_id(argv[1].value);
    if (*run > 0 || *sweep > 0) return LM_OK;
    return session_error(s, LM_EARG, "run id expected (or sweep=ID), got '%s' — usage: %s",
                         argc >= 2 ? argv[1].text : "", usage);
}

/* ---- log ------------------------------------------------------------------------------ */

static void print_lines(Session *s, const ConsoleLine *l, int n)
{
    char t[32];
    for (int i = 0; i < n; i++) {
        if (s->json) {
            session_emit_json(s, json_pack("{s:I s:f s:s s:o}", "seq", (json_int_t)l[i].seq,
                                           "t", l[i].t, "kind", l[i].kind, "text",
                                           jsonval_str(l[i].text)));
            continue;
        }
        cmd_log_fmt_time(t, sizeof t, l[i].t, 0);
        session_printf(s, "%s %-8s %s", t, l[i].kind, l[i].text);
    }
}

static void print_cut(Session *s, long run, long cut)
{
    if (!cut) return;
    if (cut < 0 && s->json)
        session_emit_json(s, json_pack("{s:I s:n s:s}", "run", (json_int_t)run, "cut",
                                       "note", "the console's line numbers have a gap: how many"
                                       " lines were cut is not known"));
    else if (cut < 0)
        session_printf(s, "(run %ld's console line numbers have a gap — a line was numbered"
                       " out of order in the store — so whether lines were cut is not known;"
                       " every kept line follows)", run);
    else if (s->json)
        session_emit_json(s, json_pack("{s:I s:I s:i}", "run", (json_int_t)run, "cut",
                                       (json_int_t)cut, "kept_max", RUNSTORE_CONSOLE_MAX_LINES));
    else
        session_printf(s, "(the first %ld line%s of run %ld's console were cut: the store keeps"
                       " the newest %d lines of a run)", cut, cut == 1 ? "" : "s", run,
                       RUNSTORE_CONSOLE_MAX_LINES);
}

int cmd_log(Session *s, int argc, const LexWord *argv)
{
    long run = argc >= 2 && !argv[1].key ? session_parse_run_id(argv[1].text) : 0;
    int follow = 0, tail = LOG_DEFAULT_TAIL;
    if (run <= 0)
        return session_error(s, LM_EARG, "run id expected — usage: log RUN_ID [follow] [tail=N]");
    for (int i = 2; i < argc; i++) {
        const char *v = key_of(&argv[i], "tail");
        char *end;
        if (!argv[i].key && !strcmp(argv[i].text, "follow")) follow = 1;
        else if (v && (tail = (int)strtol(v, &end, 10)) > 0 && !*end && tail <= 1000000) continue;
        else
            return session_error(s, LM_EARG, "log takes `follow` and tail=N (1 to 1000000),"
                                 " not '%s'", argv[i].text);
    }
    RunStore *st = session_store(s);
    if (!st) return LM_EDB;
    RunRow r;
    char err[LM_ERR_LEN];
    int status = runstore_get(st, run, &r, err);
    if (status) return session_error(s, status, "%s — `runs` lists the ids", err);
    ConsoleLine *l = NULL;
    int n = 0;
    long cut = 0, after = 0;
    if ((status = runstore_console_read(st, run, 0, tail, &l, &n, &cut, err))) {
        runstore_row_free(&r);
        return session_error(s, status, "%s", err);
    }
    print_cut(s, run, cut);
    if (!n && !follow && !s->json)
        session_printf(s, "run %ld's console is empty (runs recorded before lmlab kept"
                       " consoles have none)", run);
    print_lines(s, l, n);
    after = n ? l[n - 1].seq : 0;
    runstore_console_free(l, n);
    /* follow: new lines until the run is no longer live (or Ctrl-C) */
    s->interrupt = 0;
    double next_judge = 0;
    while (follow && !s->interrupt && runstore_run_live(st, &r)) {
        usleep(LOG_FOLLOW_POLL_US);
        if (sysinfo_now() >= next_judge) {   /* what a frozen or dead owner cannot say: its
                                                alert lines land in the console read below */
            next_judge = sysinfo_now() + 1.0;
            alerts_watch_judge(st, s->db_path, "log follow", NULL, NULL);
        }
        runstore_row_free(&r);
        if ((status = runstore_get(st, run, &r, err))) return session_error(s, status, "%s", err);
        if (runstore_console_read(st, run, after, 0, &l, &n, &cut, err) == LM_OK) {
            print_lines(s, l, n);
            if (n) after = l[n - 1].seq;
            runstore_console_free(l, n);
        }
    }
    if (follow)   /* its owner gone: its `ended` alert, before the last lines are read */
        alerts_watch_judge(st, s->db_path, "log follow", NULL, NULL);
    if (follow && runstore_console_read(st, run, after, 0, &l, &n, &cut, err) == LM_OK) {
        print_lines(s, l, n);   /* what the end wrote */
        runstore_console_free(l, n);
    }
    /* an owner that died (SIGKILL) left "running": reap it, so the last line is the truth
     * (interrupted, at which step), not what the dead process last wrote (issue 46 item 3) */
    if (follow && !s->interrupt && (!strcmp(r.status, "running") || !strcmp(r.status, "paused")) &&
        runstore_reap_dead(st, err) == LM_OK) {
        runstore_row_free(&r);
        if ((status = runstore_get(st, run, &r, err))) return session_error(s, status, "%s", err);
    }
    int unreaped = !strcmp(r.status, "running") || !strcmp(r.status, "paused");
    if (follow && !s->json && unreaped && !s->interrupt)   /* another host's owner, silent */
        session_printf(s, "(run %ld is marked %s by process %ld on host %s, which no longer"
                       " answers: it ended without closing the run at step %ld or earlier)",
                       run, r.status, r.pid, r.host, r.last_step);
    else if (follow && !s->json) {   /* why, when it ended badly */
        int why = r.reason[0] && (!strcmp(r.status, "interrupted") ||
                                  !strcmp(r.status, "failed") || !strcmp(r.status, "diverged"));
        session_printf(s, "(run %ld is %s%s%s)", run, r.status, why ? ": " : "",
                       why ? r.reason : "");
    }
    runstore_row_free(&r);
    return LM_OK;
}

/* ---- note ----------------------------------------------------------------------------- */

/* `note ID edit=N "text"` and `note ID delete=N` (or sweep=ID): a note's text replaced or
 * the note deleted, each recorded with its time (runstore_edits.h). */
static int note_change(Session *s, RunStore *st, long run, long sweep, int argc,
                       const LexWord *argv, const LexWord *how)
{
    int del = !strcmp(how->key, "delete");
    long note = session_parse_run_id(how->value);
    const char *target = sweep ? "sweep=" : "";
    long tid = run ? run : sweep;
    if (note <= 0)
        return session_error(s, LM_EARG, "%s=%s: expected a note number (`run %ld` lists them)",
                             how->key, how->value, tid);
    char err[LM_ERR_LEN];
    int status;
    if (del) {
        if (argc > 3)
            return session_error(s, LM_EARG, "note %s%ld delete=%ld takes no text", target,
                                 tid, note);
        status = runstore_note_delete(st, run, sweep, note, err);
    } else {
        if (argc < 4)
            return session_error(s, LM_EARG, "note %s%ld edit=%ld needs the new text: `note "
                                 "%s%ld edit=%ld \"text\"`", target, tid, note, target, tid,
                                 note);
        size_t cap = 1, used = 0;
        for (int i = 3; i < argc; i++) cap += strlen(argv[i].text) + (i > 3);
        char *text = calloc(1, cap);
        if (!text) return session_error(s, LM_ENOMEM, "out of memory");
        for (int i = 3; i < argc; i++)
            used += (size_t)snprintf(text + used, cap - used, "%s%s", i > 3 ? " " : "",
                                     argv[i].text);
        status = runstore_note_edit(st, run, sweep, note, text, err);
        free(text);
    }
    if (status) return session_error(s, status, "%s", err);
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:I s:s}", "ok", 1, "note", (json_int_t)note,
                                       "done", del ? "deleted" : "edited"));
    else
        session_printf(s, "note %ld of %s %ld %s (the change is recorded with its time: "
                       "`run ID` lists it)", note, run ? "run" : "sweep", tid,
                       del ? "deleted" : "edited");
    return LM_OK;
}

int cmd_note(Session *s, int argc, const LexWord *argv)
{
    long run, sweep, id = 0;
    const char *usage = "note RUN_ID \"text\" | note sweep=ID \"text\" | note ID edit=N "
                        "\"text\" | note ID delete=N";
    if (parse_target(s, argc, argv, usage, &run, &sweep)) return LM_EARG;
    RunStore *st = session_store(s);
    if (!st) return LM_EDB;
    if (argc >= 3 && (key_of(&argv[2], "edit") || key_of(&argv[2], "delete")))
        return note_change(s, st, run, sweep, argc, argv, &argv[2]);
    if (argc < 3)
        return session_error(s, LM_EARG, "note needs the text: `note %s%ld \"text\"` (notes"
                             " are kept with their time; `run ID` lists them)",
                             sweep ? "sweep=" : "", run ? run : sweep);
    size_t cap = 1, used = 0;   /* the words joined by spaces: measured, never cut */
    for (int i = 2; i < argc; i++) cap += strlen(argv[i].text) + (i > 2);
    char *note = calloc(1, cap);
    if (!note) return session_error(s, LM_ENOMEM, "out of memory");
    for (int i = 2; i < argc; i++)
        used += (size_t)snprintf(note + used, cap - used, "%s%s", i > 2 ? " " : "", argv[i].text);
    char err[LM_ERR_LEN];
    int status = runstore_note_add(st, run, sweep, note, &id, err);   /* names the limit */
    if (status) {
        free(note);
        return session_error(s, status, "%s", err);
    }
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:I s:o s:o s:o}", "ok", 1, "note", (json_int_t)id,
                                       "run", run ? json_integer(run) : json_null(), "sweep",
                                       sweep ? json_integer(sweep) : json_null(), "text",
                                       jsonval_str(note)));
    else
        session_printf(s, "note saved on %s %ld (note %ld; `run ID` lists them)",
                       run ? "run" : "sweep", run ? run : sweep, id);
    free(note);
    return LM_OK;
}

/* The notes as a JSON array of {id, run, sweep, time, text} (new reference). */
static json_t *cmd_log_notes_json(const NoteRow *nt, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_pack("{s:I s:o s:o s:o s:o}", "id", (json_int_t)nt[i].id,
                                           "run", nt[i].run_id ? json_integer(nt[i].run_id)
                                                               : json_null(),
                                           "sweep", nt[i].sweep_id ? json_integer(nt[i].sweep_id)
                                                                   : json_null(),
                                           "time", runstore_json_time(nt[i].t), "text",
                                           jsonval_str(nt[i].text)));
    return a;
}

/* ---- alert ---------------------------------------------------------------------------- */

static void print_alert_rows(Session *s, RunStore *st, const AlertRow *a, int n,
                             const AlertEvent *ev, int ne)
{
    char t[32], why[400];
    if (s->json) {
        json_t *rules = json_array(), *fired = json_array();
        for (int i = 0; i < n; i++) {
            int ok = !a[i].cmd[0] || alerts_command_allowed(st, &a[i], why, sizeof why);
            json_array_append_new(rules, json_pack("{s:I s:o s:o s:o s:o s:o s:o}", "id",
                (json_int_t)a[i].id, "run", a[i].run_id ? json_integer(a[i].run_id) : json_null(),
                "sweep", a[i].sweep_id ? json_integer(a[i].sweep_id) : json_null(), "rule",
                jsonval_str(a[i].rule), "run_cmd", jsonval_str(a[i].cmd), "origin",
                jsonval_str(a[i].origin), "refused", ok ? json_null() : jsonval_str(why)));
        }
        for (int i = 0; i < ne; i++)
            json_array_append_new(fired, json_pack("{s:I s:I s:I s:o s:s s:o s:o}", "id",
                (json_int_t)ev[i].id, "alert", (json_int_t)ev[i].alert_id, "run",
                (json_int_t)ev[i].run_id, "time", runstore_json_time(ev[i].t), "rule",
                ev[i].rule, "message", jsonval_str(ev[i].message), "cmd_status",
                jsonval_str(ev[i].cmd_status)));
        session_emit_json(s, json_pack("{s:o s:o}", "alerts", rules, "fired", fired));
        return;
    }
    if (!n) session_printf(s, "no alert rules (`alert ID on=finished` sets one)");
    for (int i = 0; i < n; i++) {
        int ok = !a[i].cmd[0] || alerts_command_allowed(st, &a[i], why, sizeof why);
        session_printf(s, "alert %ld  %s %ld  on=%s%s%s%s  (%s)%s%s", a[i].id,
                       a[i].run_id ? "run" : "sweep", a[i].run_id ? a[i].run_id : a[i].sweep_id,
                       a[i].rule, a[i].cmd[0] ? "  run=\"" : "", a[i].cmd,
                       a[i].cmd[0] ? "\"" : "", a[i].origin, ok ? "" : "  — command ",
                       ok ? "" : why);
    }
    for (int i = 0; i < ne; i++) {
        cmd_log_fmt_time(t, sizeof t, ev[i].t, 1);
        session_printf(s, "fired %s  run %ld  %s: %s%s%s", t, ev[i].run_id, ev[i].rule,
                       ev[i].message, ev[i].cmd_status[0] ? "  — command " : "",
                       ev[i].cmd_status);
    }
}

static int alert_list(Session *s, RunStore *st, long run)
{
    AlertRow *a = NULL;
    AlertEvent *ev = NULL;
    int n = 0, ne = 0;
    char err[LM_ERR_LEN];
    int status = runstore_alerts(st, run, &a, &n, err);
    if (!status) status = runstore_alert_events(st, run, 0, 0, &ev, &ne, err);
    if (!status) print_alert_rows(s, st, a, n, ev, ne);
    free(a);
    free(ev);
    return status ? session_error(s, status, "%s", err) : LM_OK;
}

int cmd_alert(Session *s, int argc, const LexWord *argv)
{
    RunStore *st = session_store(s);
    if (!st) return LM_EDB;
    char err[LM_ERR_LEN];
    if (argc == 1 || (argc == 2 && !argv[1].key && !strcmp(argv[1].text, "list")))
        return alert_list(s, st, 0);
    if (argc == 3 && !argv[1].key && !strcmp(argv[1].text, "off")) {
        long id = session_parse_run_id(argv[2].text);
        int status = id > 0 ? runstore_alert_remove(st, id, err)
                            : err_set(err, LM_EARG, "alert off takes an alert id (`alert list`)");
        if (status) return session_error(s, status, "%s", err);
        if (s->json) session_emit_json(s, json_pack("{s:b s:I}", "ok", 1, "removed", (json_int_t)id));
        else session_printf(s, "alert %ld removed", id);
        return LM_OK;
    }
    long run, sweep;
    const char *usage = "alert RUN_ID|sweep=ID on=RULE [on=RULE ...] [run=\"CMD\"]";
    if (parse_target(s, argc, argv, usage, &run, &sweep)) return LM_EARG;
    const char *cmd = "";
    char canon[8][ALERTRULE_LEN];
    int n_rules = 0;
    for (int i = 2; i < argc; i++) {
        const char *on = key_of(&argv[i], "on"), *rc = key_of(&argv[i], "run");
        AlertRule r;
        if (rc) cmd = rc;
        else if (!on)
            return session_error(s, LM_EARG, "alert takes on=RULE and run=\"CMD\", not '%s' —"
                                 " usage: %s", argv[i].text, usage);
        else if (n_rules == 8)
            return session_error(s, LM_EARG, "at most 8 rules per alert command");
        else if (alertrule_parse(on, &r, canon[n_rules++], ALERTRULE_LEN, err))
            return session_error(s, LM_EARG, "%s", err);
    }
    if (!n_rules && !cmd[0]) return alert_list(s, st, run);
    if (!n_rules)
        return session_error(s, LM_EARG, "run=\"CMD\" needs a rule: on=finished, on=diverged,"
                             " on=stalled:600, on=val_loss<1.5 ...");
    if (run > 0) {   /* a finished run never trains again: its rule could never fire */
        RunRow r;
        int status = runstore_get(st, run, &r, err), done = 0;
        if (!status) {
            done = !strcmp(r.status, "finished");
            runstore_row_free(&r);
        }
        if (status) return session_error(s, status, "%s", err);
        if (done)
            return session_error(s, LM_ESTATE, "run #%ld has finished and never trains again,"
                                 " so an alert on it could never fire; set it on a run that"
                                 " trains (or a sweep=ID before its trials start)", run);
    }
    char words[RUNSTORE_ALERT_CMD_LEN + 8], *cargv[ALERTS_ARGV_MAX];
    if (cmd[0] && alerts_split(cmd, words, sizeof words, cargv, ALERTS_ARGV_MAX, err) < 0)
        return session_error(s, LM_EARG, "%s (run=\"CMD\" is split into words without a shell:"
                             " quote a word that holds spaces)", err);
    for (int i = 0; i < n_rules; i++) {
        long id = 0;
        int status = runstore_alert_add(st, run, sweep, canon[i], cmd, "live", &id, err);
        if (status) return session_error(s, status, "%s", err);
        if (s->json)
            session_emit_json(s, json_pack("{s:b s:I s:o s:o s:s s:o}", "ok", 1, "alert",
                                           (json_int_t)id, "run", run ? json_integer(run) : json_null(),
                                           "sweep", sweep ? json_integer(sweep) : json_null(),
                                           "rule", canon[i], "run_cmd", jsonval_str(cmd)));
        else
            session_printf(s, "alert %ld on %s %ld: %s%s%s", id, run ? "run" : "sweep",
                           run ? run : sweep, canon[i], cmd[0] ? ", then runs " : "", cmd);
    }
    return LM_OK;
}

/* ---- what `run ID` adds ---------------------------------------------------------------- */

/* Under mpirun: each rank's CPU mean and peak and memory peak. */
static void print_ranks(Session *s, RunStore *st, long run, int ranks)
{
    SysSample *x = NULL;
    int n = 0;
    char err[LM_ERR_LEN];
    if (runstore_sys_series(st, run, -1, &x, &n, err)) return;
    for (int r = 0; r < ranks && r < 1024; r++) {
        double sum = 0, peak = 0, rss = 0;
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (x[i].rank != r) continue;
            if (!isnan(x[i].cpu)) sum += x[i].cpu, k++, peak = fmax(peak, x[i].cpu);
            if (!isnan(x[i].rss_mb)) rss = fmax(rss, x[i].rss_mb);
        }
        if (k) session_printf(s, "  rank %-4d   cpu mean %6.1f   peak %6.1f   rss peak %.1f MiB",
                              r, sum / k, peak, rss);
    }
    free(x);
}

/* "settings changed at step S: precision fp32 -> bf16, shards 2 -> 3", one line a resume
 * that changed what the run trains with (issue 46 item 4). */
static void changes_text(Session *s, RunStore *st, long run)
{
    char err[LM_ERR_LEN], line[8192], from[2400], to[2400];
    SettingChange *c = NULL;
    int n = 0;
    if (runchanges_list(st, run, &c, &n, err) != LM_OK) return;
    for (int i = 0; i < n;) {
        int o = snprintf(line, sizeof line, "settings changed at step %ld:", c[i].step);
        long step = c[i].step;
        for (int first = 1; i < n && c[i].step == step; i++, first = 0)
            if (o < (int)sizeof line)   /* values whole, their controls escaped (`\n`) */
                o += snprintf(line + o, sizeof line - (size_t)o, "%s %s %s -> %s",
                              first ? "" : ",", c[i].key,
                              safetext_escape(from, sizeof from, c[i].from, 0),
                              safetext_escape(to, sizeof to, c[i].to, 0));
        session_printf(s, "%s", line);
    }
    free(c);
}

void cmd_log_run_text(Session *s, RunStore *st, long run)
{
    char err[LM_ERR_LEN], t[32];
    NoteRow *nt = NULL;
    int n = 0;
    changes_text(s, st, run);
    if (runstore_notes(st, run, 0, &nt, &n, err) == LM_OK) {
        session_printf(s, "notes:%s", n ? "" : " none");
        for (int i = 0; i < n; i++) {
            cmd_log_fmt_time(t, sizeof t, nt[i].t, 1);
            session_printf(s, "  %s  note %ld%s  %s", t, nt[i].id,
                           nt[i].sweep_id ? " (sweep)" : "", nt[i].text);
        }
        runstore_notes_free(nt, n);
    }
    EditRow *ed = NULL;   /* untag, rename, note edits: each with its time */
    if (runstore_edits(st, run, 0, &ed, &n, err) == LM_OK && n) {
        session_printf(s, "edits:");
        for (int i = 0; i < n; i++) {
            cmd_log_fmt_time(t, sizeof t, ed[i].t, 1);
            session_printf(s, "  %s%s  %s", t, ed[i].sweep_id ? " (sweep)" : "", ed[i].what);
        }
    }
    free(ed);
    SysSummary m;
    if (runstore_sys_summary(st, run, &m, err) == LM_OK && m.n > 0) {
        session_printf(s, "system (%d samples over %.0f s%s):", m.n, m.last_t - m.first_t,
                       m.ranks > 1 ? ", every rank" : "");
        session_printf(s, "  cpu %%       mean %6.1f   peak %6.1f   (100 = one core)", m.cpu_mean,
                       m.cpu_peak);
        session_printf(s, "  rss MiB     mean %6.1f   peak %6.1f", m.rss_mean, m.rss_peak);
        session_printf(s, "  load        mean %6.2f   peak %6.2f   threads peak %d", m.load_mean,
                       m.load_peak, m.threads_peak);
        session_printf(s, "  free memory min %.0f MiB", m.mem_avail_min);
        if (m.ranks > 1) print_ranks(s, st, run, m.ranks);
    } else {
        session_printf(s, "system: no samples");
    }
    AlertEvent *ev = NULL;
    if (runstore_alert_events(st, run, 0, 0, &ev, &n, err) == LM_OK) {
        for (int i = 0; i < n; i++) {
            cmd_log_fmt_time(t, sizeof t, ev[i].t, 1);
            session_printf(s, "alert %s  %s: %s%s%s", t, ev[i].rule, ev[i].message,
                           ev[i].cmd_status[0] ? "  — command " : "", ev[i].cmd_status);
        }
        free(ev);
    }
}

void cmd_log_run_json(json_t *o, RunStore *st, long run)
{
    char err[LM_ERR_LEN];
    NoteRow *nt = NULL;
    int n = 0;
    SettingChange *c = NULL;
    if (runchanges_list(st, run, &c, &n, err) == LM_OK) {   /* what it trained with, when */
        json_t *a = json_array();
        for (int i = 0; i < n; i++)
            json_array_append_new(a, json_pack("{s:I s:s s:s s:s}", "step",
                                               (json_int_t)c[i].step, "key", c[i].key,
                                               "from", c[i].from, "to", c[i].to));
        json_object_set_new(o, "setting_changes", a);
        free(c);
    }
    if (runstore_notes(st, run, 0, &nt, &n, err) == LM_OK) {
        json_object_set_new(o, "note_list", cmd_log_notes_json(nt, n));
        runstore_notes_free(nt, n);
    }
    EditRow *ed = NULL;
    if (runstore_edits(st, run, 0, &ed, &n, err) == LM_OK) {
        json_t *a = json_array();
        for (int i = 0; i < n; i++)
            json_array_append_new(a, json_pack("{s:o s:o s:s}", "time",
                                               runstore_json_time(ed[i].t), "sweep",
                                               ed[i].sweep_id ? json_integer(ed[i].sweep_id)
                                                              : json_null(),
                                               "what", ed[i].what));
        json_object_set_new(o, "edits", a);
        free(ed);
    }
    SysSummary m;
    if (runstore_sys_summary(st, run, &m, err) == LM_OK)
        json_object_set_new(o, "system", json_pack("{s:i s:i s:o s:o s:o s:o s:o s:o s:o s:i}",
            "samples", m.n, "ranks", m.ranks, "cpu_mean", jsonval_num(m.cpu_mean),
            "cpu_peak", jsonval_num(m.cpu_peak), "rss_mb_mean", jsonval_num(m.rss_mean),
            "rss_mb_peak", jsonval_num(m.rss_peak), "load_mean",
            jsonval_num(m.load_mean), "load_peak", jsonval_num(m.load_peak),
            "mem_avail_mb_min", jsonval_num(m.mem_avail_min), "threads_peak",
            m.threads_peak));
    AlertEvent *ev = NULL;
    if (runstore_alert_events(st, run, 0, 0, &ev, &n, err) == LM_OK) {
        json_t *a = json_array();
        for (int i = 0; i < n; i++)
            json_array_append_new(a, json_pack("{s:s s:o s:o s:o}", "rule", ev[i].rule, "time",
                                               runstore_json_time(ev[i].t), "message",
                                               jsonval_str(ev[i].message), "cmd_status",
                                               jsonval_str(ev[i].cmd_status)));
        json_object_set_new(o, "alerts_fired", a);
        free(ev);
    }
}
