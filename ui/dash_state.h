/* dash_state.h — the dashboard's state (Dashboard): focus, plot settings, the shared
 * marked runs and their curves, the command line, the drawing scratch and a slot per
 * view for the view's own state (dash_view.h: dash_view_state; a view's fields are its
 * own file's, never here); its init/free; and the key code convention. Plain data: drawing is dash_render.c and the
 * views (view_*.c), key handling dash_keys.c, the curses loop dash_term.c.
 * Not a place for behaviour: a view's logic lives in its own file. */
#ifndef LM_UI_DASH_STATE_H
#define LM_UI_DASH_STATE_H

#include "canvas.h"
#include "editor.h"
#include "history.h"
#include "recorder.h"
#include "runstore.h"
#include "runstore_jobs.h"
#include "runstore_track.h"
#include "session.h"
#include "textpane.h"

#define DASH_MIN_W 80
#define DASH_MIN_H 24
#define DASH_MAX_MARKED 6
#define DASH_MAX_VIEWS 9   /* keys 1..9 */

enum { DASH_FOCUS_CMD, DASH_FOCUS_VIEW, DASH_FOCUS_OUTPUT, DASH_N_FOCUS };
/* What the y/n question over the screen asks: quit while training, stop the run, or a
 * view's question (confirm_text; y runs confirm_cmd). */
enum { DASH_CONFIRM_NONE, DASH_CONFIRM_QUIT, DASH_CONFIRM_STOP, DASH_CONFIRM_CMD };
enum { DASH_X_STEPS, DASH_X_TOKENS, DASH_X_TIME };
/* The output pane's size (F9 cycles): a quarter of the screen, half, all of it. */
enum { DASH_OUT_NORMAL, DASH_OUT_LARGE, DASH_OUT_FULL, DASH_N_OUT_SIZES };
enum { DASH_SORT_BEST, DASH_SORT_RECENT, DASH_SORT_MODEL, DASH_SORT_NAME, DASH_SORT_STEPS,
       DASH_SORT_STATUS, DASH_SORT_ID, DASH_N_SORTS };   /* `=` cycles: every fixed column */
/* What the bottom line edits: a command, or a line the current view asked for (the
 * history filter, the tokens prompt), submitted to that view's on_prompt. */
enum { DASH_PROMPT_CMD, DASH_PROMPT_VIEW };

/* Keys are Unicode code points (and control codes) as typed, or DASH_KEY_FN(curses
 * KEY_* code) for function keys, which curses reports apart (get_wch KEY_CODE_YES). */
#define DASH_KEY_FN(k) (0x1000000 | (k))

/* A loaded curve (a marked run's loss) for the overlays. */
typedef struct {
    long run;
    char name[64];
    SeriesPoint *pts;  /* (n) malloc'd */
    int n;
    double tokens_per_step, seconds_per_step; /* for x in tokens / time; 0 unknown */
    char label[80];    /* legend: "#12 name" */
    char *config;      /* the run's "key=value\n" settings (malloc'd): the config diff */
    double best_val, final_val; /* NAN when none */
    long best_step;             /* the step of the run's best checkpoint (-1 none) */
    double best_step_val;       /* the validation loss at best_step (NAN when none) */
    int best_estimated;         /* best val is an estimate over eval_batches batches
                                   (runstore_best_estimated): shown with ~ */
    long last_step;
} DashCurve;

/* What the marked runs' curves show is cmp_metric, an index into the registry's
 * comparable series (dash_data_cmp_series: loss, val_loss, then every other per-step and
 * per-evaluation series); the training view overlays them only for loss and val_loss. */
#define DASH_N_SMOOTH 4   /* smoothing: off, 5, 20, 100 points (moving average) */

/* A seed group's band in the history view (dash_groups.c): mean ± std of the compared
 * metric over all the group's members, on the longest member's steps. */
typedef struct {
    char label[96];
    long run;          /* its first member (the colour) */
    int members, n;
    double *x, *mean, *lo, *hi; /* (n) malloc'd; x in steps */
    double tokens_per_step, seconds_per_step; /* the members' mean (0 unknown): the x axis
                                                  in tokens or seconds, as the curves' */
} DashBand;

/* One view's own state in a Dashboard (dash_view_state makes it; dash_state_free calls
 * release, then frees it). view is the DashView it belongs to. */
#define DASH_MAX_VIEW_SLOTS 16
typedef struct {
    const void *view;
    void *state;
    void (*release)(void *state);
} DashViewSlot;

typedef struct Dashboard {
    int view, focus, help;                /* view: index in the view table (views.c) */
    int confirm;                          /* DASH_CONFIRM_*: a question over the screen */
    int x_axis, log_y, show_ppl;          /* plot settings of the view on screen */
    int other_x_axis, other_log_y;        /* the other kind's (history vs the others'):
                                             swapped in when the view changes, so one
                                             view's choices never leak into the other */
    /* marked runs (history view marks them, the training view overlays them) */
    long marked[DASH_MAX_MARKED];
    int n_marked;
    DashCurve curves[DASH_MAX_MARKED];    /* the marked runs' cmp_metric, same order */
    int cmp_metric, cmp_smooth;           /* dash_data_cmp_series index, smoothing index
                                             (< DASH_N_SMOOTH) */
    /* a view's y/n question (DASH_CONFIRM_CMD): its lines and the command y runs */
    char confirm_text[2][80], confirm_cmd[512];
    /* alerts (every view, dash_alerts.c): the newest fired alert already shown of the run
     * on screen, and the newest of any run when the dashboard first read the store (-1:
     * not read yet): what fired before that is not news */
    long alert_seen, alert_run, alert_base;
    double alert_next;
    char alert_last[64];                  /* the newest of those, for the status bar
                                             ("step>1 11:17:03"): a scrollback line can
                                             scroll off, the bar keeps it; "" when none */
    /* sample pane: the periodic sample, or the newest `sample` command's stream */
    char cmd_sample[SNAP_SAMPLE_LEN];
    int sample_from_cmd;
    /* command line */
    TextPane *out;                        /* command output (scrollback) */
    int out_size;                         /* DASH_OUT_*: how much of the screen it takes */
    History hist;
    LineEditor ed, aux;                   /* aux: the line a view asked for */
    int prompt_mode;                      /* DASH_PROMPT_* */
    char prompt_label[16];                /* aux line's prompt: "filter> " */
    char experiment[256];                 /* shown when no run exists */
    char sweep[96];                       /* a sweep's progress ("#3 trial 2/8"), or "" */
    char opened[96];                      /* the weights `open` loaded when they are the run
                                             on screen's ("step 700 best.safetensors"), or "" */
    int busy;                             /* a command is running (status bar says so) */
    int from_store;                       /* the run on screen is read from the store:
                                             another process's, or a replayed one */
    /* each view's own state (dash_view.h: dash_view_state) */
    DashViewSlot view_slots[DASH_MAX_VIEW_SLOTS];
    int n_view_slots;
    /* drawing scratch (owned, grown by dash_render) and its outputs */
    double *scratch;
    long scratch_cap;
    unsigned char *mark_rows;
    int mark_cap;
    int cursor_x, cursor_y;               /* where the terminal cursor goes; -1 hidden */
} Dashboard;

/* Empty state: the first view, command line focused, an empty scrollback. Caller-owned:
 * dash_state_free releases what it holds. LM_OK or LM_ENOMEM. */
int dash_state_init(Dashboard *d);
void dash_state_free(Dashboard *d);

#endif
