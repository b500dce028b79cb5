/* view_train.c — the training view: loss / perplexity plots (marked runs overlaid), the
 * streaming sample, the gates heatmap with a cursor and the selected cell's
 * distribution and history (loaded from the run store as evaluations arrive).
 * Not the status bar or the run control keys (dash_render.c, dash_keymap.c). */
#define NCURSES_WIDECHAR 1
#include "dash_data.h"
#include "safetext.h"
#include "dash_draw.h"
#include "smooth.h"
#include "view_train.h"
#include "dash_view.h"
#include "heatmap.h"
#include "chart.h"
#include "sysinfo.h"

#include <stdlib.h>
#include <curses.h>
#include <math.h>
#include <stdio.h>

enum { K_UP, K_DOWN, K_LEFT, K_RIGHT };

/* ---- plots ---- */

static void state_free(void *state) { free(((TrainView *)state)->gate_hist); }

/* x of a live-run step: steps, or tokens / seconds at the run's average rate so far. */
static double live_x_scale(const Dashboard *d, const Snapshot *sn)
{
    if (d->x_axis == DASH_X_STEPS || sn->last.step <= 0)
        return 1;
    return d->x_axis == DASH_X_TOKENS ? (double)sn->last.tokens / (double)sn->last.step
                                      : sn->last.elapsed / (double)sn->last.step;
}

/* The training view's smoothing: the one EMA (core/base/smooth.h) over a span of 19 points
 * (weight 0.9), named in the legend. */
#define TRAIN_SMOOTH_POINTS 19

/* The loss plot (train raw, smoothed EMA, validation) or the perplexity plot (val ppl,
 * smoothed train ppl) of the run on screen only: runs marked in the history view are
 * compared there, not overlaid here. */
static void plot_losses(Canvas *c, Rect r, Dashboard *d, const Snapshot *sn,
                        const CanvasCaps *caps, int ppl)
{
    char title[96];
    snprintf(title, sizeof title, "%s%s | x %s  * log  > axis%s",
             ppl ? "perplexity" : "loss", d->log_y ? " (log)" : "", dash_draw_x_label(d),
             ppl ? "" : "  ^ ppl");
    canvas_box(c, r, title, 0, caps->unicode);
    long nl = sn->n_loss, nv = sn->n_val;
    double *b = dash_draw_scratch(d, 3 * nl + 2 * nv + dash_draw_curves_need(d) + 1);
    if (!b)
        return;
    double *xl = b, *raw = b + nl, *ema = b + 2 * nl, *xv = b + 3 * nl, *yv = xv + nv;
    double k = live_x_scale(d, sn);
    for (long i = 0; i < nl; i++) {
        xl[i] = (double)sn->loss[i].step * k;
        raw[i] = sn->loss[i].value;
    }
    smooth_ema_debiased(raw, (int)nl, smooth_weight(TRAIN_SMOOTH_POINTS), ema);   /* the one EMA */
    for (long i = 0; ppl && i < nl; i++)
        ema[i] = exp(ema[i]);
    for (long i = 0; i < nv; i++) {
        xv[i] = (double)sn->val[i].step * k;
        yv[i] = ppl ? exp(sn->val[i].value) : sn->val[i].value;
    }
    ChartSeries ps[CHART_MAX_SERIES];
    int n = 0;
    if (!ppl)
        ps[n++] = (ChartSeries){xl, raw, nl, "train", UI_COLOR_DIM, CHART_LINE};
    ps[n++] = (ChartSeries){xl, ema, nl, ppl ? "train (EMA 19)" : "EMA 19", UI_COLOR_SERIES1,
                           CHART_LINE};
    ps[n++] = (ChartSeries){xv, yv, nv, "val", UI_COLOR_SERIES2, CHART_LINE};
    ChartData pd = {ps, n, dash_draw_x_label(d), d->log_y, 0, 0, 0, 0};
    chart_draw(c, canvas_rect_inner(r), &pd, caps);
}

/* ---- gates ---- */

static const GateStat *gate_at(const Snapshot *sn, int layer, int level)
{
    for (int i = 0; i < sn->n_gates && i < SNAP_MAX_GATES; i++)
        if (sn->gates[i].layer == layer && sn->gates[i].level == level)
            return &sn->gates[i];
    return NULL;
}

static void gates_heatmap(Canvas *c, Rect r, Dashboard *d, const Snapshot *sn,
                          const CanvasCaps *caps, int focused)
{
    TrainView *w = dash_view_state(d, &view_train);   /* draw made sure of it */
    char title[64];
    long step = sn->n_gates ? sn->gates[0].step : 0;
    snprintf(title, sizeof title, sn->n_gates ? "gates @%ld: layer x shift" : "gates", step);
    canvas_box(c, r, title, focused, caps->unicode);
    Rect in = canvas_rect_inner(r);
    int L = sn->gate_layers, K = sn->gate_levels;
    if (!sn->n_gates || L < 1 || K < 1 || (long)L * K > SNAP_MAX_GATES) {
        dash_draw_message(c, in, sn->run_id && !config_is_dispatcher(&sn->cfg)
                                     ? "no gates: only Dispatcher models have them"
                                     : "gates appear at each evaluation");
        return;
    }
    float vals[SNAP_MAX_GATES];
    for (int i = 0; i < L * K; i++)
        vals[i] = NAN;
    for (int i = 0; i < sn->n_gates && i < SNAP_MAX_GATES; i++) {
        const GateStat *g = &sn->gates[i];
        if (g->layer >= 0 && g->layer < L && g->level >= 0 && g->level < K)
            vals[g->layer * K + g->level] = g->mean;
    }
    HeatmapData hd = {"layer \\ shift", vals, L, K, NULL, NULL,
                      dash_draw_clamp(w->gate_row, 0, L - 1), dash_draw_clamp(w->gate_col, 0, K - 1)};
    heatmap_draw(c, in, &hd, caps);
}

static void gate_cell(Canvas *c, Rect r, Dashboard *d, const Snapshot *sn,
                      const CanvasCaps *caps)
{
    TrainView *w = dash_view_state(d, &view_train);   /* draw made sure of it */
    int L = sn->gate_layers, K = sn->gate_levels;
    int l = dash_draw_clamp(w->gate_row, 0, L > 0 ? L - 1 : 0);
    int k = dash_draw_clamp(w->gate_col, 0, K > 0 ? K - 1 : 0);
    const GateStat *g = sn->n_gates ? gate_at(sn, l, k) : NULL;
    char title[64];
    if (g)
        snprintf(title, sizeof title, "layer %d, shift %d", l, 1 << k);
    else
        snprintf(title, sizeof title, "gate cell");
    canvas_box(c, r, title, 0, caps->unicode);
    Rect in = canvas_rect_inner(r);
    if (!g) {
        dash_draw_message(c, in, "arrows pick a cell: its distribution and history");
        return;
    }
    /* the longest wording that fits: fields are dropped whole, a number is never cut
     * (at 80x24 "at step 3000" became "at step 300"); what is still too long ends in '…' */
    char line[4][96];
    snprintf(line[0], sizeof line[0], "mean %.3f  std %.3f  at step %ld", g->mean, g->std,
             g->step);
    snprintf(line[1], sizeof line[1], "mean %.3f std %.3f step %ld", g->mean, g->std, g->step);
    snprintf(line[2], sizeof line[2], "mean %.3f step %ld", g->mean, g->step);
    snprintf(line[3], sizeof line[3], "step %ld", g->step);
    int pick = 0;
    while (pick < 3 && canvas_utf8_width(line[pick]) > in.w)
        pick++;
    canvas_text_fit(c, in.x, in.y, in.w, line[pick], UI_COLOR_DEFAULT, UI_ATTR_BOLD,
                    caps->unicode);
    int hw = dash_draw_clamp(in.w * 2 / 5, 12, 30);
    Rect hr = {in.x, in.y + 1, hw, in.h - 1}, pr = {in.x + hw + 1, in.y + 1, in.w - hw - 1,
                                                    in.h - 1};
    HistogramData hd = {"distribution", g->hist, GATE_HIST_BINS, 0, 1, UI_COLOR_SERIES1};
    histogram_draw(c, hr, &hd, caps);
    double *b = dash_draw_scratch(d, 2L * w->n_gate_hist + 1);
    if (!b)
        return;
    for (int i = 0; i < w->n_gate_hist; i++) {
        b[i] = (double)w->gate_hist[i].step;
        b[w->n_gate_hist + i] = w->gate_hist[i].value;
    }
    ChartSeries ps = {b, b + w->n_gate_hist, w->n_gate_hist, "mean by step",
                     UI_COLOR_SERIES2, CHART_LINE};
    ChartData pd = {&ps, 1, "step", 0, 1, 0, 1, 0};
    chart_draw(c, pr, &pd, caps);
}

static void sample_pane(Canvas *c, Rect r, const Dashboard *d, const Snapshot *sn,
                        const CanvasCaps *caps)
{
    char title[64];
    const char *text = d->sample_from_cmd ? d->cmd_sample : sn->sample;
    if (d->sample_from_cmd)
        snprintf(title, sizeof title, "sample (command)");
    else if (sn->sample[0])
        snprintf(title, sizeof title, "sample @ step %ld%s", sn->sample_step,
                 sn->sample_live ? " (streaming)" : "");
    else
        snprintf(title, sizeof title, "sample");
    canvas_box(c, r, title, 0, caps->unicode);
    Rect in = canvas_rect_inner(r);
    if (!text[0])
        dash_draw_wrap(c, in, "samples stream here during training; F6 samples now",
                       UI_COLOR_DIM, 1);
    else {
        char *safe = safetext_dup(text, SAFETEXT_KEEP_NEWLINES);  /* generated text: escaped */
        dash_draw_wrap(c, in, safe ? safe : text, UI_COLOR_DEFAULT, 0);
        free(safe);
    }
}

static void draw(Canvas *c, Rect r, Dashboard *d, const Snapshot *sn, const CanvasCaps *caps,
                 int focused)
{
    if (!dash_view_state(d, &view_train))   /* out of memory: nothing to show */
        return;
    int lw = r.w * 55 / 100;
    Rect left = {r.x, r.y, lw, r.h}, right = {r.x + lw, r.y, r.w - lw, r.h};
    int sample_h = dash_draw_clamp(r.h / 3, 4, 12);
    Rect plots = {left.x, left.y, left.w, left.h - sample_h};
    if (plots.h >= 20) {
        int lh = plots.h * 3 / 5;
        plot_losses(c, (Rect){plots.x, plots.y, plots.w, lh}, d, sn, caps, 0);
        plot_losses(c, (Rect){plots.x, plots.y + lh, plots.w, plots.h - lh}, d, sn, caps, 1);
    } else {
        plot_losses(c, plots, d, sn, caps, d->show_ppl);
    }
    sample_pane(c, (Rect){left.x, plots.y + plots.h, left.w, sample_h}, d, sn, caps);
    int gh = dash_draw_clamp(sn->gate_layers + 5, 5, right.h - 6 > 5 ? right.h - 6 : 5);
    gates_heatmap(c, (Rect){right.x, right.y, right.w, gh}, d, sn, caps, focused);
    gate_cell(c, (Rect){right.x, right.y + gh, right.w, right.h - gh}, d, sn, caps);
}

/* ---- the selected cell's history ---- */

/* Clamps the gate cursor and loads the cell's history when it changed (or, while the
 * store lags the snapshot, again a little later). 1 when something new was loaded. */
static int gate_history(DashCtx *x)
{
    const Snapshot *sn = x->snap;
    TrainView *w = dash_view_state(x->d, &view_train);
    if (!w || !sn->run_id || !sn->n_gates || sn->gate_layers < 1 || sn->gate_levels < 1)
        return 0;
    w->gate_row = dash_draw_clamp(w->gate_row, 0, sn->gate_layers - 1);
    w->gate_col = dash_draw_clamp(w->gate_col, 0, sn->gate_levels - 1);
    long step = sn->gates[0].step;
    int same = w->gh_run == sn->run_id && w->gh_step == step && w->gh_row == w->gate_row &&
               w->gh_col == w->gate_col;
    double now = sysinfo_now();
    if (same && (w->gh_retry == 0 || now < w->gh_retry))
        return 0;
    w->gh_run = sn->run_id, w->gh_step = step, w->gh_row = w->gate_row, w->gh_col = w->gate_col;
    w->gh_retry = now + 5;   /* until it worked: a failing store is not asked 10 times/s */
    RunStore *st = session_store(x->s);
    char err[LM_ERR_LEN];
    if (!st || dash_data_gate_history(&w->gate_hist, &w->n_gate_hist, st, sn->run_id, w->gate_row,
                                      w->gate_col, err))
        return 0;
    int complete = w->n_gate_hist > 0 && w->gate_hist[w->n_gate_hist - 1].step >= step;
    w->gh_retry = complete ? 0 : now + 0.5;
    return 1;
}

static void on_key(DashCtx *x, int action)
{
    static const int dx[] = {0, 0, -1, 1}, dy[] = {-1, 1, 0, 0};
    TrainView *w = dash_view_state(x->d, &view_train);
    if (!w)
        return;
    w->gate_row += dy[action], w->gate_col += dx[action];
    gate_history(x);   /* clamps to the heatmap */
}

static const DashViewKey KEYS[] = {
    {DASH_KEY_FN(KEY_UP), "Up", K_UP, "gate cell: layer"},
    {DASH_KEY_FN(KEY_DOWN), "Down", K_DOWN, "gate cell: layer"},
    {DASH_KEY_FN(KEY_LEFT), "Left", K_LEFT, "gate cell: shift"},
    {DASH_KEY_FN(KEY_RIGHT), "Right", K_RIGHT, "gate cell: shift"},
};

const DashView view_train = {
    .name = "training",
    .state_size = sizeof(TrainView),
    .free = state_free,
    .keys = KEYS,
    .n_keys = (int)(sizeof KEYS / sizeof KEYS[0]),
    .draw = draw,
    .on_key = on_key,
    .tick = gate_history,
};
