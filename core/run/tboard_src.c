/* tboard_src.c — a run's summaries for its event file (tboard_src.h), read as they are
 * written: one store cursor per series (runstore.h's RunStoreCursor), merged by step with
 * a binary heap keyed (step, source), so that at one step the summaries go in the order
 * the sources were opened and each source's in its own. That is the order the whole run
 * gathered into memory and sorted by (step, gathering order) gave (TensorBoard's reader
 * drops what looks like a restart when a tag's step goes back), in memory that does not
 * grow with the run: a 5 M-step run took 3.8 GB that way. Not the framing (tboard.c). */
#include "tboard_src.h"

#include "err.h"
#include "runstore_series.h"
#include "runstore_track.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SRC_REG, SRC_GATE, SRC_SYS, SRC_NAMED, SRC_HIST };

#define SRC_MAX_ITEMS 5   /* a system sample: cpu, rss_mb, threads, load1, mem_avail_mb */

typedef struct {
    int kind;
    RunStoreCursor *c;
    char tag[SERIES_NAME_LEN + 16];   /* the series' name, or hist/gate/L/K */
    char bad[SERIES_NAME_LEN + 16];   /* SRC_HIST: <name>/nonfinite, "" when it has none */
    char sys_tag[SRC_MAX_ITEMS][48];
    SeriesHist h;
    TboardItem q[SRC_MAX_ITEMS];      /* the current row's summaries, all at one step */
    int nq, iq;
} Src;

struct TboardSrc {
    Src *src;
    int n, cap;
    int *heap, nh;                    /* sources with a summary waiting, by (step, index) */
    int handed;                       /* the source of the summary last handed out, or -1 */
    RunStoreCursor *clock;            /* (step, elapsed) of the run's step metrics */
    SeriesPoint now, ahead;
    int have_now, have_ahead;
    double started;
};

static void push(Src *x, long step, const char *tag, int kind, double value, double wall)
{
    TboardItem *it = &x->q[x->nq++];
    *it = (TboardItem){step, kind, wall, value, tag, kind == TBOARD_HIST ? &x->h : NULL};
}

/* A gate statistic as a histogram over [0, 1) (its mean and spread kept in sum, sum_sq). */
static void gate_hist(const GateStat *g, SeriesHist *h)
{
    memset(h, 0, sizeof *h);
    h->hi = 1;
    for (int b = 0; b < GATE_HIST_BINS; b++) {
        h->counts[b] = g->hist[b];
        h->num += g->hist[b];
    }
    h->sum = (double)g->mean * h->num;
    h->sum_sq = ((double)g->std * g->std + (double)g->mean * g->mean) * h->num;
}

static void sys_push(Src *x, const SysSample *y)
{
    static const char *const WHAT[SRC_MAX_ITEMS] = {"cpu", "rss_mb", "threads", "load1",
                                                    "mem_avail_mb"};
    double v[SRC_MAX_ITEMS] = {y->cpu, y->rss_mb, y->threads, y->load1, y->mem_avail_mb};
    for (int k = 0; k < SRC_MAX_ITEMS; k++) {
        if (isnan(v[k])) continue;
        snprintf(x->sys_tag[k], sizeof x->sys_tag[k], "sys/rank%d/%s", y->rank, WHAT[k]);
        push(x, y->step, x->sys_tag[k], TBOARD_SCALAR, v[k], y->t);
    }
}

/* Reads x's next rows until one gives a summary: 1, 0 at the end, -1 (err). A wall of
 * NaN is the clock's, filled in when the summary is handed out. */
static int src_fill(Src *x, char *err)
{
    x->nq = x->iq = 0;
    while (!x->nq) {
        SeriesPoint p;
        GateStat g;
        SysSample y;
        HistPoint hp;
        int rc;
        switch (x->kind) {
        case SRC_GATE:
            if ((rc = runstore_gate_next(x->c, &g, err)) != 1) return rc;
            gate_hist(&g, &x->h);
            push(x, g.step, x->tag, TBOARD_HIST, 0, NAN);
            break;
        case SRC_SYS:
            if ((rc = runstore_sys_next(x->c, &y, err)) != 1) return rc;
            sys_push(x, &y);
            break;
        case SRC_HIST:   /* NaN and infinities are no bucket: counted beside */
            if ((rc = runstore_hist_next(x->c, &hp, err)) != 1) return rc;
            x->h = hp.h;
            if (hp.h.num > 0) push(x, hp.step, x->tag, TBOARD_HIST, 0, NAN);
            if (x->bad[0])
                push(x, hp.step, x->bad, TBOARD_SCALAR,
                     (double)(hp.h.n_nan + hp.h.n_posinf + hp.h.n_neginf), NAN);
            break;
        default:         /* a registry series or a named scalar series */
            if ((rc = runstore_series_next(x->c, &p, err)) != 1) return rc;
            push(x, p.step, x->tag, TBOARD_SCALAR, p.value, NAN);
        }
    }
    return 1;
}

/* ---- the heap --------------------------------------------------------------------------- */

static int before(const TboardSrc *m, int a, int b)
{
    long sa = m->src[a].q[m->src[a].iq].step, sb = m->src[b].q[m->src[b].iq].step;
    return sa != sb ? sa < sb : a < b;
}

static void sift_down(TboardSrc *m, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, top = i;
        if (l < m->nh && before(m, m->heap[l], m->heap[top])) top = l;
        if (r < m->nh && before(m, m->heap[r], m->heap[top])) top = r;
        if (top == i) return;
        int t = m->heap[i];
        m->heap[i] = m->heap[top];
        m->heap[top] = t;
        i = top;
    }
}

/* ---- opening ---------------------------------------------------------------------------- */

static Src *src_add(TboardSrc *m, int kind, const char *tag)
{
    if (m->n == m->cap) {
        int cap = m->cap ? 2 * m->cap : 32;
        Src *v = realloc(m->src, (size_t)cap * sizeof *v);
        if (!v) return NULL;
        m->src = v;
        m->cap = cap;
    }
    Src *x = &m->src[m->n++];
    memset(x, 0, sizeof *x);
    x->kind = kind;
    snprintf(x->tag, sizeof x->tag, "%s", tag);
    return x;
}

/* Whether registry series name of run has a value other than NaN: 1, 0, or -1 when it
 * cannot be read (left out either way). */
static int reg_has_value(RunStore *st, long run, const char *name)
{
    RunStoreCursor *c;
    SeriesPoint p;
    int any = 0, rc;
    if (runstore_series_open(st, run, name, &c, NULL)) return -1;
    while (!any && (rc = runstore_series_next(c, &p, NULL)) == 1) any = !isnan(p.value);
    runstore_cursor_close(c);
    return any;
}

/* Every registry series run has but its named ones (those come from add_named). */
static int add_registry(TboardSrc *m, RunStore *st, long run)
{
    char (*names)[SERIES_NAME_LEN] = NULL;
    int nn = 0, oom = 0;
    if (runstore_series_list(st, run, NULL, &names, &nn, NULL)) return 0;
    for (int k = 0; k < nn && !oom; k++) {
        SeriesRef ref;
        if (series_find(names[k], &ref, NULL) || ref.info->source == SERIES_SRC_NAMED ||
            ref.info->source == SERIES_SRC_HIST || reg_has_value(st, run, names[k]) != 1)
            continue;
        Src *x = src_add(m, SRC_REG, names[k]);
        if (!x) oom = 1;
        else if (runstore_series_open(st, run, names[k], &x->c, NULL)) m->n--;
    }
    free(names);
    return oom ? -1 : 0;
}

/* The gates' histograms, for the (layer, level)s of the last gate step. */
static int add_gates(TboardSrc *m, RunStore *st, long run)
{
    GateStat *last = NULL;
    int n = 0, oom = 0;
    char tag[64];
    if (runstore_gates_at(st, run, -1, &last, &n, NULL)) return 0;
    for (int k = 0; k < n && !oom; k++) {
        snprintf(tag, sizeof tag, "hist/gate/%d/%d", last[k].layer, last[k].level);
        Src *x = src_add(m, SRC_GATE, tag);
        if (!x) oom = 1;
        else if (runstore_gates_open(st, run, last[k].layer, last[k].level, &x->c, NULL)) m->n--;
    }
    free(last);
    return oom ? -1 : 0;
}

/* The named series, by name: scalars, and histograms with their non-finite counts. */
static int add_named(TboardSrc *m, RunStore *st, long run)
{
    SeriesInfo *names = NULL;
    int n = 0, oom = 0;
    if (runstore_series_names(st, run, NULL, &names, &n, NULL)) return 0;
    for (int k = 0; k < n && !oom; k++) {
        int hist = names[k].kind != SERIES_SCALAR;
        long bad = 0;
        if (hist && runstore_hist_nonfinite(st, run, names[k].name, &bad, NULL)) continue;
        Src *x = src_add(m, hist ? SRC_HIST : SRC_NAMED, names[k].name);
        if (!x) oom = 1;
        else if (runstore_named_open(st, run, names[k].name, names[k].kind, &x->c, NULL)) m->n--;
        else if (bad) snprintf(x->bad, sizeof x->bad, "%s/nonfinite", names[k].name);
    }
    free(names);
    return oom ? -1 : 0;
}

int tboard_src_open(RunStore *st, const RunRow *r, TboardSrc **out, char *err)
{
    TboardSrc *m = calloc(1, sizeof *m);
    *out = NULL;
    if (!m) return err_set(err, LM_ENOMEM, "out of memory reading run %ld", r->id);
    m->handed = -1;
    m->started = r->started > 0 ? r->started : r->created;
    int rc = add_registry(m, st, r->id);
    if (!rc) rc = add_gates(m, st, r->id);
    Src *x = rc ? NULL : src_add(m, SRC_SYS, "");
    if (!x) rc = -1;
    else if (runstore_sys_ranks_open(st, r->id, &x->c, NULL)) m->n--;
    if (!rc) rc = add_named(m, st, r->id);
    if (!rc && !(m->heap = malloc(sizeof *m->heap * (size_t)(m->n + 1)))) rc = -1;
    for (int i = 0; !rc && i < m->n; i++) {
        int got = src_fill(&m->src[i], err);
        if (got < 0) rc = -2;
        else if (got) m->heap[m->nh++] = i;
    }
    for (int i = m->nh / 2 - 1; !rc && i >= 0; i--) sift_down(m, i);
    if (!rc && !runstore_series_open(st, r->id, "elapsed", &m->clock, NULL))
        m->have_ahead = runstore_series_next(m->clock, &m->ahead, NULL) == 1;
    if (rc) {
        tboard_src_close(m);
        return rc == -2 ? LM_EDB : err_set(err, LM_ENOMEM, "out of memory reading run %ld",
                                           r->id);
    }
    *out = m;
    return LM_OK;
}

/* ---- reading ---------------------------------------------------------------------------- */

/* The run's start plus its training seconds at step (the last step metric at or before
 * it; none, or a NaN, counts 0). Steps come in order, so the clock only moves on. */
static int clock_at(TboardSrc *m, long step, double *wall, char *err)
{
    while (m->have_ahead && m->ahead.step <= step) {
        m->now = m->ahead;
        m->have_now = 1;
        int rc = runstore_series_next(m->clock, &m->ahead, err);
        if (rc < 0) return -1;
        m->have_ahead = rc == 1;
    }
    *wall = m->started + (m->have_now && isfinite(m->now.value) ? m->now.value : 0);
    return 0;
}

int tboard_src_next(TboardSrc *m, TboardItem *it, char *err)
{
    if (m->handed >= 0) {   /* the source of the last summary moves on only now: its tag
                               and histogram were the caller's until this call */
        Src *x = &m->src[m->handed];
        m->handed = -1;
        if (++x->iq == x->nq) {
            int rc = src_fill(x, err);
            if (rc < 0) return -1;
            if (!rc) m->heap[0] = m->heap[--m->nh];
        }
        sift_down(m, 0);
    }
    if (!m->nh) return 0;
    Src *x = &m->src[m->heap[0]];
    *it = x->q[x->iq];
    m->handed = m->heap[0];
    if (isnan(it->wall) && clock_at(m, it->step, &it->wall, err)) return -1;
    return 1;
}

void tboard_src_close(TboardSrc *m)
{
    if (!m) return;
    for (int i = 0; i < m->n; i++) runstore_cursor_close(m->src[i].c);
    runstore_cursor_close(m->clock);
    free(m->src);
    free(m->heap);
    free(m);
}
