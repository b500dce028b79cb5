/* view_tokens.c — the tokens view: a prompt's per-token gates (one layer at a time),
 * computed with the current weights (the training model's view copy or the open run)
 * when the view is shown and when a new prompt is typed.
 * Not the gate computation (dash_data_tokens). */
#define NCURSES_WIDECHAR 1
#include "dash_data.h"
#include "dash_draw.h"
#include "dash_view.h"
#include "listnav.h"
#include "err.h"

#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_UP, K_DOWN, K_PROMPT };

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

extern const DashView view_tokens;

/* The view's own state is a DashTokens (dash_data.h): the prompt and its gates. */
static int state_init(void *state)
{
    DashTokens *t = state;
    snprintf(t->prompt, sizeof t->prompt, "ROMEO:\nBut soft, what light");
    return LM_OK;
}

static void state_free(void *state)
{
    DashTokens *t = state;
    free(t->text);
    free(t->gates);
}

static void draw(Canvas *c, Rect r, Dashboard *d, const Snapshot *sn, const CanvasCaps *caps,
                 int focused)
{
    (void)sn;
    DashTokens *t = dash_view_state(d, &view_tokens);
    if (!t)
        return;
    char title[160];
    if (t->layers > 0 && !t->error[0])
        snprintf(title, sizeof title, "per-token gates | layer %d of %d (Up/Down) | Enter: "
                 "prompt", t->layer, t->layers);
    else
        snprintf(title, sizeof title, "per-token gates | Enter: prompt");
    canvas_box(c, r, title, focused, caps->unicode);
    Rect in = canvas_rect_inner(r);
    if (t->error[0] || t->n_tok == 0 || !t->gates) {
        dash_draw_message(c, in, t->error[0] ? t->error
                                             : "Enter types a prompt; its per-token gates show here");
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
        bw = dash_draw_clamp(bw, 1, in.w - 10);
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

/* The per-token gates of the view's prompt with the current weights. */
static void load(DashCtx *x)
{
    Session *s = x->s;
    DashTokens *t = dash_view_state(x->d, &view_tokens);
    if (!t)
        return;
    if (!s->trainer && !s->view && session_followed_run(s) <= 0)
        snprintf(t->error, sizeof t->error, "no model open: `open ID` or `train`");
    else if (session_prepare_view(s) == LM_OK)
        dash_data_tokens(t, s->view, s->view_tok, s->view_source);
}

static void on_key(DashCtx *x, int action)
{
    DashTokens *t = dash_view_state(x->d, &view_tokens);
    if (!t)
        return;
    if (action == K_PROMPT)
        dash_view_prompt(x, "prompt> ", t->prompt);
    else
        t->layer = listnav_wrap(t->layer, action == K_UP ? -1 : 1, t->layers);
}

static void on_prompt(DashCtx *x, const char *line)
{
    DashTokens *t = dash_view_state(x->d, &view_tokens);
    if (!t)
        return;
    size_t o = 0;  /* \n typed as two characters is a newline */
    for (const char *p = line; *p && o + 1 < sizeof t->prompt; p++)
        if (p[0] == '\\' && p[1] == 'n')
            t->prompt[o++] = '\n', p++;
        else
            t->prompt[o++] = *p;
    t->prompt[o] = 0;
    load(x);
}

static const DashViewKey KEYS[] = {
    {DASH_KEY_FN(KEY_UP), "Up", K_UP, "tokens: layer"},
    {DASH_KEY_FN(KEY_DOWN), "Down", K_DOWN, "tokens: layer"},
    {'\n', "Enter", K_PROMPT, "tokens: edit the prompt"},
};

const DashView view_tokens = {
    .name = "tokens",
    .state_size = sizeof(DashTokens),
    .init = state_init,
    .free = state_free,
    .keys = KEYS,
    .n_keys = (int)(sizeof KEYS / sizeof KEYS[0]),
    .draw = draw,
    .on_key = on_key,
    .enter = load,
    .on_prompt = on_prompt,
};
