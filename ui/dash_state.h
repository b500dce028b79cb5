/* dash_state.h — the dashboard's state (Dashboard): focus, plot settings, the shared
 * marked runs, each view's fields, the command line and the drawing scratch; its
 * init/free; and the key code convention. Plain data: drawing is dash_render.c and the
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
    long last_step;
} DashCurve;

/* What the marked runs' curves show (history view; the training view overlays them only
 * for the train loss and validation). */
enum { DASH_CMP_TRAIN, DASH_CMP_VAL, DASH_CMP_GRAD, DASH_CMP_LR, DASH_N_CMP };
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
    int cmp_metric, cmp_smooth;           /* DASH_CMP_*, smoothing index (< DASH_N_SMOOTH) */
    /* training view: gates heatmap cursor (layer, level) and the selected cell's history
     * (runstore_series "gate:L:K"), with what was loaded (run, gates step, cell) */
    int gate_row, gate_col;
    SeriesPoint *gate_hist;
    int n_gate_hist;
    long gh_run, gh_step;
    int gh_row, gh_col;
    double gh_retry;                      /* reload then: the store may lag the snapshot */
    /* history view */
    RunRow *runs;
    int n_runs, run_sel, run_scroll, sort;
    char sort_key[32];                    /* "" : sort is DASH_SORT_*; else the column sorted
                                             by: a setting (lr), final_smooth, group, ... */
    int sort_desc;                        /* 1: the order reversed (`-` in the view) */
    char filter[256];
    /* history view: seed groups as bands, the curve cursor, the kept layout
       (dash_groups.c, view_history.c) */
    int hist_band;                        /* 1: the marked runs' groups as mean ± std */
    DashBand bands[DASH_MAX_MARKED];
    int n_bands;
    int hist_cursor;                      /* dot column of the plot cursor, -1 = off */
    long cursor_run;                      /* the curve nearest the cursor (0 = none) */
    int hist_restored;                    /* the kept layout was read this session */
    char hist_cols[512];                  /* `runs columns=` kept in the store, "" = none */
    char (*hist_group)[64];               /* (n_runs) each run's group, when a column needs it */
    double *hist_smooth;                  /* (n_runs) final_smooth, when a column needs it */
    /* tokens view */
    DashTokens tok;
    /* sweep view: the sweep shown (the session's, else the newest stored) and its trials */
    long sw_id;
    char sw_name[64], sw_status[16];
    SweepTrialRow *sw_trials;             /* (n_sw_trials) malloc'd */
    int n_sw_trials, sw_sel, sw_scroll, sw_param; /* sw_param: the swept key on the x axis */
    double sw_next;                       /* reload then (monotonic seconds) */
    /* jobs view: every running or paused run of the store, any process (runstore_jobs) */
    JobRow *jobs;                         /* (n_jobs) malloc'd */
    int n_jobs, job_sel, job_scroll;
    double job_next;                      /* reload then (monotonic seconds) */
    char job_error[256];                  /* why the board could not be read, or "" */
    /* a view's y/n question (DASH_CONFIRM_CMD): its lines and the command y runs */
    char confirm_text[2][80], confirm_cmd[64];
    /* samples view: the newest `sample runs=...` side by side (view_samples.c) */
#define DASH_MAX_SAMPLE_RUNS 9
    long sp_run[DASH_MAX_SAMPLE_RUNS];
    char sp_name[DASH_MAX_SAMPLE_RUNS][64];
    char *sp_text[DASH_MAX_SAMPLE_RUNS];  /* malloc'd, NULL when not recorded */
    int n_sp;
    char sp_key[1024], sp_settings[256], sp_prompt[512];
    double sp_next;
    /* system view: the shown run's system metrics and console (view_system.c) */
    long sys_run;                         /* the run they were read for */
    SysSample *sys;                       /* (n_sys) malloc'd, by time */
    int n_sys;
    TextPane *console;                    /* the run's console lines */
    long console_after, console_cut;      /* last line read; lines cut from its start */
    double sys_next;                      /* reload then (monotonic seconds) */
    /* alerts (every view, dash_alerts.c): the newest fired alert already shown */
    long alert_seen, alert_run;
    double alert_next;
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
    char sw_bar_seen[96];                 /* the sweep view's table was loaded when the bar's
                                             sweep progress read this (a change reloads it) */
    char opened[96];                      /* the weights `open` loaded when they are the run
                                             on screen's ("step 700 best.safetensors"), or "" */
    int busy;                             /* a command is running (status bar says so) */
    int from_store;                       /* the run on screen is read from the store:
                                             another process's, or a replayed one */
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
