/* dash_views.c — the dashboard's main views (see dash_views.h): how the plots, the
 * heatmap, the histogram, the run table and the text are laid out and fed from the
 * Dashboard state and a Snapshot. Pure drawing with the ui/ widgets; the only memory it
 * touches besides the canvas is the state's scratch buffers.
 * Not a data loader: gate histories, run lists, curves and token gates arrive loaded. */
#include "dash_views.h"

#include "heatmap.h"
#include "plot.h"
#include "safetext.h"
#include "table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const X_LABELS[] = {"step", "tokens", "seconds"};

/* ---- helpers ---- */

static double *scratch(Dashboard *d, long need)
{
    if (need > d->scratch_cap) {
        double *p = realloc(d->scratch, (size_t)need * sizeof *p);
        if (!p)
            return NULL;
        d->scratch = p;
        d->scratch_cap = need;
    }
    return d->scratch;
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Walks text as wrapped rows; draws rows [skip, skip + r.h) when c is not NULL.
 * Returns the number of rows the text takes. */
static int wrap_walk(Canvas *c, Rect r, const char *text, int color, int skip)
{
    int row = 0, col = 0;
    size_t len = strlen(text);
    for (size_t i = 0; i < len;) {
        unsigned char ch = (unsigned char)text[i];
        if (ch == '\n') {
            row++, col = 0, i++;
            continue;
        }
        if (col == r.w)
            row++, col = 0;
        int n = canvas_utf8_len(text + i, len - i);
        const char *g = n ? text + i : "?";
        if (ch == '\t' || ch == '\r')
            g = " ";
        if (c && row >= skip && row - skip < r.h)
            canvas_put(c, r.x + col, r.y + row - skip, g, color, 0);
        col++;
        i += n ? (size_t)n : 1;
    }
    return col ? row + 1 : row;
}

void dash_views_wrap(Canvas *c, Rect r, const char *text, int color, int from_top)
{
    if (r.w < 1 || r.h < 1 || !text)
        return;
    int skip = 0;
    if (!from_top) {
        int total = wrap_walk(NULL, r, text, color, 0);
        skip = total > r.h ? total - r.h : 0;
    }
    wrap_walk(c, r, text, color, skip);
}

static void message(Canvas *c, Rect in, const char *text)
{
    dash_views_wrap(c, (Rect){in.x + 1, in.y + in.h / 2 - 1, in.w - 2, 3}, text, UI_COLOR_DIM,
                    1);
}

/* ---- training view: plots ---- */

/* x of a live-run step: steps, or tokens / seconds at the run's average rate so far. */
static double live_x_scale(const Dashboard *d, const Snapshot *sn)
{
    if (d->x_axis == DASH_X_STEPS || sn->last.step <= 0)
        return 1;
    return d->x_axis == DASH_X_TOKENS ? (double)sn->last.tokens / (double)sn->last.step
                                      : sn->last.elapsed / (double)sn->last.step;
}

static double curve_x_scale(const Dashboard *d, const DashCurve *cv)
{
    if (d->x_axis == DASH_X_STEPS)
        return 1;
    double v = d->x_axis == DASH_X_TOKENS ? cv->tokens_per_step : cv->seconds_per_step;
    return v > 0 ? v : 1;
}

/* Adds the marked runs' loss curves (exp'd for perplexity) to the series. */
static int add_curves(const Dashboard *d, PlotSeries *ps, int n, double *buf, int ppl)
{
    for (int i = 0; i < d->n_marked && n < PLOT_MAX_SERIES; i++) {
        const DashCurve *cv = &d->curves[i];
        double *x = buf, *y = buf + cv->n, k = curve_x_scale(d, cv);
        buf += 2 * (long)cv->n;
        for (int j = 0; j < cv->n; j++) {
            x[j] = (double)cv->pts[j].step * k;
            y[j] = ppl ? exp(cv->pts[j].value) : cv->pts[j].value;
        }
        ps[n++] = (PlotSeries){x, y, cv->n, cv->label, UI_COLOR_SERIES3 + i, PLOT_LINE};
    }
    return n;
}

static long curves_need(const Dashboard *d)
{
    long need = 0;
    for (int i = 0; i < d->n_marked; i++)
        need += 2L * d->curves[i].n;
    return need;
}

/* The loss plot (train raw, smoothed EMA, validation) or the perplexity plot (val ppl,
 * smoothed train ppl), with the marked runs overlaid. */
static void plot_losses(Canvas *c, Rect r, Dashboard *d, const Snapshot *sn,
                        const CanvasCaps *caps, int ppl)
{
    char title[96];
    snprintf(title, sizeof title, "%s%s | x %s  [l]og [a]xis%s",
             ppl ? "perplexity" : "loss", d->log_y ? " (log)" : "", X_LABELS[d->x_axis],
             ppl ? "" : " [v]ppl");
    canvas_box(c, r, title, 0, caps->unicode);
    long nl = sn->n_loss, nv = sn->n_val;
    double *b = scratch(d, 3 * nl + 2 * nv + curves_need(d) + 1);
    if (!b)
        return;
    double *xl = b, *raw = b + nl, *ema = b + 2 * nl, *xv = b + 3 * nl, *yv = xv + nv;
    double k = live_x_scale(d, sn), e = 0;
    for (long i = 0; i < nl; i++) {
        double y = sn->loss[i].value;
        e = i == 0 || !isfinite(e) ? y : 0.9 * e + 0.1 * y;
        xl[i] = (double)sn->loss[i].step * k;
        raw[i] = y;
        ema[i] = ppl ? exp(e) : e;
    }
    for (long i = 0; i < nv; i++) {
        xv[i] = (double)sn->val[i].step * k;
        yv[i] = ppl ? exp(sn->val[i].value) : sn->val[i].value;
    }
    PlotSeries ps[PLOT_MAX_SERIES];
    int n = 0;
    if (!ppl)
        ps[n++] = (PlotSeries){xl, raw, nl, "train", UI_COLOR_DIM, PLOT_LINE};
    ps[n++] = (PlotSeries){xl, ema, nl, ppl ? "train (smoothed)" : "smoothed", UI_COLOR_SERIES1,
                           PLOT_LINE};
    ps[n++] = (PlotSeries){xv, yv, nv, "val", UI_COLOR_SERIES2, PLOT_LINE};
    n = add_curves(d, ps, n, yv + nv, ppl);
    PlotData pd = {ps, n, X_LABELS[d->x_axis], d->log_y, 0, 0, 0};
    plot_draw(c, canvas_rect_inner(r), &pd, caps);
}

/* ---- training view: gates ---- */

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
    char title[64];
    long step = sn->n_gates ? sn->gates[0].step : 0;
    snprintf(title, sizeof title, sn->n_gates ? "gates @%ld: layer x shift" : "gates", step);
    canvas_box(c, r, title, focused, caps->unicode);
    Rect in = canvas_rect_inner(r);
    int L = sn->gate_layers, K = sn->gate_levels;
    if (!sn->n_gates || L < 1 || K < 1 || (long)L * K > SNAP_MAX_GATES) {
        message(c, in, sn->run_id && !config_is_dispatcher(&sn->cfg)
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
    HeatmapData hd = {"layer \\ shift", vals, L, K, NULL, NULL, clampi(d->gate_row, 0, L - 1),
                      clampi(d->gate_col, 0, K - 1)};
    heatmap_draw(c, in, &hd, caps);
}

static void gate_cell(Canvas *c, Rect r, Dashboard *d, const Snapshot *sn,
                      const CanvasCaps *caps)
{
    int L = sn->gate_layers, K = sn->gate_levels;
    int l = clampi(d->gate_row, 0, L > 0 ? L - 1 : 0), k = clampi(d->gate_col, 0, K > 0 ? K - 1 : 0);
    const GateStat *g = sn->n_gates ? gate_at(sn, l, k) : NULL;
    char title[64];
    if (g)
        snprintf(title, sizeof title, "layer %d, shift %d", l, 1 << k);
    else
        snprintf(title, sizeof title, "gate cell");
    canvas_box(c, r, title, 0, caps->unicode);
    Rect in = canvas_rect_inner(r);
    if (!g) {
        message(c, in, "arrows pick a cell: its distribution and history");
        return;
    }
    char line[96];
    snprintf(line, sizeof line, "mean %.3f  std %.3f  at step %ld", g->mean, g->std, g->step);
    canvas_text(c, in.x, in.y, in.w, line, UI_COLOR_DEFAULT, UI_ATTR_BOLD);
    int hw = clampi(in.w * 2 / 5, 12, 30);
    Rect hr = {in.x, in.y + 1, hw, in.h - 1}, pr = {in.x + hw + 1, in.y + 1, in.w - hw - 1,
                                                    in.h - 1};
    HistogramData hd = {"distribution", g->hist, GATE_HIST_BINS, 0, 1, UI_COLOR_SERIES1};
    histogram_draw(c, hr, &hd, caps);
    double *b = scratch(d, 2L * d->n_gate_hist + 1);
    if (!b)
        return;
    for (int i = 0; i < d->n_gate_hist; i++) {
        b[i] = (double)d->gate_hist[i].step;
        b[d->n_gate_hist + i] = d->gate_hist[i].value;
    }
    PlotSeries ps = {b, b + d->n_gate_hist, d->n_gate_hist, "mean by step",
                     UI_COLOR_SERIES2, PLOT_LINE};
    PlotData pd = {&ps, 1, "step", 0, 1, 0, 1};
    plot_draw(c, pr, &pd, caps);
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
        dash_views_wrap(c, in, "samples stream here during training; s samples now",
                        UI_COLOR_DIM, 1);
    else {
        char *safe = safetext_dup(text, SAFETEXT_KEEP_NEWLINES);  /* generated text: escaped */
        dash_views_wrap(c, in, safe ? safe : text, UI_COLOR_DEFAULT, 0);
        free(safe);
    }
}

void dash_views_training(Canvas *c, Rect r, Dashboard *d, const Snapshot *sn,
                         const CanvasCaps *caps, int focused)
{
    int lw = r.w * 55 / 100;
    Rect left = {r.x, r.y, lw, r.h}, right = {r.x + lw, r.y, r.w - lw, r.h};
    int sample_h = clampi(r.h / 3, 4, 12);
    Rect plots = {left.x, left.y, left.w, left.h - sample_h};
    if (plots.h >= 20) {
        int lh = plots.h * 3 / 5;
        plot_losses(c, (Rect){plots.x, plots.y, plots.w, lh}, d, sn, caps, 0);
        plot_losses(c, (Rect){plots.x, plots.y + lh, plots.w, plots.h - lh}, d, sn, caps, 1);
    } else {
        plot_losses(c, plots, d, sn, caps, d->show_ppl);
    }
    sample_pane(c, (Rect){left.x, plots.y + plots.h, left.w, sample_h}, d, sn, caps);
    int gh = clampi(sn->gate_layers + 5, 5, right.h - 6 > 5 ? right.h - 6 : 5);
    gates_heatmap(c, (Rect){right.x, right.y, right.w, gh}, d, sn, caps, focused);
    gate_cell(c, (Rect){right.x, right.y + gh, right.w, right.h - gh}, d, sn, caps);
}

/* ---- history view ---- */

static const TableColumn RUN_COLS[] = {
    {"id", 5, TABLE_RIGHT}, {"name", 0, TABLE_LEFT}, {"model", 13, TABLE_LEFT},
    {"status", 11, TABLE_LEFT}, {"steps", 7, TABLE_RIGHT}, {"best val", 10, TABLE_RIGHT},
    {"started", 11, TABLE_LEFT}};
#define N_RUN_COLS 7
#define CELL_LEN 72

static void run_cells(const RunRow *row, char (*out)[CELL_LEN])
{
    snprintf(out[0], CELL_LEN, "%ld", row->id);
    safetext_escape(out[1], CELL_LEN, row->name, 0);   /* stored text: escaped */
    snprintf(out[2], CELL_LEN, "%s", row->model);
    snprintf(out[3], CELL_LEN, "%s", row->status);
    snprintf(out[4], CELL_LEN, "%ld", row->last_step);
    if (isnan(row->best_val))
        snprintf(out[5], CELL_LEN, "-");
    else
        snprintf(out[5], CELL_LEN, "%.4f", row->best_val);
    double t = row->started > 0 ? row->started : row->created;
    time_t tt = (time_t)t;
    struct tm tm;
    if (t > 0 && localtime_r(&tt, &tm))
        strftime(out[6], CELL_LEN, "%m-%d %H:%M", &tm);
    else
        snprintf(out[6], CELL_LEN, "-");
}

static int is_marked(const Dashboard *d, long id)
{
    for (int i = 0; i < d->n_marked; i++)
        if (d->marked[i] == id)
            return 1;
    return 0;
}

static void runs_table(Canvas *c, Rect r, Dashboard *d, const CanvasCaps *caps, int focused)
{
    static const char *const sorts[] = {"best val", "recent", "model"};
    char title[400];
    snprintf(title, sizeof title, "runs: %d | sort %s%s%s%s | Space mark, Enter open, / "
             "filter, o sort", d->n_runs, sorts[d->sort], d->filter[0] ? " | filter \"" : "",
             d->filter, d->filter[0] ? "\"" : "");
    canvas_box(c, r, title, focused, caps->unicode);
    Rect in = canvas_rect_inner(r);
    int n = d->n_runs;
    if (n == 0) {
        message(c, in, d->filter[0] ? "no run matches the filter" : "no runs yet: `train` one");
        return;
    }
    int sel = clampi(d->run_sel, 0, n - 1), page = table_page_rows(in);
    int lo = clampi((d->run_scroll < sel - page ? d->run_scroll : sel - page), 0, n);
    int hi = clampi((d->run_scroll > sel ? d->run_scroll : sel) + page + 1, 0, n);
    const char **cells = calloc((size_t)n * N_RUN_COLS, sizeof *cells);
    char (*buf)[N_RUN_COLS][CELL_LEN] = malloc((size_t)(hi - lo + 1) * sizeof *buf);
    if (d->mark_cap < n) {
        unsigned char *m = realloc(d->mark_rows, (size_t)n);
        if (m)
            d->mark_rows = m, d->mark_cap = n;
    }
    if (cells && buf && d->mark_cap >= n) {
        for (int i = 0; i < n; i++)
            d->mark_rows[i] = (unsigned char)is_marked(d, d->runs[i].id);
        for (int i = lo; i < hi; i++) {
            run_cells(&d->runs[i], buf[i - lo]);
            for (int j = 0; j < N_RUN_COLS; j++)
                cells[(size_t)i * N_RUN_COLS + j] = buf[i - lo][j];
        }
        static const int sort_col[] = {5, 6, 2};
        TableData td = {RUN_COLS, N_RUN_COLS, cells, n, sel, d->mark_rows, UI_COLOR_SERIES3,
                        sort_col[d->sort], d->sort == DASH_SORT_RECENT, d->run_scroll};
        d->run_scroll = table_draw(c, in, &td, caps);
    }
    free(cells);
    free(buf);
}

void dash_views_history(Canvas *c, Rect r, Dashboard *d, const Snapshot *sn,
                        const CanvasCaps *caps, int focused)
{
    (void)sn;
    int th = clampi(r.h * 55 / 100, 6, r.h);
    runs_table(c, (Rect){r.x, r.y, r.w, th}, d, caps, focused);
    Rect pr = {r.x, r.y + th, r.w / 2, r.h - th};
    Rect cr = {r.x + r.w / 2, r.y + th, r.w - r.w / 2, r.h - th};
    if (pr.h < 3)
        return;
    char title[64];
    snprintf(title, sizeof title, "marked runs: loss | x %s", X_LABELS[d->x_axis]);
    canvas_box(c, pr, title, 0, caps->unicode);
    canvas_box(c, cr, "config diff of the marked runs", 0, caps->unicode);
    Rect pin = canvas_rect_inner(pr), cin = canvas_rect_inner(cr);
    if (!d->n_marked) {
        message(c, pin, "Space marks runs: their loss curves overlay here");
        message(c, cin, "and their differing settings show here");
        return;
    }
    double *b = scratch(d, curves_need(d) + 1);
    if (!b)
        return;
    PlotSeries ps[PLOT_MAX_SERIES];
    int n = add_curves(d, ps, 0, b, 0);
    PlotData pd = {ps, n, X_LABELS[d->x_axis], d->log_y, 0, 0, 0};
    plot_draw(c, pin, &pd, caps);
    dash_views_wrap(c, cin, d->compare ? d->compare : "", UI_COLOR_DEFAULT, 1);
}

/* ---- tokens view ---- */

static const char *tok_shade(float v, const CanvasCaps *caps, int *color)
{
    static const char *const u[5] = {" ", "░", "▒", "▓", "█"};
    static const char *const a[10] = {" ", ".", ":", "-", "=", "+", "*", "#", "%", "@"};
    v = v < 0 ? 0 : v > 1 ? 1 : v;
    int h = (int)(v * UI_N_HEAT_COLORS);
    *color = caps->colors ? UI_COLOR_HEAT0 + (h >= UI_N_HEAT_COLORS ? UI_N_HEAT_COLORS - 1 : h)
                          : 0;
    return caps->unicode ? u[(int)lround(v * 4)] : a[(int)lround(v * 9)];
}

static const char *tok_display(const char *t, const CanvasCaps *caps)
{
    /* tokenizer_token_text escapes control characters ("\\n") and doubles '\\' */
    if (!strcmp(t, "\\n"))
        return caps->unicode ? "↵" : "$";
    if (!strcmp(t, " "))
        return caps->unicode ? "␣" : "_";
    if (!strcmp(t, "\\t"))
        return caps->unicode ? "→" : ">";
    if (!strcmp(t, "\\\\"))
        return "\\";
    return t;
}

/* One token's column block: its text, then one shaded cell per level. */
static void token_block(Canvas *c, int x, int y, int bw, const DashTokens *t, int j,
                        const CanvasCaps *caps)
{
    canvas_text(c, x, y, bw, tok_display(t->text[j], caps), UI_COLOR_DEFAULT, UI_ATTR_BOLD);
    for (int k = 0; k < t->levels; k++) {
        float v = t->gates[((size_t)t->layer * t->n_tok + j) * t->levels + k];
        int color = UI_COLOR_DIM;
        const char *g = isnan(v) ? (caps->unicode ? "·" : ".") : tok_shade(v, caps, &color);
        for (int i = 0; i < bw; i++)
            canvas_put(c, x + i, y + 1 + k, g, color, 0);
    }
}

static void band_labels(Canvas *c, Rect in, int y, int levels)
{
    canvas_text(c, in.x, y, 8, "token", UI_COLOR_DIM, 0);
    for (int k = 0; k < levels; k++) {
        char lab[16];
        snprintf(lab, sizeof lab, "shift %d", 1 << k);
        canvas_text(c, in.x, y + 1 + k, 9, lab, UI_COLOR_DIM, 0);
    }
}

void dash_views_tokens(Canvas *c, Rect r, Dashboard *d, const CanvasCaps *caps, int focused)
{
    DashTokens *t = &d->tok;
    char title[160];
    snprintf(title, sizeof title, "per-token gates | layer %d of %d (Up/Down) | t: prompt",
             t->layer, t->layers);
    canvas_box(c, r, title, focused, caps->unicode);
    Rect in = canvas_rect_inner(r);
    if (t->error[0] || t->n_tok == 0 || !t->gates) {
        message(c, in, t->error[0] ? t->error : "t types a prompt; its per-token gates show here");
        return;
    }
    int wide = 0;
    for (int j = 0; j < t->n_tok; j++)
        wide |= canvas_utf8_width(tok_display(t->text[j], caps)) > 1;
    int x0 = in.x + 10, x = x0, y = in.y, bottom = in.y + in.h - 2;
    if (y + t->levels <= bottom)
        band_labels(c, in, y, t->levels);
    for (int j = 0; j < t->n_tok && y + t->levels <= bottom; j++) {
        int bw = canvas_utf8_width(tok_display(t->text[j], caps));
        bw = clampi(bw, 1, in.w - 10);
        if (x + bw > in.x + in.w) {
            x = x0;
            y += t->levels + 2;
            if (y + t->levels > bottom)
                break;
            band_labels(c, in, y, t->levels);
        }
        token_block(c, x, y, bw, t, j, caps);
        x += bw + wide;
    }
    char legend[256];
    snprintf(legend, sizeof legend, "%s gate 0..1  %s masked  weights: %s",
             caps->unicode ? "░▒▓█" : ".:=*#@", caps->unicode ? "·" : ".", t->source);
    canvas_text_fit(c, in.x, in.y + in.h - 1, in.w, legend, UI_COLOR_DIM, 0, caps->unicode);
}
