/* view_samples.c — the samples view: the newest `sample runs=A,B,C` (one prompt through
 * several stored runs, same seed and temperature) as columns side by side, read from
 * the run store (the runs' recorded samples with that prompt and settings; which runs
 * the store setting "samples.last" says), reloaded about once a second, so the next
 * `sample runs=...` typed on the command line shows here. No keys of its own (the help
 * overlay has no room left). Not sampling (commands/cmd_sample_runs.c does it). */
#define NCURSES_WIDECHAR 1
#include "dash_draw.h"
#include "dash_view.h"
#include "err.h"
#include "runstore_group.h"
#include "safetext.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RUNS 9   /* the runs of one `sample runs=...` shown */

/* The view's own state (DashView.state_size): the columns shown and what they came from. */
typedef struct {
    long sp_run[MAX_RUNS];
    char sp_name[MAX_RUNS][64];
    char *sp_text[MAX_RUNS];  /* malloc'd, NULL when not recorded */
    int n_sp;
    char sp_key[1024], sp_settings[256], sp_prompt[512];
    double sp_next;           /* reload then (monotonic seconds) */
} SamplesView;

extern const DashView view_samples;

static void columns_free(SamplesView *d)
{
    for (int i = 0; i < d->n_sp; i++) free(d->sp_text[i]);
    d->n_sp = 0;
}

static void state_free(void *state) { columns_free(state); }

/* The newest sample of run id recorded with settings, into d's column k. */
static void load_column(SamplesView *d, RunStore *st, long id, const char *settings, int k)
{
    SampleRow *rows = NULL;
    RunRow r;
    int n = 0;
    char err[LM_ERR_LEN];
    d->sp_run[k] = id;
    d->sp_text[k] = NULL;
    snprintf(d->sp_name[k], sizeof d->sp_name[k], "#%ld", id);
    if (!runstore_get(st, id, &r, err)) {
        snprintf(d->sp_name[k], sizeof d->sp_name[k], "#%ld %.50s", id, r.name);
        runstore_row_free(&r);
    }
    if (runstore_samples(st, id, &rows, &n, err)) return;
    for (int i = n - 1; i >= 0 && !d->sp_text[k]; i--)
        if (!strcmp(rows[i].settings, settings) && !strcmp(rows[i].prompt, d->sp_prompt))
            d->sp_text[k] = strdup(rows[i].text);
    runstore_samples_free(rows, n);
}

/* Reloads when due (forced: now). 1 when something changed. */
static int load(DashCtx *x, int forced)
{
    SamplesView *d = dash_view_state(x->d, &view_samples);
    if (!d)
        return 0;
    if (!dash_view_due(&d->sp_next, forced))
        return 0;
    RunStore *st = forced ? session_store(x->s) : x->s->store;
    char last[1024], err[LM_ERR_LEN];
    int found = 0;
    if (!st || runstore_setting_get(st, "samples.last", last, sizeof last, &found, err) || !found)
        return 0;
    if (!forced && !strcmp(last, d->sp_key)) return 0;
    snprintf(d->sp_key, sizeof d->sp_key, "%s", last);
    /* "SETTINGS\tPROMPT": the settings end in runs=A,B,C */
    char *tab = strchr(last, '\t');
    if (!tab) return 0;
    *tab = 0;
    snprintf(d->sp_settings, sizeof d->sp_settings, "%.255s", last);
    snprintf(d->sp_prompt, sizeof d->sp_prompt, "%s", tab + 1);
    columns_free(d);
    const char *runs = strstr(d->sp_settings, "runs=");
    char list[256];
    snprintf(list, sizeof list, "%s", runs ? runs + 5 : "");
    char *save = NULL;
    for (char *w = strtok_r(list, ",", &save); w && d->n_sp < MAX_RUNS;
         w = strtok_r(NULL, ",", &save), d->n_sp++)
        load_column(d, st, atol(w[0] == '#' ? w + 1 : w), d->sp_settings, d->n_sp);
    return 1;
}

static void enter(DashCtx *x) { load(x, 1); }

static int tick(DashCtx *x) { return load(x, 0); }

/* Writes text into the column (x, y, w, h) wrapped at w cells and at newlines. */
static void column_text(Canvas *c, int x, int y, int w, int h, const char *text,
                        const CanvasCaps *caps)
{
    char esc[8192], line[512];
    safetext_escape(esc, sizeof esc, text ? text : "(no sample recorded)", 1);
    const char *p = esc;
    size_t left = strlen(esc);
    for (int row = 0; row < h && left; row++) {   /* at word boundaries (spaces) */
        size_t end, next = dash_draw_wrap_row(p, left, w, &end);
        size_t o = end < sizeof line ? end : sizeof line - 1;
        memcpy(line, p, o);
        line[o] = 0;
        p += next, left -= next;
        canvas_text_fit(c, x, y + row, w, line, text ? UI_COLOR_DEFAULT : UI_COLOR_DIM, 0,
                        caps->unicode);
    }
}

static void draw(Canvas *c, Rect r, Dashboard *dash, const Snapshot *sn, const CanvasCaps *caps,
                 int focused)
{
    (void)sn;
    SamplesView none = {.n_sp = 0}, *d = dash_view_state(dash, &view_samples);
    if (!d)
        d = &none;
    char title[700];
    snprintf(title, sizeof title, "one prompt, %d models | prompt \"%.80s\" | %.200s", d->n_sp,
             d->sp_prompt, d->sp_settings);
    canvas_box(c, r, d->n_sp ? title : "samples", focused, caps->unicode);
    Rect in = canvas_rect_inner(r);
    if (!d->n_sp) {
        dash_draw_message(c, in, "`sample runs=3,7,9 prompt=\"ROMEO:\" tokens=200` puts "
                                 "runs side by side here");
        return;
    }
    int cw = (in.w - (d->n_sp - 1)) / d->n_sp;
    for (int k = 0; k < d->n_sp && cw >= 4; k++) {
        int x = in.x + k * (cw + 1);
        canvas_text_fit(c, x, in.y, cw, d->sp_name[k], dash_draw_run_color(d->sp_run[k]),
                        UI_ATTR_BOLD, caps->unicode);
        column_text(c, x, in.y + 1, cw, in.h - 1, d->sp_text[k], caps);
        for (int y = in.y; k && y < in.y + in.h; y++)
            canvas_put(c, x - 1, y, caps->unicode ? "│" : "|", UI_COLOR_DIM, 0);
    }
}

const DashView view_samples = {
    .name = "samples",
    .state_size = sizeof(SamplesView),
    .free = state_free,
    .keys = NULL,
    .n_keys = 0,
    .draw = draw,
    .enter = enter,
    .tick = tick,
};
