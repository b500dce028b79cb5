/* session.h — the state the commands act on (the command table's CmdContext): the
 * current configuration, the run store, the session's one job (a run being trained, or a
 * sweep training its trials), the model opened for sampling/evaluation, and where output
 * goes (stdout or the dashboard's scrollback, text or JSON lines). One session per lmlab
 * process; commands run on the main thread. The session module (session.c,
 * session_view.c) is the lowest of commands/ above the table engine: it calls no
 * handler. Queries of the job are pure; a run that has ended is closed by one explicit
 * step, session_job_reap, which the dispatcher (commands.h) calls once per command.
 * Not here: parsing (lexer/cmdtable), the command table and its handlers (commands.h,
 * cmd_*.h), drawing (ui). */
#ifndef LM_SESSION_H
#define LM_SESSION_H

#include "cmdtable.h"
#include "config.h"
#include "dataset.h"
#include "model.h"
#include "recorder.h"
#include "runstore.h"
#include "sweep_runner.h"
#include "tokenizer.h"
#include "trainer.h"
#include "run_launch.h"

#include <jansson.h>
#include <stdarg.h>

/* The reason a run stopped by its process's SIGTERM or SIGHUP records (`wait` stops it
 * and prints its end; otherwise the session's shutdown does). */
#define SESSION_TERM_REASON "its lmlab process got a termination signal (SIGTERM or SIGHUP)"

/* Where output goes. kind: SESSION_OUT_TEXT (results), SESSION_OUT_ERROR,
 * SESSION_OUT_STREAM (pieces of streamed text, no newline added). */
enum { SESSION_OUT_TEXT, SESSION_OUT_ERROR, SESSION_OUT_STREAM };
typedef void (*SessionWriter)(void *ud, int kind, const char *text);

struct CmdContext {
    Config cfg;                 /* what `train` will use */
    char experiment[256];       /* the experiment last `use`d */
    char db_path[1024];
    RunStore *store;            /* browsing connection (main thread) */
    /* the job (session_job_kind): at most one of a run and a training sweep */
    Trainer *trainer;           /* the run being trained (started by run_launch), or NULL */
    Recorder *rec;
    long run_id;
    long attached;              /* the run `attach`/`open` put on screen when none trains
                                   here; 0: the newest live run of the store */
    SweepRunner *sweep;         /* the sweep started or resumed here: training, or ended and
                                   kept (its summary and last trial stay readable) until the
                                   next job replaces it; NULL when none */
    /* the model opened for sample/eval/coeffs: a stored run, a checkpoint, or a copy of
     * the training weights */
    Model *view;
    Tokenizer *view_tok;
    char view_source[1100];     /* what the weights are, for messages: "run #5 best.safetensors
                                   (step 700)", "run #5 live weights (step 740)", a path */
    char view_path[4096];       /* the checkpoint file view holds ("" for live weights) */
    long view_run;
    long view_step;             /* the training step of the weights (-1: unknown) */
    int view_follow;            /* view is the followed run's newest checkpoint (refreshed
                                   as it writes newer ones), not one the user opened */
    long view_asked;            /* the run whose owner was asked for a checkpoint (once) */
    int tok_settings_newer;     /* a tokenizer setting changed (set, unset, use) after the
                                   model was opened: `tokenize` then uses the settings' */
    Dataset view_ds;            /* the opened model's data (for eval), if loaded */
    int has_view_ds;
    /* output */
    int json;                   /* one JSON object per line */
    int quiet_progress;         /* don't print progress lines (interactive prompt) */
    /* a prompt that can ask y/N (line mode at a terminal, the dashboard): a command such as
     * `rm` then sets ask_cmd (what y runs) and ask_text (the question), and the prompt
     * asks once; otherwise both stay empty */
    int can_ask;
    char ask_cmd[512], ask_text[160];
    SessionWriter writer;
    void *writer_ud;
    volatile int interrupt;     /* Ctrl-C: `wait` and streaming stop */
    /* session_snapshot's following: the end of the session's run was shown; the last
     * look for another process's live run (monotonic seconds) and its answer */
    int end_seen;
    const void *left_job;       /* the ended job (its recorder or sweep) the screen left */
    double live_checked;
    long live_elsewhere;
    /* a resumed run's history before this session's part (its stored curves up to the
     * resume step), shown in front of the recorder's (session_snapshot) */
    SeriesPoint *prior_loss, *prior_val;
    int n_prior_loss, n_prior_val;
    int quit;                   /* `quit` was accepted */
    volatile int terminating;   /* SIGTERM/SIGHUP: the session ends (repl's signal handler) */
    const Command *commands;    /* the table the dispatcher runs (commands.h sets it): `help` */
    int n_commands;
};
typedef struct CmdContext Session;

/* Initialises s with the default configuration — the experiment "default"
 * (experiments/default.conf, as `use default`) when it is found and loads, else the
 * built-in defaults — and the store at db_path (NULL: $LMLAB_DB or ./lmlab.db; opened
 * lazily). Output goes to stdout/stderr until session_set_writer (NULL: back to them);
 * once the session is terminating, a line they cannot take at once is dropped. */
void session_init(Session *s, const char *db_path);
/* Stops a running run cleanly (recorded as stopped), closes everything. */
void session_free(Session *s);
void session_set_writer(Session *s, SessionWriter w, void *ud);

/* Completion provider for the table: config keys/values, run ids, experiments, paths. */
int session_complete(void *ud, int what, const char *key, const char *prefix, char ***out);

/* Output helpers: text lines, errors ("error: ..."), streamed pieces, JSON objects
 * (in --json mode; the object is consumed). */
void session_printf(Session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int session_error(Session *s, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void session_stream(Session *s, const char *piece);
void session_emit_json(Session *s, json_t *obj);

/* The store, opened on first use. NULL after reporting the error. */
RunStore *session_store(Session *s);

/* Resolves an experiment name (experiments/<name>.conf, or a path). 0 or -1. */
int session_find_experiment(const char *name, char *path, size_t cap);

/* A duration for people: "4.2s" under 10 seconds, "m:ss" under an hour, "XhYY" above,
 * "-" when unknown. */
void session_fmt_duration(char *buf, size_t cap, double sec);

/* Parses a run id word ("12" or "#12"); -1 when it is not one. */
long session_parse_run_id(const char *word);

/* ---- the job: what the session trains ----
 * SESSION_JOB_RUN while the run trains or is paused; SESSION_JOB_SWEEP while the sweep
 * trains its trials (or is paused); SESSION_JOB_NONE otherwise (also for a run that has
 * ended and is not reaped yet). A pure query: it changes nothing. */
typedef enum { SESSION_JOB_NONE, SESSION_JOB_RUN, SESSION_JOB_SWEEP } SessionJobKind;
SessionJobKind session_job_kind(const Session *s);
/* Whether the session holds a run, training or ended and not yet reaped: `wait` then
 * reports it (its progress, its end and whether it failed). */
int session_job_holds_run(const Session *s);
/* THE reap: frees the run's trainer and recorder once it has ended, keeping its final
 * weights as the model `sample`, `eval` and `coeffs` use (a no-op while it trains or when
 * no run is held). Called by the dispatcher once per command (before it, or after it for
 * the commands flagged CMD_REAP_AFTER: `wait`, `stop`), and nowhere else but
 * session_job_set_run and session_free. */
void session_job_reap(Session *s);
/* Makes h's started run the session's job (its trainer, recorder and id), closing a run
 * that ended since the command's reap; the screen follows the new run. The caller
 * checked session_check_idle. */
void session_job_set_run(Session *s, const RunHandle *h);
/* LM_OK when the session trains nothing; else reports "run #12 is still training: `stop`
 * it (or `wait`) before starting <starting>" (or the sweep's) and returns LM_ESTATE. */
int session_check_idle(Session *s, const char *starting);
/* "run #12" or "sweep #3" for messages ("" when idle). */
void session_job_name(const Session *s, char *buf, size_t cap);
/* The session's sweep (training or ended), or NULL. Valid until the next job or
 * session_job_shutdown. */
SweepRunner *session_job_sweep(Session *s);
/* Keeps run's stored loss and validation curves (its steps before a resume) so that
 * session_snapshot shows the whole history; run 0 forgets them. */
void session_set_prior(Session *s, long run);
/* Makes r (started) the session's sweep, freeing an ended one it replaces. The caller
 * checked that no job is training. */
void session_job_set_sweep(Session *s, SweepRunner *r);
/* Pauses (on = 1) or resumes (on = 0) whatever trains: the run after its step, or the
 * sweep's current trial. Returns the kind acted on (SESSION_JOB_NONE: nothing trains). */
SessionJobKind session_job_pause(Session *s, int on);
/* Asks whatever trains to stop and waits: the run ends after its step with a checkpoint
 * (recorded as stopped; it stays the session's until reaped); the sweep's current trial
 * is checkpointed and stays pending, the sweep is stored as stopped. Returns the kind
 * stopped. */
SessionJobKind session_job_stop(Session *s);
/* Stops whatever trains (as session_job_stop) and frees the run and the sweep. For quit. */
void session_job_shutdown(Session *s);

/* The run shown when the session trains none (session_snapshot fails): the attached
 * run (`attach ID`, `open ID`), else the newest running or paused run of the store that
 * another process trains and is alive; 0 when none. */
long session_followed_run(Session *s);

/* Snapshot of the session's job into dst: its run (also once ended), else its sweep's
 * current trial (an ended sweep's last trial). Returns 1 when one was copied; 0 when the
 * session has none, or when its job has ended (and was shown ended) and the screen is to
 * follow another run instead: an `attach`ed/`open`ed one, or another process's live run
 * (session_followed_run) — so following resumes after the session's own job. */
int session_snapshot(Session *s, Snapshot *dst);

/* (session_view.c) Makes s->view the model to sample/evaluate: a fresh copy of the running run's
 * weights when a run is training, else what `open`/`import` loaded. LM_OK or reports. */
int session_prepare_view(Session *s);
/* Loads a checkpoint (or plain PyTorch weights with the session's configuration) into
 * s->view. run_id 0 when not from the store. */
int session_open_checkpoint(Session *s, const char *path, long run_id);
/* (session_view.c) Opens stored run id's checkpoint into s->view: which = "best" | "final"
 * (step > 0: that step's file), chosen by core/run's record; checks the file is the run's
 * own; sets view_source ("run #5 best.safetensors (step 700 of 1000; val ...)") and
 * view_path. LM_OK, or reports (LM_EARG: no such run or checkpoint). The one way `open`,
 * `eval ID` and `save ID` name a run. */
int session_open_run(Session *s, long id, const char *which, long step);

#endif
