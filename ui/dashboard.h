/* dashboard.h — the ncurses dashboard (htop-style): a Dashboard state, ONE key table
 * (key, context, action, help) that drives both dispatch and the help overlay, a pure
 * dashboard_render() that draws a whole frame from the state and a run Snapshot into a
 * Canvas (testable without a terminal), and dashboard_run(), the curses loop that drives
 * a Session. Views: 1 training (loss/perplexity plots, gates heatmap with a cursor, the
 * cell's histogram and history, the streaming sample), 2 history (the run store table,
 * sort, filter, marked runs overlaid with their config diff), 3 tokens (per-token gates
 * of a prompt). Not here: the widgets (plot, heatmap, table, textpane, statusbar), the
 * commands (commands/) or training (core/): the dashboard only reads snapshots.
 *
 * Focus and keys (documented in the help overlay): the command line has the focus at
 * start, so typing `train` works at once. While it has the focus, printable keys go to
 * the line, except on an EMPTY line '1' '2' '3' '?' (no command starts with them);
 * Tab completes a non-empty line and otherwise cycles the focus; Esc moves the focus to
 * the view. With the view or the output pane focused, the single-letter shortcuts work
 * (p s x q l a v o / t Space Enter) and any other printable key goes back to the
 * command line and is typed there. Function keys (F1 help, F2-F4 views, F10 quit) work
 * everywhere. */
#ifndef LM_UI_DASHBOARD_H
#define LM_UI_DASHBOARD_H

#include "canvas.h"
#include "editor.h"
#include "history.h"
#include "recorder.h"
#include "runstore.h"
#include "session.h"
#include "textpane.h"

#define DASH_MIN_W 80
#define DASH_MIN_H 24
#define DASH_MAX_MARKED 6

enum { DASH_VIEW_TRAIN, DASH_VIEW_HISTORY, DASH_VIEW_TOKENS, DASH_N_VIEWS };
enum { DASH_FOCUS_CMD, DASH_FOCUS_VIEW, DASH_FOCUS_OUTPUT, DASH_N_FOCUS };
enum { DASH_X_STEPS, DASH_X_TOKENS, DASH_X_TIME };
enum { DASH_SORT_BEST, DASH_SORT_RECENT, DASH_SORT_MODEL, DASH_N_SORTS };
/* What the bottom line edits: a command, the history filter, the tokens prompt. */
enum { DASH_PROMPT_CMD, DASH_PROMPT_FILTER, DASH_PROMPT_TOKENS };

/* Actions the key table maps keys to. */
typedef enum {
    DA_NONE, DA_HELP, DA_FOCUS_NEXT, DA_FOCUS_PREV, DA_FOCUS_VIEW, DA_VIEW_TRAIN,
    DA_VIEW_HISTORY, DA_VIEW_TOKENS, DA_QUIT, DA_PAUSE, DA_SAMPLE, DA_STOP, DA_LOG_Y,
    DA_X_AXIS, DA_PPL, DA_UP, DA_DOWN, DA_LEFT, DA_RIGHT, DA_PAGE_UP, DA_PAGE_DOWN,
    DA_END, DA_MARK, DA_OPEN, DA_FILTER, DA_SORT, DA_PROMPT, DA_REDRAW
} DashAction;

/* Where a key binding applies. */
enum {
    DASH_CTX_ANY,     /* whatever has the focus */
    DASH_CTX_NAV,     /* a pane has the focus, or the command line is empty */
    DASH_CTX_PANE,    /* the view or the output pane has the focus */
    DASH_CTX_HISTORY, /* the history view has the focus */
    DASH_CTX_TOKENS,  /* the tokens view has the focus */
};

/* Keys are Unicode code points (and control codes) as typed, or DASH_KEY_FN(curses
 * KEY_* code) for function keys, which curses reports apart (get_wch KEY_CODE_YES). */
#define DASH_KEY_FN(k) (0x1000000 | (k))

typedef struct {
    int key;           /* '?', 27 (Esc), DASH_KEY_FN(KEY_F(1)), ... */
    const char *label; /* as shown in the help overlay: "F1", "?", "Space" */
    int context;       /* DASH_CTX_* */
    DashAction action;
    const char *help;  /* one line */
} DashKey;

/* A loaded curve (a marked run's loss) for the overlays. */
typedef struct {
    long run;
    char name[64];
    SeriesPoint *pts;  /* (n) malloc'd */
    int n;
    double tokens_per_step, seconds_per_step; /* for x in tokens / time; 0 unknown */
    char label[80];    /* legend: "#12 name" */
} DashCurve;

/* The per-token gate view of a prompt. */
typedef struct {
    char prompt[512];
    int n_tok, layers, levels, layer; /* layer: the one shown */
    char (*text)[16];  /* (n_tok) each token's text, malloc'd */
    float *gates;      /* (layers, n_tok, levels) mean over heads; NaN = masked; malloc'd */
    char source[160];  /* which weights */
    char error[256];   /* why there is nothing to show, or "" */
} DashTokens;

typedef struct Dashboard {
    int view, focus, help, confirm_quit;
    int x_axis, log_y, show_ppl;          /* plot settings */
    int gate_row, gate_col;               /* gates heatmap cursor (layer, level) */
    /* selected gate cell's history (runstore_series "gate:L:K") */
    SeriesPoint *gate_hist;
    int n_gate_hist;
    /* history view */
    RunRow *runs;
    int n_runs, run_sel, run_scroll, sort;
    char filter[256];
    long marked[DASH_MAX_MARKED];
    int n_marked;
    DashCurve curves[DASH_MAX_MARKED];    /* loss of the marked runs, same order */
    char *compare;                        /* runstore_compare text of the marked runs */
    /* tokens view */
    DashTokens tok;
    /* sample pane: the periodic sample, or the newest `sample` command's stream */
    char cmd_sample[SNAP_SAMPLE_LEN];
    int sample_from_cmd;
    /* command line */
    TextPane *out;                        /* command output (scrollback) */
    History hist;
    LineEditor ed, aux;                   /* aux: the filter / prompt line */
    int prompt_mode;                      /* DASH_PROMPT_* */
    char experiment[256];                 /* shown when no run exists */
    char sweep[96];                       /* a sweep's progress ("#3 trial 2/8"), or "" */
    int busy;                             /* a command is running (status bar says so) */
    /* drawing scratch (owned, grown by dashboard_render) and its outputs */
    double *scratch;
    long scratch_cap;
    unsigned char *mark_rows;
    int mark_cap;
    int cursor_x, cursor_y;               /* where the terminal cursor goes; -1 hidden */
} Dashboard;

/* The key table (the single source for dispatch and the help overlay). */
const DashKey *dashboard_keys(int *n);
/* The action bound to key in the dashboard's current focus and state (contexts as in
 * the table; Tab on a non-empty command line is completion, so DA_NONE), or DA_NONE. */
DashAction dashboard_key_action(const Dashboard *d, int key);

/* Empty state: training view, command line focused, an empty scrollback. Caller-owned:
 * dashboard_free releases what it holds. LM_OK or LM_ENOMEM. */
int dashboard_init(Dashboard *d);
void dashboard_free(Dashboard *d);

/* Draws a whole frame of size canvas_width x canvas_height from the state and the run
 * snapshot (a zeroed Snapshot with run_id 0 = no run; its cfg still names the model and
 * data to show). Below DASH_MIN_W x DASH_MIN_H it draws only the "terminal too small"
 * message. Writes nothing but the canvas and the state's drawing fields (scratch, table
 * scroll, scrollback clamp, cursor_x/y). */
void dashboard_render(Canvas *c, Dashboard *d, const Snapshot *snap, const CanvasCaps *caps);

/* The interactive dashboard on the terminal until quit, end of input or a termination
 * signal; s must have its signals installed (repl_install_signals). Takes over stdin,
 * stdout and (redirected to lmlab.log next to the database) stderr, restoring them.
 * Returns 0, or 1 when the terminal could not be set up (nothing was changed). */
int dashboard_run(Session *s);

#endif
