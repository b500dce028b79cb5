/* view_jobs.c — the jobs board: every run the store has as running or paused, from any
 * process on any host (MPI jobs and sweep workers included), one line each (id, name,
 * host/pid, step/total, train and val loss, a sparkline of the newest losses, tokens/s,
 * ETA, state: running, paused, stale), and the selected job's newest losses as a chart.
 * Enter attaches; Space pauses or resumes (a stale run: `train resume=ID` here) and
 * Delete stops the selected job (not a stale one: its owner is gone), each after a
 * y/n question: they run `pause ID`, `resume ID`, `stop ID` (through the store for
 * another process's run). Reloaded from the store about once a second while shown.
 * Not the control itself (commands/cmd_jobs.c, the recorder) nor the data
 * (core/store/runstore_jobs.c). */
#define NCURSES_WIDECHAR 1
#include "dash_draw.h"
#include "dash_view.h"
#include "err.h"
#include "chart.h"
#include "safetext.h"
#include "table.h"
#include "output.h"
#include "views.h"

#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_UP, K_DOWN, K_ATTACH, K_PAUSE, K_STOP };
#define JOB_COLS 10
#define JOB_CELL 96
#define SPARK_W 12

/* The view's own state (DashView.state_size): every running or paused run of the store,
 * any process (runstore_jobs). */
typedef struct {
    JobRow *jobs;                         /* (n_jobs) malloc'd */
    int n_jobs, job_sel, job_scroll;
    double job_next;                      /* reload then (monotonic seconds) */
    char job_error[256];                  /* why the board could not be read, or "" */
} JobsView;

extern const DashView view_jobs;

static void state_free(void *state)
{
    JobsView *w = state;
    runstore_jobs_free(w->jobs, w->n_jobs);
}

/* The newest n losses (at most SPARK_W) as a sparkline: eight block heights in UTF-8, or
 * "_.-=^" in ASCII. */
static void sparkline(const JobRow *j, int unicode, char *buf, size_t cap)
{
    int n = j->n_spark < SPARK_W ? j->n_spark : SPARK_W;
    output_sparkline(j->spark + j->n_spark - n, n, unicode, buf, cap);
}

static void eta_text(double sec, char *buf, size_t cap)
{
    if (!isfinite(sec) || sec < 0) snprintf(buf, cap, "-");
    else if (sec < 3600) snprintf(buf, cap, "%d:%02d", (int)sec / 60, (int)sec % 60);
    else snprintf(buf, cap, "%dh%02d", (int)sec / 3600, ((int)sec % 3600) / 60);
}

static void job_cells(const JobRow *j, int unicode, char (*out)[JOB_CELL])
{
    char name[JOB_CELL];
    safetext_escape(name, sizeof name, j->run.name, 0);   /* stored text: escaped */
    snprintf(out[0], JOB_CELL, "%ld", j->run.id);
    snprintf(out[1], JOB_CELL, "%s", name);
    snprintf(out[2], JOB_CELL, "%.40s/%ld", j->run.host, j->run.pid);
    if (j->total_steps) snprintf(out[3], JOB_CELL, "%ld/%ld", j->last.step, j->total_steps);
    else snprintf(out[3], JOB_CELL, "%ld/?", j->last.step);
    if (j->last.step) snprintf(out[4], JOB_CELL, "%.4f", j->last.loss);
    else snprintf(out[4], JOB_CELL, "-");
    if (isfinite(j->run.final_val)) snprintf(out[5], JOB_CELL, "%.4f", j->run.final_val);
    else snprintf(out[5], JOB_CELL, "-");
    sparkline(j, unicode, out[6], JOB_CELL);
    if (j->last.step) snprintf(out[7], JOB_CELL, "%.0f", j->last.tokens_per_s);
    else snprintf(out[7], JOB_CELL, "-");
    eta_text(j->state == JOB_RUNNING ? j->eta : NAN, out[8], JOB_CELL);
    if (j->quiet)   /* a frozen or hung owner (issue 49 item 5) */
        snprintf(out[9], JOB_CELL, "no step for %.0f s", j->age);
    else
        snprintf(out[9], JOB_CELL, "%s", runstore_job_state_name(j->state));
}

static void jobs_table(Canvas *c, Rect r, Dashboard *d, const CanvasCaps *caps, int focused)
{
    JobsView *w = dash_view_state(d, &view_jobs);
    char title[160];
    snprintf(title, sizeof title, "jobs: %d running or paused | Enter attach, Space "
             "pause/resume, Del stop", w->n_jobs);
    canvas_box(c, r, title, focused, caps->unicode);
    Rect in = canvas_rect_inner(r);
    if (w->job_error[0] || w->n_jobs == 0) {
        dash_draw_message(c, in, w->job_error[0] ? w->job_error
                          : "no run is training in this store: `train` starts one here, "
                            "`lmlab --db FILE train ...` in another shell");
        return;
    }
    static const TableColumn cols[JOB_COLS] = {
        {"id", 4, TABLE_RIGHT}, {"name", 0, TABLE_LEFT}, {"host/pid", 16, TABLE_LEFT},
        {"step/total", 13, TABLE_RIGHT}, {"loss", 7, TABLE_RIGHT}, {"val", 7, TABLE_RIGHT},
        {"trend", SPARK_W, TABLE_LEFT}, {"tok/s", 7, TABLE_RIGHT}, {"ETA", 6, TABLE_RIGHT},
        {"state", 7, TABLE_LEFT}};
    int n = w->n_jobs;
    const char **cells = calloc((size_t)n * JOB_COLS, sizeof *cells);
    char (*buf)[JOB_COLS][JOB_CELL] = malloc((size_t)n * sizeof *buf);
    unsigned char *mark = calloc((size_t)n, 1);
    if (cells && buf && mark) {
        for (int i = 0; i < n; i++) {
            job_cells(&w->jobs[i], caps->unicode, buf[i]);
            for (int k = 0; k < JOB_COLS; k++)
                cells[(size_t)i * JOB_COLS + k] = buf[i][k];
            mark[i] = w->jobs[i].state != JOB_RUNNING;   /* paused or stale stand out */
        }
        int sel = dash_draw_clamp(w->job_sel, 0, n - 1);
        TableData td = {cols, JOB_COLS, cells, n, sel, mark, UI_COLOR_WARN, -1, 0, w->job_scroll};
        w->job_scroll = table_draw(c, in, &td, caps);
    }
    free(cells);
    free(buf);
    free(mark);
}

/* The selected job's newest losses against their steps. */
static void job_chart(Canvas *c, Rect r, Dashboard *d, const CanvasCaps *caps)
{
    JobsView *w = dash_view_state(d, &view_jobs);
    const JobRow *j = w->n_jobs ? &w->jobs[dash_draw_clamp(w->job_sel, 0, w->n_jobs - 1)] : NULL;
    char title[160];
    snprintf(title, sizeof title, j ? "run #%ld: newest %d losses" : "loss", j ? j->run.id : 0,
             j ? j->n_spark : 0);
    canvas_box(c, r, title, 0, caps->unicode);
    Rect in = canvas_rect_inner(r);
    double *b = j ? dash_draw_scratch(d, 2L * JOBS_SPARK) : NULL;
    if (!j || !b || j->n_spark < 2) {
        dash_draw_message(c, in, "the selected job's losses appear here");
        return;
    }
    for (int i = 0; i < j->n_spark; i++) {
        b[i] = (double)j->spark_step[i];
        b[JOBS_SPARK + i] = j->spark[i];
    }
    ChartSeries ps = {b, b + JOBS_SPARK, j->n_spark, "loss", UI_COLOR_SERIES1, CHART_LINE};
    ChartData pd = {&ps, 1, "step", 0, 0, 0, 0, 0};
    chart_draw(c, in, &pd, caps);
}

static void draw(Canvas *c, Rect r, Dashboard *d, const Snapshot *sn, const CanvasCaps *caps,
                 int focused)
{
    (void)sn;
    if (!dash_view_state(d, &view_jobs))   /* out of memory: nothing to show */
        return;
    int th = r.h * 3 / 5 > 6 ? r.h * 3 / 5 : r.h;
    jobs_table(c, (Rect){r.x, r.y, r.w, th}, d, caps, focused);
    if (r.h - th >= 5)
        job_chart(c, (Rect){r.x, r.y + th, r.w, r.h - th}, d, caps);
}

/* ---- loading ---- */

/* Reloads the board when due (forced: now). 1 when reloaded. */
static int load(DashCtx *x, int forced)
{
    JobsView *w = dash_view_state(x->d, &view_jobs);
    if (!w)
        return 0;
    if (!dash_view_due(&w->job_next, forced))
        return 0;
    RunStore *st = forced ? session_store(x->s) : x->s->store; /* a failure is said once */
    if (!st)
        return 0;
    long sel_id = w->job_sel < w->n_jobs ? w->jobs[w->job_sel].run.id : 0;
    JobRow *j = NULL;
    int n = 0;
    char err[LM_ERR_LEN];
    if (runstore_jobs(st, &j, &n, err)) {
        snprintf(w->job_error, sizeof w->job_error, "%.250s", err);
        return 1;
    }
    w->job_error[0] = 0;
    runstore_jobs_free(w->jobs, w->n_jobs);
    w->jobs = j;
    w->n_jobs = n;
    for (int i = 0; i < n; i++)
        if (j[i].run.id == sel_id) w->job_sel = i;
    w->job_sel = dash_draw_clamp(w->job_sel, 0, n > 0 ? n - 1 : 0);
    return 1;
}

static void enter(DashCtx *x) { load(x, 1); }

static int tick(DashCtx *x) { return load(x, 0); }

/* Asks before verb on the selected job (y runs "VERB ID"; for "train resume", the
 * command `train resume=ID`, which continues a stale run in this session). */
static void ask(DashCtx *x, const char *verb)
{
    Dashboard *d = x->d;
    JobsView *w = dash_view_state(d, &view_jobs);
    if (!w)
        return;
    if (w->job_sel >= w->n_jobs) {
        dash_view_out(x, UI_COLOR_WARN, "no job selected: nothing to %s", verb);
        return;
    }
    const JobRow *j = &w->jobs[w->job_sel];
    if (!strcmp(verb, "train resume"))
        snprintf(d->confirm_cmd, sizeof d->confirm_cmd, "train resume=%ld", j->run.id);
    else
        snprintf(d->confirm_cmd, sizeof d->confirm_cmd, "%s %ld", verb, j->run.id);
    snprintf(d->confirm_text[0], sizeof d->confirm_text[0], "%c%s run #%ld %.30s", verb[0] - 32,
             verb + 1, j->run.id, j->run.name);
    snprintf(d->confirm_text[1], sizeof d->confirm_text[1], "(pid %ld on %.30s, %s at step %ld)?",
             j->run.pid, j->run.host, runstore_job_state_name(j->state), j->last.step);
    d->confirm = DASH_CONFIRM_CMD;
    w->job_next = 0;   /* the answer shows at the next reload */
}

static void on_key(DashCtx *x, int action)
{
    JobsView *w = dash_view_state(x->d, &view_jobs);
    if (!w)
        return;
    char line[48];
    int last = w->n_jobs > 0 ? w->n_jobs - 1 : 0;
    switch (action) {
    case K_UP: w->job_sel = dash_draw_clamp(w->job_sel - 1, 0, last); break;
    case K_DOWN: w->job_sel = dash_draw_clamp(w->job_sel + 1, 0, last); break;
    case K_ATTACH:   /* then the training view, which follows the attached run */
        if (w->job_sel < w->n_jobs) {
            snprintf(line, sizeof line, "attach %ld", w->jobs[w->job_sel].run.id);
            x->command(x->loop, line);
            views_switch(x, views_find("training"));
        }
        break;
    case K_PAUSE: {   /* a stale run's owner is gone: only resuming it here makes sense */
        JobState js = w->job_sel < w->n_jobs ? w->jobs[w->job_sel].state : JOB_RUNNING;
        ask(x, js == JOB_STALE ? "train resume" : js == JOB_PAUSED ? "resume" : "pause");
        break;
    }
    case K_STOP:
        if (w->job_sel < w->n_jobs && w->jobs[w->job_sel].state == JOB_STALE)
            dash_view_out(x, UI_COLOR_WARN, "run #%ld's owner is gone: nothing to stop "
                          "(Space resumes it in this session)", w->jobs[w->job_sel].run.id);
        else
            ask(x, "stop");
        break;
    default: break;
    }
}

static const DashViewKey KEYS[] = {
    {DASH_KEY_FN(KEY_UP), "Up", K_UP, "jobs: select a job"},
    {DASH_KEY_FN(KEY_DOWN), "Down", K_DOWN, "jobs: select a job"},
    {'\n', "Enter", K_ATTACH, "jobs: attach the job"},
    {' ', "Space", K_PAUSE, "jobs: pause/resume (asks)"},
    {DASH_KEY_FN(KEY_DC), "Del", K_STOP, "jobs: stop the job (asks)"},
};

const DashView view_jobs = {
    .name = "jobs",
    .state_size = sizeof(JobsView),
    .free = state_free,
    .keys = KEYS,
    .n_keys = (int)(sizeof KEYS / sizeof KEYS[0]),
    .draw = draw,
    .on_key = on_key,
    .enter = enter,
    .tick = tick,
};
