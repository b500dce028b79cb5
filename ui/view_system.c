/* view_system.c — the system view: for the run on screen (trained here or attached from
 * the store), what the machine was doing beside the loss: tokens/s against time over the
 * machine's load and the process's CPU use in cores (so a run slowed by another process
 * shows as tok/s falling while load rises, on one screen), a line of memory, threads and
 * the busiest threads, and the run's console (what it printed, runstore_console_read) as
 * a scrolling pane. Reloaded from the store about once a second while shown. No keys of
 * its own. Not the sampling (core/run/sysmetrics.c) nor the alerts (dash_alerts.c). */
#define NCURSES_WIDECHAR 1
#include "chart.h"
#include "dash_draw.h"
#include "dash_view.h"
#include "view_system.h"
#include "err.h"
#include "safetext.h"

#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void state_free(void *state)
{
    SystemView *d = state;
    free(d->sys);
    textpane_destroy(d->console);
}

/* A console line as the pane shows it: "HH:MM:SS kind text", stored text escaped. */
static void console_add(SystemView *d, const ConsoleLine *l)
{
    char t[16], head[48];
    time_t tt = (time_t)l->t;
    struct tm tm;
    if (!localtime_r(&tt, &tm) || !strftime(t, sizeof t, "%H:%M:%S", &tm)) snprintf(t, sizeof t, "-");
    snprintf(head, sizeof head, "%s %-8s ", t, l->kind);
    char *safe = safetext_dup(l->text, SAFETEXT_KEEP_NEWLINES);
    int color = !strcmp(l->kind, "error") ? UI_COLOR_ERROR : !strcmp(l->kind, "warning")
                ? UI_COLOR_WARN : !strcmp(l->kind, "eval") ? UI_COLOR_ACCENT : 0;
    textpane_newline_if_needed(d->console);
    textpane_append(d->console, head, -1, UI_COLOR_DIM, 0);
    textpane_append(d->console, safe ? safe : "", -1, color, 0);
    textpane_append(d->console, "\n", 1, color, 0);
    free(safe);
}

/* Reloads the shown run's samples and new console lines when due. 1 when changed. */
static int load(DashCtx *x, int forced)
{
    SystemView *d = dash_view_state(x->d, &view_system);
    if (!d) return 0;   /* out of memory: nothing to show */
    long run = x->snap ? x->snap->run_id : 0;
    if (run != d->sys_run) forced = 1;
    if (!dash_view_due(&d->sys_next, forced)) return 0;
    RunStore *st = forced ? session_store(x->s) : x->s->store;
    if (!st || run <= 0) return 0;
    char err[LM_ERR_LEN];
    if (run != d->sys_run || !d->console) {
        textpane_destroy(d->console);
        d->console = textpane_create(3000);
        d->console_after = d->console_cut = 0;
        d->sys_run = run;
    }
    SysSample *x2 = NULL;
    int n = 0;
    if (runstore_sys_series(st, run, 0, &x2, &n, err) == LM_OK) {
        free(d->sys);
        d->sys = x2;
        d->n_sys = n;
    }
    ConsoleLine *l = NULL;
    long cut = 0;
    if (d->console && runstore_console_read(st, run, d->console_after, d->console_after ? 0 : 2000,
                                            &l, &n, &cut, err) == LM_OK) {
        if (!d->console_after && cut) {
            char msg[160];
            if (cut < 0)   /* numbers with a gap: nothing to count */
                snprintf(msg, sizeof msg, "(the line numbers have a gap: whether lines were"
                         " cut is not known)\n");
            else
                snprintf(msg, sizeof msg, "(the first %ld lines were cut: the store keeps the"
                         " newest %d lines of a run)\n", cut, RUNSTORE_CONSOLE_MAX_LINES);
            textpane_append(d->console, msg, -1, UI_COLOR_DIM, 0);
        }
        for (int i = 0; i < n; i++) console_add(d, &l[i]);
        if (n) d->console_after = l[n - 1].seq;
        if (n) textpane_scroll_end(d->console);
        runstore_console_free(l, n);
    }
    return 1;
}

static void enter(DashCtx *x) { load(x, 1); }

static int tick(DashCtx *x) { return load(x, 0); }

/* tokens/s (left) and load and CPU cores (right) against minutes of the run. */
static void charts(Canvas *c, Rect r, Dashboard *dash, const SystemView *d, const CanvasCaps *caps, int focused)
{
    int n = d->n_sys, half = r.w / 2;
    char title[160];
    Rect left = {r.x, r.y, half, r.h}, right = {r.x + half, r.y, r.w - half, r.h};
    snprintf(title, sizeof title, "run #%ld: tokens/s", d->sys_run);
    canvas_box(c, left, title, focused, caps->unicode);
    canvas_box(c, right, "machine load and process CPU (cores)", 0, caps->unicode);
    double *b = n ? dash_draw_scratch(dash, 4L * n) : NULL;
    if (!b || n < 2) {
        const char *msg = d->sys_run ? "the run's system metrics appear here (sampled every 5 s)"
                                     : "no run on screen: `train`, or `attach ID`";
        dash_draw_message(c, canvas_rect_inner(left), msg);
        dash_draw_message(c, canvas_rect_inner(right), msg);
        return;
    }
    for (int i = 0; i < n; i++) {
        b[i] = (d->sys[i].t - d->sys[0].t) / 60.0;
        b[n + i] = d->sys[i].tokens_per_s;
        b[2 * n + i] = d->sys[i].load1;
        b[3 * n + i] = d->sys[i].cpu / 100.0;
    }
    ChartSeries tok = {b, b + n, n, "tok/s", UI_COLOR_SERIES1, CHART_LINE};
    ChartData td = {&tok, 1, "minutes", 0, 0, 0, 0, 0};
    chart_draw(c, canvas_rect_inner(left), &td, caps);
    ChartSeries ls[2] = {{b, b + 2 * n, n, "load (1 min)", UI_COLOR_WARN, CHART_LINE},
                         {b, b + 3 * n, n, "cpu (cores)", UI_COLOR_SERIES2, CHART_LINE}};
    ChartData ld = {ls, 2, "minutes", 0, 0, 0, 0, 0};
    chart_draw(c, canvas_rect_inner(right), &ld, caps);
}

static void draw(Canvas *c, Rect r, Dashboard *dash, const Snapshot *sn,
                 const CanvasCaps *caps, int focused)
{
    (void)sn;
    SystemView *d = dash_view_state(dash, &view_system);
    if (!d) return;
    int ch = r.h >= 16 ? r.h / 2 : r.h - 4;
    if (ch < 5) ch = r.h;
    charts(c, (Rect){r.x, r.y, r.w, ch}, dash, d, caps, focused);
    if (r.h - ch < 4) return;
    char line[400] = "";
    if (d->n_sys) {
        const SysSample *s = &d->sys[d->n_sys - 1];
        snprintf(line, sizeof line, "rss %.0f MiB  threads %d  free %.0f of %.0f MiB  load %.2f"
                 "  cpu %.0f%%  busiest threads (tid:cpu%%) %s", s->rss_mb, s->threads,
                 s->mem_avail_mb, s->mem_total_mb, s->load1, s->cpu, s->thread_cpu);
    }
    canvas_text(c, r.x + 1, r.y + ch, r.w - 2, line, UI_COLOR_DIM, 0);
    Rect pane = {r.x, r.y + ch + 1, r.w, r.h - ch - 1};
    canvas_box(c, pane, "console (`log ID` prints it in any shell)", 0, caps->unicode);
    if (d->console && textpane_line_count(d->console))
        textpane_draw(c, canvas_rect_inner(pane), d->console, caps);
    else
        dash_draw_message(c, canvas_rect_inner(pane), "the run's console appears here");
}

const DashView view_system = {
    .name = "system",
    .state_size = sizeof(SystemView),
    .free = state_free,
    .keys = NULL,
    .n_keys = 0,
    .draw = draw,
    .on_key = NULL,
    .enter = enter,
    .tick = tick,
};
