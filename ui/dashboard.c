/* dashboard.c — dashboard_run (see dashboard.h): a fresh state, the curses loop, free;
 * and timing frames off screen for `bench board`.
 * Not the loop (dash_term.c) or the drawing (dash_render.c). */
#include "dashboard.h"

#include "dash_render.h"
#include "dash_state.h"
#include "dash_term.h"
#include "err.h"
#include "views.h"
#include "sysinfo.h"

#include <stdlib.h>
#include <time.h>

int dashboard_run(Session *s, FILE *transcript)
{
    Dashboard d;
    if (dash_state_init(&d))
        return 1;
    s->can_ask = 1;   /* `rm ID` asks y/N over the screen */
    int rc = dash_term_run(s, &d, transcript);
    dash_state_free(&d);
    return rc;
}

static void bench_out(void *loop, int color, const char *text) { (void)loop, (void)color, (void)text; }
static void bench_command(void *loop, const char *line) { (void)loop, (void)line; }
static void bench_quit(void *loop) { (void)loop; }

static int cmp_ms(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int dashboard_bench_frame(Session *s, const char *name, int frames, int w, int h, double *ms,
                          char *err)
{
    int v = views_find(name);
    if (v < 0)
        return err_set(err, LM_EARG, "no dashboard view '%s'", name);
    Dashboard d;
    Canvas *c = canvas_create(w, h);
    double t[64];
    frames = frames < 1 ? 1 : frames > 64 ? 64 : frames;
    if (!c || dash_state_init(&d)) {
        canvas_destroy(c);
        return err_set(err, LM_ENOMEM, "out of memory");
    }
    d.view = v;
    Snapshot snap = {0};
    snap.best_val = 0.0 / 0.0;
    DashCtx x = {&d, s, &snap, "", NULL, bench_out, bench_command, bench_quit};
    const DashView *view = views_get(v);
    const CanvasCaps caps = {1, 1};
    for (int f = 0; f < frames; f++) {
        double t0 = sysinfo_now();
        if (view->enter) view->enter(&x);   /* the reload a due tick does */
        dash_render(c, &d, &snap, &caps);
        t[f] = 1e3 * (sysinfo_now() - t0);
    }
    qsort(t, (size_t)frames, sizeof *t, cmp_ms);
    *ms = t[frames / 2];
    dash_state_free(&d);
    canvas_destroy(c);
    return LM_OK;
}
