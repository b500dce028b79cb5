/* dash_keys.c — the dashboard's key handling (see dash_keys.h): the actions of the key
 * table (views, focus, run control, plot settings, cursors, marks, filter, prompt) and
 * feeding the line editors. Not the bindings (dashboard.c's KEYS table) and not the
 * loop (dash_term.c). */
#define NCURSES_WIDECHAR 1
#include "dash_keys.h"

#include "dash_data.h"
#include "err.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

/* ---- actions ---- */

static void set_view(DashTerm *t, int v)
{
    t->d->view = v;
    if (v == DASH_VIEW_HISTORY)
        dash_term_reload_runs(t);
    else if (v == DASH_VIEW_TOKENS)
        dash_term_tokens(t);
}

static void move_cursor(DashTerm *t, int dx, int dy)
{
    Dashboard *d = t->d;
    if (d->focus == DASH_FOCUS_OUTPUT) {
        textpane_scroll(d->out, -dy);
    } else if (d->view == DASH_VIEW_TRAIN) {
        d->gate_row += dy, d->gate_col += dx;
        dash_term_gate_history(t);   /* clamps to the heatmap */
    } else if (d->view == DASH_VIEW_HISTORY) {
        d->run_sel += dy;
        d->run_sel = d->run_sel >= d->n_runs ? d->n_runs - 1 : d->run_sel;
        d->run_sel = d->run_sel < 0 ? 0 : d->run_sel;
    } else if (d->view == DASH_VIEW_TOKENS && d->tok.layers > 0) {
        d->tok.layer = (d->tok.layer + dy + d->tok.layers) % d->tok.layers;
    }
}

static void page(DashTerm *t, int dir)
{
    Dashboard *d = t->d;
    if (d->focus == DASH_FOCUS_VIEW && d->view == DASH_VIEW_HISTORY)
        move_cursor(t, 0, dir * 10);
    else
        textpane_page(d->out, -dir);
}

static void mark_run(DashTerm *t)
{
    Dashboard *d = t->d;
    char err[LM_ERR_LEN];
    RunStore *st = session_store(t->s);
    if (st && d->run_sel < d->n_runs &&
        dash_data_toggle_mark(d, st, d->runs[d->run_sel].id, err))
        dash_term_out(t, UI_COLOR_ERROR, "error: %s", err);
}

static void open_prompt(DashTerm *t, int mode, const char *text)
{
    Dashboard *d = t->d;
    d->prompt_mode = mode;
    char buf[600];
    size_t o = 0;
    for (const char *p = text; *p && o + 3 < sizeof buf; p++) /* show newlines as \n */
        if (*p == '\n')
            buf[o++] = '\\', buf[o++] = 'n';
        else
            buf[o++] = *p;
    buf[o] = 0;
    editor_set_line(&d->aux, buf);
}

static void action(DashTerm *t, DashAction a)
{
    Dashboard *d = t->d;
    char line[64];
    switch (a) {
    case DA_HELP: d->help = 1; break;
    case DA_FOCUS_NEXT: d->focus = (d->focus + 1) % DASH_N_FOCUS; break;
    case DA_FOCUS_PREV: d->focus = (d->focus + DASH_N_FOCUS - 1) % DASH_N_FOCUS; break;
    case DA_FOCUS_VIEW: d->focus = DASH_FOCUS_VIEW; break;
    case DA_VIEW_TRAIN: set_view(t, DASH_VIEW_TRAIN); break;
    case DA_VIEW_HISTORY: set_view(t, DASH_VIEW_HISTORY); break;
    case DA_VIEW_TOKENS: set_view(t, DASH_VIEW_TOKENS); break;
    case DA_QUIT:
        if (dash_term_run_active(t))
            d->confirm_quit = 1;
        else
            dash_term_quit(t);
        break;
    case DA_PAUSE:
        snprintf(line, sizeof line, "%s%s", dash_term_sweep_active(t) ? "sweep " : "",
                 t->snap.status == TRAINER_PAUSED ? "resume" : "pause");
        dash_term_command(t, line);
        break;
    case DA_SAMPLE: dash_term_command(t, "sample tokens=200"); break;
    case DA_STOP:
        dash_term_command(t, dash_term_sweep_active(t) ? "sweep stop" : "stop");
        break;
    case DA_LOG_Y: d->log_y = !d->log_y; break;
    case DA_X_AXIS: d->x_axis = (d->x_axis + 1) % 3; break;
    case DA_PPL: d->show_ppl = !d->show_ppl; break;
    case DA_UP: move_cursor(t, 0, -1); break;
    case DA_DOWN: move_cursor(t, 0, 1); break;
    case DA_LEFT: move_cursor(t, -1, 0); break;
    case DA_RIGHT: move_cursor(t, 1, 0); break;
    case DA_PAGE_UP: page(t, -1); break;
    case DA_PAGE_DOWN: page(t, 1); break;
    case DA_END: textpane_scroll_end(d->out); break;
    case DA_MARK: mark_run(t); break;
    case DA_OPEN:
        if (d->run_sel < d->n_runs) {
            snprintf(line, sizeof line, "open %ld", d->runs[d->run_sel].id);
            dash_term_command(t, line);
        }
        break;
    case DA_FILTER: open_prompt(t, DASH_PROMPT_FILTER, d->filter); break;
    case DA_SORT: d->sort = (d->sort + 1) % DASH_N_SORTS; dash_term_reload_runs(t); break;
    case DA_PROMPT: open_prompt(t, DASH_PROMPT_TOKENS, d->tok.prompt); break;
    case DA_REDRAW: clearok(curscr, TRUE); break;
    case DA_NONE: break;
    }
}

/* ---- the line editors ---- */

/* A dashboard key as a LineEditor key, -1 for none. */
static int editor_code(int key)
{
    static const int map[][2] = {
        {KEY_LEFT, EDITOR_KEY_LEFT}, {KEY_RIGHT, EDITOR_KEY_RIGHT}, {KEY_UP, EDITOR_KEY_UP},
        {KEY_DOWN, EDITOR_KEY_DOWN}, {KEY_HOME, EDITOR_KEY_HOME}, {KEY_END, EDITOR_KEY_END},
        {KEY_DC, EDITOR_KEY_DELETE}, {KEY_BACKSPACE, EDITOR_KEY_BACKSPACE},
        {KEY_ENTER, EDITOR_KEY_ENTER}};
    if (key & DASH_KEY_FN(0)) {
        for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
            if (DASH_KEY_FN(map[i][0]) == key)
                return map[i][1];
        return -1;
    }
    return key == '\n' ? EDITOR_KEY_ENTER : key == 8 ? EDITOR_KEY_BACKSPACE : key;
}

static void complete(DashTerm *t)
{
    LineEditor *e = &t->d->ed;
    int n, nc = 0, ws = 0;
    CmdCompleter cc = {session_commands(&n), 0, session_complete, t->s};
    cc.n = n;
    char **cands = NULL;
    if (cmdtable_completer(&cc, e->buf, e->cursor, &cands, &nc, &ws) != LM_OK)
        return;
    if (editor_complete_apply(e, ws, cands, nc)) {
        char list[2048];
        size_t o = 0;
        for (int i = 0; i < nc && o + 2 < sizeof list; i++)
            o += (size_t)snprintf(list + o, sizeof list - o, "%s  ", cands[i]);
        dash_term_out(t, UI_COLOR_DIM, "%s", list);
    }
    cmdtable_free_cands(cands, nc);
}

static void submit_command(DashTerm *t)
{
    Dashboard *d = t->d;
    char line[EDITOR_MAX_LINE], err[LM_ERR_LEN];
    snprintf(line, sizeof line, "%s", d->ed.buf);
    history_add(&d->hist, line);
    editor_reset(&d->ed);
    history_save(&d->hist, t->hist_path, err);
    textpane_scroll_end(d->out);
    if (line[strspn(line, " \t")])
        dash_term_command(t, line);
    if (t->s->quit)
        dash_term_quit(t);
}

static void submit_prompt(DashTerm *t)
{
    Dashboard *d = t->d;
    int mode = d->prompt_mode;
    d->prompt_mode = DASH_PROMPT_CMD;
    d->focus = DASH_FOCUS_VIEW;
    if (mode == DASH_PROMPT_FILTER) {
        snprintf(d->filter, sizeof d->filter, "%.*s", (int)sizeof d->filter - 1, d->aux.buf);
        dash_term_reload_runs(t);
        return;
    }
    size_t o = 0;  /* \n typed as two characters is a newline */
    for (const char *p = d->aux.buf; *p && o + 1 < sizeof d->tok.prompt; p++)
        if (p[0] == '\\' && p[1] == 'n')
            d->tok.prompt[o++] = '\n', p++;
        else
            d->tok.prompt[o++] = *p;
    d->tok.prompt[o] = 0;
    dash_term_tokens(t);
}

static void edit(DashTerm *t, int key)
{
    Dashboard *d = t->d;
    int code = editor_code(key);
    if (d->prompt_mode != DASH_PROMPT_CMD) {
        if (key == 27)
            d->prompt_mode = DASH_PROMPT_CMD;
        else if (code >= 0 && editor_key(&d->aux, code) == EDIT_SUBMIT)
            submit_prompt(t);
        return;
    }
    if (code < 0)
        return;
    switch (editor_key(&d->ed, code)) {
    case EDIT_SUBMIT: submit_command(t); break;
    case EDIT_COMPLETE: complete(t); break;
    case EDIT_CLEAR: clearok(curscr, TRUE); break;
    default: break;
    }
}

/* One key: overlays first, then the key table, then the line editor. */
void dash_keys_press(DashTerm *t, int key)
{
    Dashboard *d = t->d;
    t->dirty = 1;
    if (key == DASH_KEY_FN(KEY_RESIZE))
        return;
    if (d->help) {
        d->help = 0;
        return;
    }
    if (d->confirm_quit) {
        d->confirm_quit = 0;
        if (key == 'y' || key == 'Y')
            dash_term_quit(t);
        return;
    }
    DashAction a = dashboard_key_action(d, key);
    if (a != DA_NONE) {
        action(t, a);
        return;
    }
    if (d->focus != DASH_FOCUS_CMD && d->prompt_mode == DASH_PROMPT_CMD) {
        if (key < 32 || key == 127 || (key & DASH_KEY_FN(0)))
            return;
        d->focus = DASH_FOCUS_CMD;  /* typing a command from a pane */
    }
    edit(t, key == '\r' ? '\n' : key);
}

