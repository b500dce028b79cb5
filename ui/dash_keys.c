/* dash_keys.c — the dashboard's key handling (see dash_keys.h): the global actions
 * (views, focus, run control, plot settings, output scrolling), handing a view its keys,
 * and feeding the line editors. Not the bindings (dash_keymap.c, view_*.c) and not the
 * loop (dash_term.c): it reaches the loop only through the DashCtx. */
#define NCURSES_WIDECHAR 1
#include "dash_keys.h"
#include "commands.h"

#include "dash_keymap.h"
#include "err.h"
#include "views.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

/* ---- actions ---- */

static void set_view(DashCtx *x, int v) { views_switch(x, v); }

/* Every way to quit (F10, `quit`, Ctrl-D on an empty line) comes here: while a run or
 * a sweep trains it asks first; otherwise it quits. */
static void request_quit(DashCtx *x)
{
    if (dash_view_run_active(x))
        x->d->confirm = DASH_CONFIRM_QUIT;
    else
        x->quit(x->loop);
}

/* A destructive key asks first (when there is something to stop). */
static void request_stop(DashCtx *x)
{
    if (dash_view_run_active(x))
        x->d->confirm = DASH_CONFIRM_STOP;
    else   /* `stop` says why not: nothing trains, or whose run is on screen and how */
        x->command(x->loop, "stop");
}

static void action(DashCtx *x, DashAction a, int arg)
{
    Dashboard *d = x->d;
    char line[64];
    switch (a) {
    case DA_HELP: d->help = 1; break;
    case DA_FOCUS_NEXT: d->focus = (d->focus + 1) % DASH_N_FOCUS; break;
    case DA_FOCUS_PREV: d->focus = (d->focus + DASH_N_FOCUS - 1) % DASH_N_FOCUS; break;
    case DA_FOCUS_VIEW: d->focus = DASH_FOCUS_VIEW; break;
    case DA_VIEW: set_view(x, arg); break;
    case DA_VIEW_KEY: views_get(d->view)->on_key(x, arg); break;
    case DA_QUIT: request_quit(x); break;
    case DA_PAUSE:
        snprintf(line, sizeof line, "%s%s", dash_view_sweep_active(x->s) ? "sweep " : "",
                 x->snap->status == TRAINER_PAUSED ? "resume" : "pause");
        x->command(x->loop, line);
        break;
    case DA_SAMPLE: x->command(x->loop, "sample tokens=200"); break;
    case DA_STOP: request_stop(x); break;
    case DA_LOG_Y: d->log_y = !d->log_y; break;
    case DA_X_AXIS: d->x_axis = (d->x_axis + 1) % 3; break;
    case DA_PPL: d->show_ppl = !d->show_ppl; break;
    case DA_UP: textpane_scroll(d->out, 1); break;
    case DA_DOWN: textpane_scroll(d->out, -1); break;
    case DA_PAGE_UP: textpane_page(d->out, 1); break;
    case DA_PAGE_DOWN: textpane_page(d->out, -1); break;
    case DA_END: textpane_scroll_end(d->out); break;
    case DA_REDRAW: clearok(curscr, TRUE); break;
    case DA_OUTPUT_SIZE: d->out_size = (d->out_size + 1) % DASH_N_OUT_SIZES; break;
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

static void complete(DashCtx *x)
{
    LineEditor *e = &x->d->ed;
    int n, nc = 0, ws = 0;
    CmdCompleter cc = {session_commands(&n), 0, session_complete, x->s};
    cc.n = n;
    char **cands = NULL;
    if (cmdtable_completer(&cc, e->buf, e->cursor, &cands, &nc, &ws) != LM_OK)
        return;
    if (editor_complete_apply(e, ws, cands, nc)) {
        char list[2048];
        size_t o = 0;
        for (int i = 0; i < nc && o + 2 < sizeof list; i++)
            o += (size_t)snprintf(list + o, sizeof list - o, "%s  ", cands[i]);
        dash_view_out(x, UI_COLOR_DIM, "%s", list);
    }
    cmdtable_free_cands(cands, nc);
}

static void submit_command(DashCtx *x)
{
    Dashboard *d = x->d;
    char line[EDITOR_MAX_LINE], err[LM_ERR_LEN];
    if (d->ed.cut) {   /* never run a line that is not what was typed */
        editor_reset(&d->ed);
        textpane_scroll_end(d->out);
        session_error(x->s, LM_EARG, EDITOR_CUT_TEXT, EDITOR_MAX_LINE - 1);
        return;
    }
    snprintf(line, sizeof line, "%s", d->ed.buf);
    history_add(&d->hist, line);
    editor_reset(&d->ed);
    history_save(&d->hist, x->hist_path, err);
    textpane_scroll_end(d->out);
    if (line[strspn(line, " \t")])
        x->command(x->loop, line);
    if (x->s->quit) {   /* `quit` typed: the same as F10 */
        x->s->quit = 0;
        request_quit(x);
    }
}

static void submit_prompt(DashCtx *x)
{
    Dashboard *d = x->d;
    d->prompt_mode = DASH_PROMPT_CMD;
    d->focus = DASH_FOCUS_VIEW;
    const DashView *v = views_get(d->view);
    if (v->on_prompt)
        v->on_prompt(x, d->aux.buf);
}

static void edit(DashCtx *x, int key)
{
    Dashboard *d = x->d;
    int code = editor_code(key);
    if (d->prompt_mode != DASH_PROMPT_CMD) {
        if (key == 27)
            d->prompt_mode = DASH_PROMPT_CMD;
        else if (code >= 0 && editor_key(&d->aux, code) == EDIT_SUBMIT)
            submit_prompt(x);
        return;
    }
    if (code < 0)
        return;
    switch (editor_key(&d->ed, code)) {
    case EDIT_SUBMIT: submit_command(x); break;
    case EDIT_COMPLETE: complete(x); break;
    case EDIT_CLEAR: clearok(curscr, TRUE); break;
    case EDIT_EOF: request_quit(x); break;
    case EDIT_INTERRUPT: dash_keys_interrupt(x); break;
    default: break;
    }
}

void dash_keys_interrupt(DashCtx *x)
{
    Dashboard *d = x->d;
    if (d->help || d->confirm) {
        d->help = 0;
        d->confirm = DASH_CONFIRM_NONE;
    } else if (d->prompt_mode != DASH_PROMPT_CMD) {
        d->prompt_mode = DASH_PROMPT_CMD;   /* cancels the view's line */
    } else if (d->ed.len > 0) {
        editor_reset(&d->ed);
        d->focus = DASH_FOCUS_CMD;
    } else {
        dash_view_out(x, UI_COLOR_WARN, "Ctrl-C cancels a line or a running command; to "
                      "quit type `quit` or press F10");
    }
}

/* The answer to the question over the screen: y does it, anything else does not. */
static void answer(DashCtx *x, int key)
{
    int what = x->d->confirm, yes = key == 'y' || key == 'Y';
    x->d->confirm = DASH_CONFIRM_NONE;
    if (what == DASH_CONFIRM_QUIT && yes)
        x->quit(x->loop);
    else if (what == DASH_CONFIRM_STOP && yes)
        x->command(x->loop, dash_view_sweep_active(x->s) ? "sweep stop" : "stop");
    else if (what == DASH_CONFIRM_CMD && yes)
        x->command(x->loop, x->d->confirm_cmd);
    else if (what == DASH_CONFIRM_CMD)
        dash_view_out(x, UI_COLOR_DIM, "not done: %s", x->d->confirm_cmd);
    else
        dash_view_out(x, UI_COLOR_DIM, "%s: the run keeps training",
                      what == DASH_CONFIRM_QUIT ? "not quitting" : "not stopped");
}

/* One key: Ctrl-C, overlays, then the key tables, then the line editor. */
void dash_keys_press(DashCtx *x, int key)
{
    Dashboard *d = x->d;
    if (key == DASH_KEY_FN(KEY_RESIZE))
        return;
    if (key == EDITOR_KEY_CTRL_C) {   /* when it arrives as a key, not as SIGINT */
        dash_keys_interrupt(x);
        return;
    }
    if (d->help) {
        d->help = 0;
        return;
    }
    if (d->confirm) {
        answer(x, key);
        return;
    }
    int arg;
    DashAction a = dash_keymap_action(d, key, &arg);
    if (a != DA_NONE) {
        action(x, a, arg);
        return;
    }
    if (d->focus != DASH_FOCUS_CMD && d->prompt_mode == DASH_PROMPT_CMD) {
        if (key < 32 || key == 127 || key >= EDITOR_KEY_LEFT)
            return;   /* a pane's unbound non-printable key */
        d->focus = DASH_FOCUS_CMD;  /* a letter from a pane: it types a command */
    }
    edit(x, key == '\r' ? '\n' : key);
}

