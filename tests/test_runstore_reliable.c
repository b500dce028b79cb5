/* test_runstore_reliable.c — issue 13 in the run store: run ids are never reused (not
 * after `rm` of the newest run, not after reopening), every store has its own identity,
 * run folders are named with it and a folder holding files a run did not write is
 * refused; liveness is a lock the OS drops when the training process dies. */
#include "runstore_util.h"
#include <math.h>
#include "recorder.h"
#include "rundir.h"
#include "runstore_track.h"
#include "runstore_notes.h"
#include "runrecord.h"
#include "runchanges.h"

static void ids_never_reused(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    db_path(path, sizeof path, "ids.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    if (!s) return;
    long a = new_run(s, "a", "msa", "", NULL), b = new_run(s, "b", "msa", "", NULL);
    runstore_run_set_status(s, b, "finished", NULL, err);
    CHECK(runstore_delete_run(s, b, 0, err) == LM_OK, "delete: %s", err);
    long c = new_run(s, "c", "msa", "", NULL);
    CHECK(c > b, "after deleting the newest run %ld, the next run got id %ld", b, c);
    runstore_run_set_status(s, c, "finished", NULL, err);
    runstore_delete_run(s, c, 0, err);
    runstore_close(s);
    CHECK(runstore_open(path, &s, err) == LM_OK, "reopen: %s", err);
    if (!s) return;
    long d = new_run(s, "d", "msa", "", NULL);
    CHECK(d > c, "after reopening, id %ld reused (deleted %ld)", d, c);
    (void)a;
    runstore_close(s);
}

static void store_identity(void)
{
    char p1[512], p2[512], err[LM_ERR_LEN], id1[64], id2[64];
    RunStore *s;
    db_path(p1, sizeof p1, "ident1.db");
    db_path(p2, sizeof p2, "ident2.db");
    CHECK(runstore_open(p1, &s, err) == LM_OK, "%s", err);
    if (!s) return;
    snprintf(id1, sizeof id1, "%s", runstore_store_id(s));
    runstore_close(s);
    CHECK(strlen(id1) >= 8, "store id '%s' too short", id1);
    CHECK(runstore_open(p1, &s, err) == LM_OK, "%s", err);
    if (!s) return;
    CHECK(!strcmp(id1, runstore_store_id(s)), "store id changed on reopen: %s vs %s", id1,
          runstore_store_id(s));
    runstore_close(s);
    CHECK(runstore_open(p2, &s, err) == LM_OK, "%s", err);
    if (!s) return;
    snprintf(id2, sizeof id2, "%s", runstore_store_id(s));
    runstore_close(s);
    CHECK(strcmp(id1, id2), "two stores share the id %s", id1);

    /* two stores' run 1 never share a folder */
    char d1[600], d2[600];
    rundir_name(d1, sizeof d1, "runs", id1, 1);
    rundir_name(d2, sizeof d2, "runs", id2, 1);
    CHECK(strcmp(d1, d2), "run 1 of two stores: same folder %s", d1);
    CHECK(strstr(d1, id1) && strstr(d1, "run-1"), "folder %s lacks the run or store id", d1);
}

static void folder_with_foreign_files_refused(void)
{
    char runs[512], dir[700], file[800], err[LM_ERR_LEN];
    db_path(runs, sizeof runs, "runs");
    rundir_name(dir, sizeof dir, runs, "abcd1234", 5);
    CHECK(rundir_create(dir, err) == LM_OK, "fresh folder: %s", err);
    CHECK(rundir_create(dir, err) == LM_OK, "empty existing folder: %s", err);
    snprintf(file, sizeof file, "%s/step-00000100.safetensors", dir);
    FILE *f = fopen(file, "w");
    if (f) fclose(f);
    CHECK(rundir_create(dir, err) == LM_ESTATE, "folder with another run's files accepted");
    CHECK(strstr(err, "step-00000100.safetensors") != NULL, "message: %s", err);
}

/* A child creates a run and then either exits at once without closing it (a crash) or,
 * with hold, waits until its pipe closes. Returns its pid; *id receives the run id. */
static pid_t child_with_run(const char *path, int hold, long *id, int *keep_fd)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down)) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(up[0]);
        close(down[1]);
        char err[LM_ERR_LEN];
        RunStore *s;
        long rid = 0;
        RunInfo info = {.name = "child", .model = "msa"};
        if (runstore_open(path, &s, err) || runstore_run_create(s, &info, &rid, err)) _exit(3);
        if (write(up[1], &rid, sizeof rid) != sizeof rid) _exit(4);
        char c;
        if (hold && read(down[0], &c, 1) < 0) _exit(5);
        _exit(0);   /* no close, no status: as a crash */
    }
    close(up[1]);
    close(down[0]);
    if (read(up[0], id, sizeof *id) != sizeof *id) *id = -1;
    close(up[0]);
    *keep_fd = down[1];
    return pid;
}

static void status_of(const char *path, long id, char *out, size_t cap)
{
    char err[LM_ERR_LEN];
    RunStore *s;
    RunRow r;
    snprintf(out, cap, "(error)");
    if (runstore_open(path, &s, err)) return;   /* the open repairs dead runs */
    if (!runstore_get(s, id, &r, err)) {
        snprintf(out, cap, "%s", r.status);
        runstore_row_free(&r);
    }
    runstore_close(s);
}

/* Item 5: a run is alive while its process holds the run's kernel lock. */
static void liveness_is_a_lock(void)
{
    char path[512], st[32], sql[200], err[LM_ERR_LEN];
    db_path(path, sizeof path, "live.db");
    long id;
    int fd;

    /* a live holder: the run stays running and cannot be deleted */
    pid_t holder = child_with_run(path, 1, &id, &fd);
    CHECK(holder > 0 && id > 0, "child run");
    status_of(path, id, st, sizeof st);
    CHECK(!strcmp(st, "running"), "live run became %s", st);
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "%s", err);
    if (s) {
        CHECK(runstore_delete_run(s, id, 0, err) == LM_ESTATE, "deleted a live run");
        runstore_close(s);
    }
    close(fd);
    waitpid(holder, NULL, 0);
    status_of(path, id, st, sizeof st);
    CHECK(!strcmp(st, "interrupted"), "after the holder ended: %s", st);

    /* a zombie (exited, not yet reaped): kill(pid, 0) succeeds, the lock is gone */
    pid_t z = child_with_run(path, 0, &id, &fd);
    close(fd);
    for (int i = 0; i < 400; i++) {   /* until it has exited (still unreaped) */
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (!waitid(P_PID, (id_t)z, &si, WEXITED | WNOHANG | WNOWAIT) && si.si_pid == z) break;
        usleep(5000);
    }
    CHECK(kill(z, 0) == 0, "the zombie answers kill(pid, 0)");
    status_of(path, id, st, sizeof st);
    CHECK(!strcmp(st, "interrupted"), "a zombie's run is %s", st);
    waitpid(z, NULL, 0);

    /* a reused PID: the dead run's pid now belongs to an unrelated live process */
    pid_t other = fork();
    if (other == 0) { pause(); _exit(0); }
    pid_t dead = child_with_run(path, 0, &id, &fd);
    close(fd);
    waitpid(dead, NULL, 0);
    snprintf(sql, sizeof sql, "UPDATE runs SET pid=%ld WHERE id=%ld", (long)other, id);
    CHECK(q_exec(path, sql) == SQLITE_OK, "set pid");
    status_of(path, id, st, sizeof st);
    CHECK(!strcmp(st, "interrupted"), "a run whose PID was reused is %s", st);
    kill(other, SIGKILL);
    waitpid(other, NULL, 0);
}

/* Items 2 and 6: notes and tags are validated when set like the text settings. */
static void notes_and_tags_checked(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    db_path(path, sizeof path, "text.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "%s", err);
    if (!s) return;
    long id = new_run(s, "t", "msa", "", NULL);
    CHECK(runstore_set_note(s, id, "clears\x1b[2J", err) == LM_EARG && strstr(err, "escape"),
          "note with an escape: %s", err);
    CHECK(runstore_set_note(s, id, "bad \xff byte", err) == LM_EARG && strstr(err, "UTF-8"),
          "note with invalid UTF-8: %s", err);
    CHECK(runstore_set_note(s, id, "two\nlines are fine", err) == LM_OK, "%s", err);
    CHECK(runstore_add_tag(s, id, "x\x07", err) == LM_EARG, "tag with a bell accepted");
    CHECK(runstore_set_tags(s, id, "a,\x1b]0;T", err) == LM_EARG, "tags with an escape");
    RunInfo info = {.name = "n", .tags = "ok,\x9b"};
    long id2 = 0;
    CHECK(runstore_run_create(s, &info, &id2, err) == LM_EARG, "run created with a bad tag");
    runstore_close(s);
}

/* Item 5 on other hosts: no lock to see, the heartbeat decides after a delay. */
static void other_host_heartbeat(void)
{
    char path[512], err[LM_ERR_LEN], sql[200];
    RunStore *s;
    db_path(path, sizeof path, "hosts.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "%s", err);
    if (!s) return;
    long id = new_run(s, "far", "msa", "", NULL);
    RunRow r;
    double age;
    snprintf(sql, sizeof sql, "UPDATE runs SET host='elsewhere', heartbeat=%.0f WHERE id=%ld",
             (double)time(NULL) - 5000, id);
    q_exec(path, sql);
    CHECK(runstore_get(s, id, &r, err) == LM_OK, "%s", err);
    CHECK(runstore_run_stale(s, &r, RUNSTORE_STALE_SECONDS, &age) == 1 && age > 4000,
          "a silent run on another host is not stale (age %.0f)", age);
    runstore_row_free(&r);
    snprintf(sql, sizeof sql, "UPDATE runs SET heartbeat=%.0f WHERE id=%ld",
             (double)time(NULL), id);
    q_exec(path, sql);
    runstore_get(s, id, &r, err);
    CHECK(runstore_run_stale(s, &r, RUNSTORE_STALE_SECONDS, &age) == 0, "fresh run stale");
    runstore_row_free(&r);
    runstore_close(s);
}

/* Item 3: rows the store cannot take are bounded in memory, spilled to a journal, and
 * land when the store takes writes again (also from a later process). */
static void rows_spill_and_land(void)
{
    char path[512], jpath[600], err[LM_ERR_LEN], sql[200];
    RunStore *s;
    db_path(path, sizeof path, "spill.db");
    snprintf(jpath, sizeof jpath, "%s/unrecorded.tsv", tmpdir);
    CHECK(runstore_open(path, &s, err) == LM_OK, "%s", err);
    if (!s) return;
    long id = new_run(s, "spill", "msa", "", NULL);
    runstore_set_journal(s, jpath, 50);
    runstore_set_autoflush(s, 10, 1000);
    runstore_set_busy_timeout(s, 5);
    sqlite3 *blocker;   /* another process holding the write lock: the store cannot write */
    sqlite3_open(path, &blocker);
    sqlite3_exec(blocker, "BEGIN EXCLUSIVE", NULL, NULL, NULL);
    for (long k = 1; k <= 200; k++) {
        StepMetric m = step_of(k);
        runstore_log_step(s, id, &m, err);
    }
    EvalMetric e = {.step = 200, .split = "valid", .loss = 1.5, .ppl = 4.48, .bpc = NAN,
                    .tokens = 10, .elapsed = 2};
    runstore_log_eval(s, id, &e, err);
    CHECK(runstore_pending(s) < 100, "memory not bounded: %ld rows buffered",
          runstore_pending(s));
    CHECK(runstore_journal_rows(s) >= 150, "journal holds %ld rows", runstore_journal_rows(s));
    CHECK(access(jpath, F_OK) == 0, "no journal at %s", jpath);
    runstore_close(s);   /* still locked: the rest is spilled too */
    sqlite3_exec(blocker, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(blocker);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM metrics WHERE run_id=%ld", id);
    CHECK(q_long(path, sql) == 0, "rows written while locked?");
    /* a later process sets the same journal: its first flush lands every row */
    CHECK(runstore_open(path, &s, err) == LM_OK, "%s", err);
    if (!s) return;
    runstore_set_journal(s, jpath, 0);
    CHECK(runstore_journal_rows(s) == 201, "journal rows after reopen: %ld",
          runstore_journal_rows(s));
    CHECK(runstore_flush(s, err) == LM_OK, "flush: %s", err);
    CHECK(q_long(path, sql) == 200, "landed %ld of 200 step rows", q_long(path, sql));
    snprintf(sql, sizeof sql, "SELECT count(*) FROM evals WHERE run_id=%ld", id);
    CHECK(q_long(path, sql) == 1, "evaluation landed");
    snprintf(sql, sizeof sql, "SELECT last_step FROM runs WHERE id=%ld", id);
    CHECK(q_long(path, sql) == 200, "last_step %ld", q_long(path, sql));
    CHECK(access(jpath, F_OK) != 0 && runstore_journal_rows(s) == 0, "journal not removed");
    runstore_close(s);
}

/* Issue 46 item 5: what the store cannot take during a fault besides metric rows — the
 * checkpoint records (a step file, then a newer best) and console lines — waits in the
 * journal and lands afterwards in a later process, in order: the best is the newer one,
 * both step files are recorded, the console lines keep their text and order. */
static void records_spill_and_land(void)
{
    char path[512], jpath[600], err[LM_ERR_LEN], sql[200];
    RunStore *s;
    db_path(path, sizeof path, "spill2.db");
    snprintf(jpath, sizeof jpath, "%s/unrecorded2.tsv", tmpdir);
    CHECK(runstore_open(path, &s, err) == LM_OK, "%s", err);
    if (!s) return;
    long id = new_run(s, "spill2", "msa", "", NULL);
    runstore_set_journal(s, jpath, 0);
    runstore_set_busy_timeout(s, 5);
    CheckpointRecord old_best = {.step = 100, .val_loss = 2.5, .is_best = 1};
    snprintf(old_best.path, sizeof old_best.path, "/r/best.safetensors");
    CHECK(runstore_log_checkpoint(s, id, &old_best, err) == LM_OK, "best 100: %s", err);
    sqlite3 *blocker;   /* the store cannot write (as on a full disk) */
    sqlite3_open(path, &blocker);
    sqlite3_exec(blocker, "BEGIN EXCLUSIVE", NULL, NULL, NULL);
    CheckpointRecord c1 = {.step = 1800, .val_loss = 2.1, .is_best = 0},
                     c2 = {.step = 1900, .val_loss = 2.02, .is_best = 1},
                     b2 = {.step = 1900, .val_loss = 2.02, .is_best = 1};
    snprintf(c1.path, sizeof c1.path, "/r/step-00001800.safetensors");
    snprintf(c2.path, sizeof c2.path, "/r/step-00001900.safetensors");
    snprintf(b2.path, sizeof b2.path, "/r/best.safetensors");
    CHECK(runstore_log_checkpoint(s, id, &c1, err) != LM_OK, "written while locked?");
    runstore_log_checkpoint(s, id, &c2, err);
    runstore_log_checkpoint(s, id, &b2, err);
    runstore_console_append(s, id, "info", "first\tline \x1b[31m", err);
    runstore_console_append(s, id, "warning", "second line\nwith a newline", err);
    CHECK(runstore_journal_rows(s) == 5, "journaled %ld of 5 records", runstore_journal_rows(s));
    runstore_close(s);
    sqlite3_exec(blocker, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(blocker);
    CHECK(runstore_open(path, &s, err) == LM_OK, "%s", err);
    if (!s) return;
    runstore_set_journal(s, jpath, 0);
    CHECK(runstore_flush(s, err) == LM_OK, "flush: %s", err);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM checkpoints WHERE run_id=%ld AND step IN"
             " (1800, 1900)", id);
    CHECK(q_long(path, sql) == 2, "step files 1800 and 1900 recorded: %ld", q_long(path, sql));
    CheckpointRecord best;
    int found = 0;
    CHECK(runstore_best_checkpoint(s, id, &best, &found, err) == LM_OK && found &&
          best.step == 1900, "the best is step %ld, not 1900", found ? best.step : -1);
    ConsoleLine *l = NULL;
    int n = 0;
    long cut = 0;
    CHECK(runstore_console_read(s, id, 0, 0, &l, &n, &cut, err) == LM_OK && n == 2 &&
          !strcmp(l[0].text, "first\tline \x1b[31m") && !strcmp(l[1].kind, "warning") &&
          !strcmp(l[1].text, "second line\nwith a newline"), "console landed: %d lines", n);
    runstore_console_free(l, n);
    CHECK(access(jpath, F_OK) != 0 && runstore_journal_rows(s) == 0, "journal not removed");
    runstore_close(s);
}

/* Issue 46 item 5: a status change the store cannot take is journaled (T line) and lands
 * afterwards with its reason, in order; a journaled status older than the run's last write
 * (a resume that came after) does not undo it. */
static void statuses_spill_and_land(void)
{
    char path[512], jpath[600], err[LM_ERR_LEN];
    RunStore *s, *later;
    db_path(path, sizeof path, "spill3.db");
    snprintf(jpath, sizeof jpath, "%s/unrecorded3.tsv", tmpdir);
    CHECK(runstore_open(path, &s, err) == LM_OK, "%s", err);
    if (!s) return;
    long id = new_run(s, "spill3", "msa", "", NULL), id2 = new_run(s, "spill3b", "msa", "", NULL);
    runstore_set_journal(s, jpath, 0);
    runstore_set_busy_timeout(s, 5);
    sqlite3 *blocker;   /* the store cannot write (as on a full disk) */
    sqlite3_open(path, &blocker);
    sqlite3_exec(blocker, "BEGIN EXCLUSIVE", NULL, NULL, NULL);
    CHECK(runstore_run_set_status(s, id, "paused", "checkpoint failed", err) != LM_OK,
          "written while locked?");
    runstore_run_set_status(s, id, "stopped", "stopped at step 500: SIGTERM\tx", err);
    runstore_run_set_status(s, id2, "stopped", NULL, err);
    SysSample x1 = {.t = 1000.5, .step = 400, .cpu = 97.5, .rss_mb = 120, .threads = 3,
                    .load1 = 1.5, .mem_avail_mb = 900, .mem_total_mb = 2000,
                    .tokens_per_s = 1234.5, .thread_cpu = "11:90% 12:7%"},
              x2 = {.t = 1001.5, .rank = 1, .step = 410, .cpu = 50, .threads = 2,
                    .tokens_per_s = NAN};   /* no thread_cpu, speed unknown */
    CHECK(runstore_sys_log(s, id, &x1, err) != LM_OK, "sample written while locked?");
    runstore_sys_log(s, id, &x2, err);
    CHECK(runstore_journal_rows(s) == 5, "journaled %ld of 3 statuses and 2 samples",
          runstore_journal_rows(s));
    runstore_close(s);
    sqlite3_exec(blocker, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(blocker);
    CHECK(runstore_open(path, &later, err) == LM_OK, "%s", err);   /* a later writer */
    if (!later) return;
    CHECK(runstore_run_set_status(later, id2, "running", NULL, err) == LM_OK, "%s", err);
    runstore_close(later);
    CHECK(runstore_open(path, &s, err) == LM_OK, "%s", err);
    if (!s) return;
    runstore_set_journal(s, jpath, 0);
    CHECK(runstore_flush(s, err) == LM_OK, "flush: %s", err);
    RunRow r;
    CHECK(runstore_get(s, id, &r, err) == LM_OK && !strcmp(r.status, "stopped") &&
          !strcmp(r.reason, "stopped at step 500: SIGTERM\tx") && r.ended > 0,
          "run %ld is '%s' (%s), not the journaled stopped", id, r.status,
          r.reason);
    runstore_row_free(&r);
    CHECK(runstore_get(s, id2, &r, err) == LM_OK && !strcmp(r.status, "running"),
          "a journaled status undid a later one: run %ld is '%s'", id2, r.status);
    runstore_row_free(&r);
    SysSample *rows = NULL;
    int n = 0;
    CHECK(runstore_sys_series(s, id, -1, &rows, &n, err) == LM_OK && n == 2, "%d samples", n);
    if (n == 2) {
        CHECK(rows[0].t == 1000.5 && rows[0].step == 400 && rows[0].cpu == 97.5 &&
              rows[0].threads == 3 && rows[0].tokens_per_s == 1234.5 &&
              !strcmp(rows[0].thread_cpu, "11:90% 12:7%"), "sample 1 changed: %s",
              rows[0].thread_cpu);
        CHECK(rows[1].rank == 1 && rows[1].step == 410 && isnan(rows[1].tokens_per_s) &&
              rows[1].thread_cpu[0] == 0, "sample 2 changed");
    }
    free(rows);
    CHECK(access(jpath, F_OK) != 0 && runstore_journal_rows(s) == 0, "journal not removed");
    runstore_close(s);
}

/* Issue 46 item 4: a resume that changed settings is read back as what the run trained
 * with from which step, and compare names it as the cause of the part. */
static void setting_changes_named(void)
{
    char path[512], err[LM_ERR_LEN], line[600];
    RunStore *s;
    db_path(path, sizeof path, "changes.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "%s", err);
    if (!s) return;
    long a = new_run(s, "same", "msa", "", NULL), b = new_run(s, "resumed", "msa", "", NULL);
    for (long k = 50; k <= 300; k += 50) {
        StepMetric m = step_of(k), n = step_of(k);
        if (k > 200) n.loss += 0.25f;   /* b trained in bf16 from step 200 */
        runstore_log_step(s, a, &m, err);
        runstore_log_step(s, b, &n, err);
    }
    CHECK(runstore_flush(s, err) == LM_OK, "%s", err);
    /* the changes as rows, with the settings and the note in one write; values holding
     * ", ", "->" and " (was " come back whole (the note's wording is never parsed) */
    RunSettingChange w[4] = {{.key = "steps", .from = "1000000", .to = "300"},
                             {.key = "precision", .from = "fp32", .to = "bf16"},
                             {.key = "shards", .from = "unset", .to = "2"},
                             {.key = "sample_prompt", .from = "a, b (was c), d",
                              .to = "x -> y, z=1 (was w)"}};
    CHECK(runstore_run_set_config(s, b, "precision=bf16\nshards=2\n", 200, w, 4,
                                  "resumed at step 200 with ...", err) == LM_OK, "%s", err);
    SettingChange *c = NULL;
    int n = 0;
    CHECK(runchanges_list(s, b, &c, &n, err) == LM_OK && n == 3, "%d changes (steps= is none)", n);
    if (n == 3) {
        CHECK(c[0].step == 200 && !strcmp(c[0].key, "precision") && !strcmp(c[0].from, "fp32")
              && !strcmp(c[0].to, "bf16") && !strcmp(c[1].key, "shards") &&
              !strcmp(c[1].from, "unset") && !strcmp(c[1].to, "2"), "read back: %s %s %s",
              c[0].key, c[0].from, c[0].to);
        CHECK(!strcmp(c[2].from, "a, b (was c), d") && !strcmp(c[2].to, "x -> y, z=1 (was w)"),
              "a value with ', ' and '->' round-trips: '%s' -> '%s'", c[2].from, c[2].to);
    }
    free(c);
    CHECK(runstore_run_set_config(s, 999, "x=1\n", 5, w, 1, "n", err) == LM_EARG &&
          q_long(path, "SELECT count(*) FROM run_setting_changes") == 4 &&
          q_long(path, "SELECT count(*) FROM notes WHERE text='n'") == 0,
          "a failed write leaves nothing: %s", err);
    RunRow ra, rb;
    CHECK(runstore_get(s, a, &ra, err) == LM_OK && runstore_get(s, b, &rb, err) == LM_OK, "%s", err);
    RunParity p;
    CHECK(runrecord_parity(s, &ra, &rb, &p, err) == LM_OK, "%s", err);
    runrecord_fmt_parity(line, sizeof line, &p);
    char want[128];
    snprintf(want, sizeof want, "precision changed at step 200 in run %ld (fp32 -> bf16)", b);
    CHECK(!p.identical && p.step == 250 && strstr(line, "part at step 250") &&
          strstr(line, want), "compare says '%s'", line);
    runstore_row_free(&ra);
    runstore_row_free(&rb);
    runstore_close(s);
}

/* Issue 46 item 6: the owner was SIGTERM'd while the disk was full: its 'stopped' went to
 * the journal in its run directory; the next open (any command) lands it instead of
 * marking the run 'interrupted', and removes the journal. */
static void dead_owner_journal_lands_at_open(void)
{
    char path[512], dir[600], jpath[700], err[LM_ERR_LEN], sql[900], got[32];
    RunStore *s;
    db_path(path, sizeof path, "deadowner.db");
    snprintf(dir, sizeof dir, "%s/deadowner-run", tmpdir);
    mkdir(dir, 0755);
    snprintf(jpath, sizeof jpath, "%s/unrecorded-rows.tsv", dir);
    long id;
    int fd;
    pid_t owner = child_with_run(path, 1, &id, &fd);   /* alive until fd is closed */
    CHECK(owner > 0 && id > 0, "child run");
    if (owner <= 0) return;
    CHECK(runstore_open(path, &s, err) == LM_OK, "%s", err);
    if (!s) return;
    runstore_set_journal(s, jpath, 0);   /* its journal, as its recorder writes it */
    runstore_set_busy_timeout(s, 5);
    sqlite3 *blocker;
    sqlite3_open(path, &blocker);
    sqlite3_exec(blocker, "BEGIN EXCLUSIVE", NULL, NULL, NULL);
    CHECK(runstore_run_set_status(s, id, "stopped", "stopped at step 500: SIGTERM", err)
          != LM_OK, "written while locked?");
    CHECK(runstore_journal_rows(s) == 1, "journaled %ld", runstore_journal_rows(s));
    runstore_close(s);
    sqlite3_exec(blocker, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(blocker);
    snprintf(sql, sizeof sql, "UPDATE runs SET checkpoint_dir='%s' WHERE id=%ld", dir, id);
    CHECK(q_exec(path, sql) == 0, "%s", sql);
    close(fd);
    waitpid(owner, NULL, 0);   /* the owner has ended */
    status_of(path, id, got, sizeof got);   /* an open: the repair */
    CHECK(!strcmp(got, "stopped"), "the dead owner's journaled status did not land: '%s'", got);
    CHECK(access(jpath, F_OK) != 0, "journal not removed after landing");
}

/* Following a run from the store (issue 15): the last step, the gates of the last
 * evaluation (every layer and level), and a Snapshot rebuilt from the rows; a run marked
 * running whose process is gone shows as stopped, saying so, and is not live. */
static void snapshot_of_stored_run(void)
{
    char path[128], err[LM_ERR_LEN], sql[160];
    db_path(path, sizeof path, "follow.db");
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "%s", err);
    if (!s) return;
    long id = new_run(s, "fol", "dispatcher", "model=dispatcher\nsteps=500\nlr=0.002\n", "");
    for (long k = 1; k <= 300; k++) {
        StepMetric m = step_of(k);
        runstore_log_step(s, id, &m, err);
    }
    EvalMetric e1 = {.step = 100, .split = "valid", .loss = 2.5, .ppl = exp(2.5)};
    EvalMetric e2 = {.step = 200, .split = "valid", .loss = 2.0, .ppl = exp(2.0)};
    runstore_log_eval(s, id, &e1, err);
    runstore_log_eval(s, id, &e2, err);
    GateStat g[6];
    for (int step = 100; step <= 200; step += 100) {
        for (int i = 0; i < 6; i++)
            g[i] = (GateStat){.step = step, .layer = i / 3, .level = i % 3,
                              .mean = (float)(step + i) / 1000.0f, .std = 0.1f};
        CHECK(runstore_log_gates(s, id, g, 6, err) == LM_OK, "gates: %s", err);
    }
    CHECK(runstore_log_sample(s, id, 200, "", NULL, "To be", err) == LM_OK, "%s", err);
    StepMetric last;
    long n_steps;
    CHECK(runstore_flush(s, err) == LM_OK, "flush: %s", err);   /* reads never flush */
    CHECK(runstore_last_step(s, id, &last, &n_steps, err) == LM_OK, "%s", err);
    CHECK(last.step == 300 && n_steps == 300 && last.tokens == 300 * 640,
          "last step %ld of %ld", last.step, n_steps);
    GateStat *gs;
    int ng;
    CHECK(runstore_gates_at(s, id, 150, &gs, &ng, err) == LM_OK && ng == 6 &&
          gs[0].step == 100 && gs[5].layer == 1 && gs[5].level == 2, "gates at 150: %d", ng);
    free(gs);
    CHECK(runstore_gates_at(s, id, -1, &gs, &ng, err) == LM_OK && ng == 6 &&
          gs[4].step == 200 && fabsf(gs[4].mean - 0.204f) < 1e-6f, "last gates: %d", ng);
    free(gs);
    Snapshot sn = {0};
    CHECK(snapshot_from_store(s, id, &sn, err) == LM_OK, "snapshot: %s", err);
    CHECK(sn.run_id == id && sn.status == TRAINER_RUNNING && sn.last.step == 300 &&
          sn.total_steps == 500 && sn.n_loss == 300 && sn.n_val == 2 &&
          sn.last_eval.loss == 2.0 && sn.gate_layers == 2 && sn.gate_levels == 3 &&
          sn.n_gates == 6 && !strcmp(sn.sample, "To be") && sn.sample_step == 200 &&
          !strcmp(sn.cfg.model, "dispatcher") && sn.seq == 1,
          "snapshot: status %d step %ld/%ld loss %d val %d gates %dx%d sample '%s' seq %ld",
          sn.status, sn.last.step, sn.total_steps, sn.n_loss, sn.n_val, sn.gate_layers,
          sn.gate_levels, sn.sample, sn.seq);
    CHECK(snapshot_from_store(s, id, &sn, err) == LM_OK && sn.seq == 1, "seq bumped unchanged");
    /* its process is gone: stopped, and the reason says so */
    snprintf(sql, sizeof sql, "UPDATE runs SET pid=999999999 WHERE id=%ld", id);
    CHECK(q_exec(path, sql) == 0, "set pid");
    RunRow row;
    CHECK(runstore_get(s, id, &row, err) == LM_OK && !runstore_run_live(s, &row),
          "a run of a dead process is live");
    runstore_row_free(&row);
    CHECK(snapshot_from_store(s, id, &sn, err) == LM_OK && sn.status == TRAINER_STOPPED &&
          strstr(sn.reason, "is gone") && sn.seq == 2, "dead run: %d '%s'", sn.status,
          sn.reason);
    snapshot_free(&sn);
    CHECK(snapshot_from_store(s, id + 7, &sn, err) == LM_EARG, "no such run accepted");
    runstore_close(s);
}

/* Round 10: a checkpoint record lands after the step rows buffered before it. Before, a
 * step-350 checkpoint was committed at once while steps 10..350 waited up to 2 s in the
 * buffer; a kill -9 then left "last step 0" beside the checkpoint, and the resume from it
 * left those rows out for good. Another handle reads the store as a process after the kill
 * would (the writer's buffer is never flushed: it is abandoned, not closed). */
static void checkpoint_after_its_rows(void)
{
    char path[512], err[LM_ERR_LEN], sql[200];
    RunStore *s;
    db_path(path, sizeof path, "ckrows.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "%s", err);
    if (!s) return;
    long id = new_run(s, "ckrows", "msa", "", NULL);
    runstore_set_autoflush(s, 100000, 1000);   /* nothing leaves the buffer by itself */
    for (long k = 10; k <= 350; k += 10) {
        StepMetric m = step_of(k);
        runstore_log_step(s, id, &m, err);
    }
    CheckpointRecord c = {.step = 350, .val_loss = NAN};
    snprintf(c.path, sizeof c.path, "%s/step-00000350.safetensors", tmpdir);
    CHECK(runstore_log_checkpoint(s, id, &c, err) == LM_OK, "checkpoint: %s", err);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM metrics WHERE run_id=%ld", id);
    CHECK(q_long(path, sql) == 35, "%ld of the 35 step rows before the checkpoint recorded "
          "with it", q_long(path, sql));
    snprintf(sql, sizeof sql, "SELECT last_step FROM runs WHERE id=%ld", id);
    CHECK(q_long(path, sql) == 350, "last_step %ld beside the step-350 checkpoint",
          q_long(path, sql));
    CHECK(runstore_pending(s) == 0, "%ld rows still buffered", runstore_pending(s));
    runstore_close(s);
}

static void run_all(void)
{
    ids_never_reused();
    store_identity();
    folder_with_foreign_files_refused();
    liveness_is_a_lock();
    notes_and_tags_checked();
    other_host_heartbeat();
    rows_spill_and_land();
    records_spill_and_land();
    statuses_spill_and_land();
    setting_changes_named();
    dead_owner_journal_lands_at_open();
    snapshot_of_stored_run();
    checkpoint_after_its_rows();
}

int main(void)
{
    return runstore_test_main("run store reliability tests", run_all);
}
