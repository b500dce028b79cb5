/* dash_render.c — a whole dashboard frame (see dash_render.h): the status bar, the
 * view tabs, the current view (through the view table), the output pane, the command
 * line, the help and quit overlays, the too-small message. Not a widget library: it only
 * lays them out; not the views (view_*.c) and not the curses loop (dash_term.c). */
#include "dash_render.h"
#include "commands.h"

#include "dash_draw.h"
#include "dash_keymap.h"
#include "statusbar.h"
#include "views.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the status bar ---- */

static void fmt_count(char *b, size_t n, double v)
{
    if (v >= 1e9)
        snprintf(b, n, "%.2fG", v / 1e9);
    else if (v >= 1e6)
        snprintf(b, n, "%.2fM", v / 1e6);
    else if (v >= 1e4)
        snprintf(b, n, "%.1fk", v / 1e3);
    else
        snprintf(b, n, "%.0f", v);
}

static int bar_state(const Snapshot *sn, const char **text)
{
    *text = NULL;
    if (!sn->run_id)
        return STATUSBAR_IDLE;
    switch (sn->status) {
    case TRAINER_RUNNING: return STATUSBAR_TRAINING;
    case TRAINER_EVALUATING: *text = "EVALUATING"; return STATUSBAR_TRAINING;
    case TRAINER_PAUSED: return STATUSBAR_PAUSED;
    case TRAINER_FINISHED: return STATUSBAR_FINISHED;
    case TRAINER_STOPPED:   /* the store's word: an interrupted run is not a stopped one */
        *text = sn->interrupted ? "INTERRUPTED" : "STOPPED";
        return STATUSBAR_FINISHED;
    case TRAINER_DIVERGED: return STATUSBAR_DIVERGED;
    case TRAINER_FAILED: return STATUSBAR_FAILED;
    default: *text = "STARTING"; return STATUSBAR_TRAINING;
    }
}

static void status_line(Canvas *c, int W, const Dashboard *d, const Snapshot *sn,
                        const CanvasCaps *caps)
{
    char run[96], step[48], ep[16], tok[16], tps[16], lr[16], el[16], eta[16], val[16],
         model[64];
    const StepMetric *m = &sn->last;
    snprintf(model, sizeof model, "%s%s%s", sn->cfg.model,   /* bf16 said (issue 33 item 11) */
             strcmp(sn->cfg.precision, "fp32") ? " " : "",
             strcmp(sn->cfg.precision, "fp32") ? sn->cfg.precision : "");
    snprintf(run, sizeof run, "#%ld %s%s", sn->run_id, sn->run_name,
             !d->from_store ? "" : trainer_is_done(sn->status) ? " (stored)" : " (followed)");
    snprintf(step, sizeof step, "%ld/%ld", m->step, sn->total_steps ? sn->total_steps
                                                                     : sn->cfg.steps);
    snprintf(ep, sizeof ep, "%.2f", m->epoch);
    fmt_count(tok, sizeof tok, (double)m->tokens);
    double secs, speed;   /* its own seconds (a fork's since its fork point) and speed */
    snapshot_own_work(sn, &secs, &speed);
    if (sn->status == TRAINER_PAUSED)   /* no old speed on a paused run */
        snprintf(tps, sizeof tps, "paused");
    else   /* an ended run's speed is its own mean (as its end said), not its last window */
        fmt_count(tps, sizeof tps, trainer_is_done(sn->status) ? speed : m->tokens_per_s);
    snprintf(lr, sizeof lr, "%.2e", m->lr);
    session_fmt_duration(el, sizeof el, secs);
    int live = sn->status == TRAINER_RUNNING || sn->status == TRAINER_EVALUATING;
    session_fmt_duration(eta, sizeof eta, live ? metric_eta(m->step, sn->total_steps, m->elapsed,
                                                            sn->cfg.time_budget) : NAN);
    snprintf(val, sizeof val, "%.4f", sn->n_val ? sn->last_eval.loss : NAN);
    StatusField f[16];
    int n = 0;
    if (sn->run_id) {
        f[n++] = (StatusField){NULL, run, 9, UI_COLOR_ACCENT, 0};
        f[n++] = (StatusField){"model", model, 7, 0, 0};
        f[n++] = (StatusField){"data", sn->cfg.data, 4, 0, 0};
        f[n++] = (StatusField){"step", step, 10, 0, 0};
        f[n++] = (StatusField){"epoch", ep, 2, 0, 0};
        f[n++] = (StatusField){"tokens", tok, 3, 0, 0};
        f[n++] = (StatusField){"tok/s", tps, 8, 0, 0};
        f[n++] = (StatusField){"lr", lr, 7, 0, 0};   /* kept with val (issue 27) */
        f[n++] = (StatusField){"time", el, 5, 0, 0};
        f[n++] = (StatusField){"ETA", eta, 6, 0, 0};
        if (sn->n_val)
            f[n++] = (StatusField){"val", val, 7, 0, 0};
        if (d->alert_last[0])   /* the newest alert of this run (dash_alerts.c) */
            f[n++] = (StatusField){"alert", d->alert_last, 9, UI_COLOR_ERROR, 0};
        if (d->opened[0])   /* the loaded weights' step, not the run's last */
            f[n++] = (StatusField){"open", d->opened, 9, UI_COLOR_ACCENT, 0};
    } else {
        f[n++] = (StatusField){"experiment", d->experiment[0] ? d->experiment : "-", 9,
                               UI_COLOR_ACCENT, 0};
        f[n++] = (StatusField){"model", model, 7, 0, 0};
        f[n++] = (StatusField){"data", sn->cfg.data, 5, 0, 0};
        f[n++] = (StatusField){"steps", step + strcspn(step, "/") + 1, 4, 0, 0};
        f[n++] = (StatusField){NULL, "type `train` to start", 8, UI_COLOR_DIM, 0};
    }
    if (d->sweep[0])
        f[n++] = (StatusField){"sweep", d->sweep, 8, UI_COLOR_ACCENT, 0};
    if (d->busy)
        f[n++] = (StatusField){NULL, "[command running]", 9, UI_COLOR_WARN, 1};
    const char *text;
    StatusBarData sd = {bar_state(sn, &text), text, f, n};
    statusbar_draw(c, (Rect){0, 0, W, 1}, &sd, caps);
}

/* ---- tabs, output, command line ---- */

/* " N name " with the name cut to letters (" N " when 0), into buf. */
static const char *tab_name(char *buf, size_t cap, int i, int letters)
{
    if (letters > 0) snprintf(buf, cap, " %d %.*s ", i + 1, letters, views_get(i)->name);
    else snprintf(buf, cap, " %d ", i + 1);
    return buf;
}

/* The tab line: the views, then on the right which part has the keys (a badge) and
 * what the keys do there. */
static void tabs_line(Canvas *c, int W, const Dashboard *d, const CanvasCaps *caps)
{
    static const char *const badges[] = {" TYPING ", " VIEW KEYS ", " OUTPUT KEYS "};
    static const char *const hints[] = {
        "letters type a command | Esc: view keys | F1 help",
        "arrows Space Enter / = * > ^ | a letter types a command",
        "arrows PgUp PgDn End | a letter types a command"};
    /* too narrow for every name and the widest badge: the other views' first 3 letters,
     * then their first letter, then their number alone (eight views at 80 columns need 3
     * or 1); sized by the widest badge so the names do not change with the focus */
    static const int levels[] = {40, 3, 1, 0};
    int view_line = d->prompt_mode != DASH_PROMPT_CMD;
    const char *badge = view_line ? " TYPING " : badges[d->focus];
    const char *h = view_line ? "Enter applies | Esc cancels" : hints[d->focus];
    int x = 0, bw = canvas_utf8_width(badge), hw = canvas_utf8_width(h), letters = 0, widest = 0;
    for (int b = 0; b < DASH_N_FOCUS; b++)
        if (canvas_utf8_width(badges[b]) > widest) widest = canvas_utf8_width(badges[b]);
    char name[64];
    for (int l = 0; l < (int)(sizeof levels / sizeof *levels); l++) {
        int full = 0;
        for (int i = 0; i < views_count(); i++)
            full += canvas_utf8_width(tab_name(name, sizeof name, i, i == d->view ? 40
                                                                         : levels[l])) + 1;
        letters = levels[l];
        if (full + widest + 1 < W) break;   /* any badge fits (as placed below) */
    }
    for (int i = 0; i < views_count(); i++) {
        int on = i == d->view;
        tab_name(name, sizeof name, i, on ? 40 : letters);
        x += canvas_text(c, x, 1, W - x, name, on ? UI_COLOR_ACCENT : UI_COLOR_DIM,
                         on ? UI_ATTR_REVERSE | UI_ATTR_BOLD : 0);
        x += canvas_text(c, x, 1, W - x, " ", 0, 0);
    }
    if (x + bw + hw + 2 < W)
        canvas_text(c, W - hw - 1, 1, hw, h, UI_COLOR_DIM, 0);
    else
        hw = -1;
    if (x + bw + hw + 2 < W)
        canvas_text(c, W - hw - bw - 2, 1, bw, badge, UI_COLOR_ACCENT,
                    UI_ATTR_REVERSE | UI_ATTR_BOLD);
    (void)caps;
}

static void output_pane(Canvas *c, Rect r, Dashboard *d, const CanvasCaps *caps)
{
    int focused = d->focus == DASH_FOCUS_OUTPUT;
    int col = focused ? UI_COLOR_ACCENT : UI_COLOR_DIM;
    canvas_fill(c, (Rect){r.x, r.y, r.w, 1}, caps->unicode ? "─" : "-", col, 0);
    canvas_text(c, r.x + 2, r.y, r.w - 4, " output ", col, focused ? UI_ATTR_BOLD : 0);
    char info[64];
    int off = textpane_offset(d->out);
    if (off > 0)
        snprintf(info, sizeof info, " scrolled back %d | End follows ", off);
    else
        snprintf(info, sizeof info, " PgUp/PgDn scroll | F9 %s ",
                 d->out_size == DASH_OUT_FULL ? "back" : "larger");
    int iw = canvas_utf8_width(info);
    canvas_text(c, r.x + r.w - iw - 2, r.y, iw, info, col, 0);
    textpane_draw(c, (Rect){r.x, r.y + 1, r.w, r.h - 1}, d->out, caps);
}

static void command_line(Canvas *c, int y, int W, Dashboard *d)
{
    const char *p = d->prompt_mode == DASH_PROMPT_CMD ? "lmlab> " : d->prompt_label;
    int focused = d->focus == DASH_FOCUS_CMD || d->prompt_mode != DASH_PROMPT_CMD;
    if (d->busy) {
        canvas_text(c, 0, y, W, "... running (Ctrl-C interrupts)", UI_COLOR_WARN, 0);
        return;
    }
    int pw = canvas_text(c, 0, y, W, p, focused ? UI_COLOR_ACCENT : UI_COLOR_DIM,
                         focused ? UI_ATTR_BOLD : 0);
    LineEditor *e = d->prompt_mode == DASH_PROMPT_CMD ? &d->ed : &d->aux;
    char buf[4 * 512 + 1];
    int cc = 0, fw = W - pw - 1 > 512 ? 512 : W - pw - 1;
    editor_render(e, fw, buf, sizeof buf, &cc);
    /* a selected pre-filled value shows in reverse video: typing replaces it */
    int tw = canvas_text(c, pw, y, fw, buf, UI_COLOR_DEFAULT, e->selected ? UI_ATTR_REVERSE : 0);
    if (e->selected && pw + tw + 2 < W)
        canvas_text(c, pw + tw + 1, y, W - pw - tw - 1, "(type to replace, arrows to edit)",
                    UI_COLOR_DIM, 0);
    if (d->prompt_mode == DASH_PROMPT_CMD && e->cursor == e->len) {
        int n;
        const Command *t = session_commands(&n);
        const char *hint = e->len ? cmdtable_hint(t, n, e->buf) : NULL;
        int gap = e->len && e->buf[e->len - 1] != ' ';
        if (hint && pw + tw + gap + 1 < W)
            canvas_text(c, pw + tw + gap, y, W - pw - tw - gap, hint, UI_COLOR_DIM, 0);
        else if (!e->len && !focused)
            canvas_text(c, pw, y, W - pw, "(view keys active: a letter types a command)", UI_COLOR_DIM,
                        0);
    }
    if (focused)
        d->cursor_x = pw + cc, d->cursor_y = y;
}

/* ---- overlays ---- */

static void overlay_box(Canvas *c, Rect r, const char *title, const CanvasCaps *caps)
{
    canvas_fill(c, r, " ", 0, 0);
    canvas_box(c, r, title, 1, caps->unicode);
}

#define HELP_MAX_LINES 96

/* Adds "label<TAB>help" to lines, or the label to the previous line with the same help
 * (once: the grid's four arrows are one "arrows"). */
static void help_add(char (*lines)[128], int *n, const char *label, const char *help)
{
    if (*n >= HELP_MAX_LINES)
        return;
    if (*n) {
        size_t l = strcspn(lines[*n - 1], "\t");
        if (!strcmp(lines[*n - 1] + l + 1, help)) {
            char rest[128], have[128];
            snprintf(have, sizeof have, " %.*s ", (int)l, lines[*n - 1]);
            char want[64];
            snprintf(want, sizeof want, " %s ", label);
            if (strstr(have, want))
                return;
            snprintf(rest, sizeof rest, "%s", lines[*n - 1] + l);
            snprintf(lines[*n - 1] + l, sizeof lines[0] - l, " %s%s", label, rest);
            return;
        }
    }
    snprintf(lines[(*n)++], sizeof lines[0], "%s\t%s", label, help);
}

/* The help lines: the global keys and each view's own keys (the view switches are
 * views_text's, under them). */
static int help_lines(char (*lines)[128])
{
    int n = 0, nk;
    const DashKey *k = dash_keymap_keys(&nk);
    for (int i = 0; i < nk; i++)
        help_add(lines, &n, k[i].label, k[i].help);
    for (int i = 0; i < views_count(); i++)
        for (int j = 0; j < views_get(i)->n_keys; j++)
            help_add(lines, &n, views_get(i)->keys[j].label, views_get(i)->keys[j].help);
    return n;
}

/* The view switches ("F2 1 training view, F3 2 history view, 4 sweep view, ...") in
 * lines of at most w bytes, broken between entries (eight views take 16 one-line
 * entries otherwise: the overlay would not fit 80x24). Returns the lines used (<= max). */
static int views_text(char (*out)[160], int max, int w)
{
    int n = 0;
    out[0][0] = 0;
    for (int i = 0; i < views_count() && n < max; i++) {
        char e[48];
        if (dash_keymap_view_fkey(i))
            snprintf(e, sizeof e, "F%d %d %s view", i + 2, i + 1, views_get(i)->name);
        else
            snprintf(e, sizeof e, "%d %s view", i + 1, views_get(i)->name);
        size_t have = strlen(out[n]);
        if (have && (int)(have + 2 + strlen(e)) > w && ++n < max) out[n][0] = 0, have = 0;
        if (n < max)
            snprintf(out[n] + have, 160 - have, "%s%s", have ? ", " : "", e);
    }
    return n < max ? n + 1 : max;
}

static void help_overlay(Canvas *c, int W, int H, const CanvasCaps *caps)
{
    char lines[HELP_MAX_LINES][128], vt[4][160];
    int n = help_lines(lines);
    int cols = n + 12 > H - 2 ? 2 : 1, rows = (n + cols - 1) / cols;
    int bw = cols == 2 ? (W - 4 < 100 ? W - 4 : 100) : (W - 4 < 78 ? W - 4 : 78);
    int nv = views_text(vt, 4, bw - 4 < 158 ? bw - 4 : 158);
    int foot = rows + nv + 6 <= H;   /* the three lines below the keys, when they fit */
    int bh = foot ? rows + nv + 6 : rows + nv + 2 < H ? rows + nv + 2 : H;
    Rect r = {(W - bw) / 2, (H - bh) / 2, bw, bh};
    overlay_box(c, r, "keys | any key closes", caps);
    int cw = (bw - 2) / cols;
    for (int i = 0; i < n; i++) {
        int x = r.x + 2 + (i / rows) * cw, y = r.y + 1 + i % rows;
        size_t l = strcspn(lines[i], "\t");
        lines[i][l] = 0;
        canvas_text(c, x, y, 11, lines[i], UI_COLOR_ACCENT, UI_ATTR_BOLD);
        canvas_text_fit(c, x + 11, y, cw - 12, lines[i] + l + 1, UI_COLOR_DEFAULT, 0,
                        caps->unicode);
    }
    for (int i = 0; i < nv && r.y + 1 + rows + i < r.y + bh - 1; i++)
        canvas_text_fit(c, r.x + 2, r.y + 1 + rows + i, bw - 4, vt[i], UI_COLOR_DEFAULT, 0,
                        caps->unicode);
    const char *foot_text[] = {
        "Letters always type a command (from a pane they move the focus to the",
        "command line first). Esc/Tab focus the view: the other keys above act",
        "there; 1 2 3 ? also on an empty line. Ctrl-C cancels the line."};
    for (int i = 0; foot && i < 3; i++)
        canvas_text_fit(c, r.x + 2, r.y + bh - 4 + i, bw - 4, foot_text[i], UI_COLOR_DIM, 0,
                        caps->unicode);
}

static void confirm_overlay(Canvas *c, int W, int H, const Dashboard *d, const Snapshot *sn,
                            const CanvasCaps *caps)
{
    int quit = d->confirm == DASH_CONFIRM_QUIT;
    Rect r = {(W - 56) / 2, (H - 5) / 2, 56, 5};
    if (d->confirm == DASH_CONFIRM_CMD) {   /* a view's question */
        overlay_box(c, r, d->confirm_cmd, caps);
        canvas_text(c, r.x + 2, r.y + 1, r.w - 4, d->confirm_text[0], UI_COLOR_WARN, UI_ATTR_BOLD);
        canvas_text(c, r.x + 2, r.y + 2, r.w - 4, d->confirm_text[1], UI_COLOR_WARN, UI_ATTR_BOLD);
        canvas_text(c, r.x + 2, r.y + 3, r.w - 4, "y: do it    any other key: leave it", 0, 0);
        return;
    }
    overlay_box(c, r, quit ? "quit" : "stop", caps);
    char line[96];
    if (d->sweep[0])
        snprintf(line, sizeof line, "Sweep %.40s is running. Stop it", d->sweep);
    else
        snprintf(line, sizeof line, "Run #%ld is training. Stop it (checkpointed and", sn->run_id);
    canvas_text(c, r.x + 2, r.y + 1, r.w - 4, line, UI_COLOR_WARN, UI_ATTR_BOLD);
    snprintf(line, sizeof line, "%s%s", d->sweep[0] ? "(resumable: `sweep resume ID`)"
             : "recorded)", quit ? " and quit?" : "?");
    canvas_text(c, r.x + 2, r.y + 2, r.w - 4, line, UI_COLOR_WARN, UI_ATTR_BOLD);
    canvas_text(c, r.x + 2, r.y + 3, r.w - 4, quit ? "y: stop and quit    any other key: stay"
                : "y: stop the run    any other key: keep training", 0, 0);
}

static void too_small(Canvas *c, int W, int H)
{
    char msg[128];
    snprintf(msg, sizeof msg, "terminal too small (need %dx%d, have %dx%d)", DASH_MIN_W,
             DASH_MIN_H, W, H);
    int w = canvas_utf8_width(msg);
    if (w <= W)
        canvas_text(c, (W - w) / 2, H / 2, w, msg, UI_COLOR_WARN, UI_ATTR_BOLD);
    else
        dash_draw_wrap(c, (Rect){0, 0, W, H}, "too small (80x24)", UI_COLOR_WARN, 1);
}

void dash_render(Canvas *c, Dashboard *d, const Snapshot *sn, const CanvasCaps *caps)
{
    canvas_clear(c);
    int W = canvas_width(c), H = canvas_height(c);
    d->cursor_x = d->cursor_y = -1;
    if (W < DASH_MIN_W || H < DASH_MIN_H) {
        too_small(c, W, H);
        return;
    }
    status_line(c, W, d, sn, caps);
    tabs_line(c, W, d, caps);
    int out_h = d->out_size == DASH_OUT_FULL ? H - 3
              : d->out_size == DASH_OUT_LARGE ? (H - 3) / 2
              : H < 30 ? 5 : H / 4 + 1;
    Rect main = {0, 2, W, H - 3 - out_h};
    int vf = d->focus == DASH_FOCUS_VIEW && d->prompt_mode == DASH_PROMPT_CMD;
    if (main.h > 0)
        views_get(d->view)->draw(c, main, d, sn, caps, vf);
    output_pane(c, (Rect){0, H - 1 - out_h, W, out_h}, d, caps);
    command_line(c, H - 1, W, d);
    if (d->help)
        help_overlay(c, W, H, caps);
    else if (d->confirm)
        confirm_overlay(c, W, H, d, sn, caps);
    if (d->help || d->confirm)
        d->cursor_x = d->cursor_y = -1;
}
