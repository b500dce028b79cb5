/* run_launch.h — starting a recorded run, in ONE place: the trainer (configuration ->
 * data, model, optimizer), the run's record in the run store (name, machine, git
 * revision, configuration, data and tokenizer hashes, tags, sweep), its checkpoint
 * folder, the training thread, and the recorder that drains the trainer's events into
 * the store and the snapshot. `train`, the sweep runner's trials and `bench store` all
 * start runs through run_launch. Not here: deciding which run to resume (the callers'
 * policies differ), printing, or following the run (the recorder's snapshot does that). */
#ifndef LM_RUN_LAUNCH_H
#define LM_RUN_LAUNCH_H

#include "config.h"
#include "err.h"
#include "recorder.h"
#include "runstore.h"
#include "tokcache.h"
#include "trainer.h"

typedef struct {
    const char *db_path;     /* the run store the recorder writes (its own connection) */
    RunStore *store;         /* the caller's connection: records (or claims) the run */
    long resume_id;          /* > 0: continue this stored run as itself (claimed for this
                                process); 0: a new run is recorded */
    const char *resume_from; /* resume: its checkpoint to continue from ("" or NULL: step 0) */
    const char *resume_dir;  /* resume: its checkpoint folder */
    const char *data_hash;   /* resume: the hash its data had; the data must still have it
                                (NULL or "": not checked) */
    const char *tags;        /* a new run's tags (e.g. "sweep-3"), or NULL */
    long sweep_id;           /* a new run's sweep, 0 = none */
    long stop_at;            /* > 0: evaluate, checkpoint and stop at this step */
    const char *fork_from;   /* a new run that continues this checkpoint (weights, moments,
                                data position, RNG) of parent_run, or NULL; data_hash, when
                                given, must match the data */
    long parent_run, parent_step; /* a fork: recorded with the new run */
    long init_run;           /* > 0: cfg->init_from is this run's checkpoint (of init_step):
                                recorded as the new run's parent (lineage across data) */
    long init_step;
    TokCacheProgressFn prepare_fn; /* a text corpus is prepared into the token cache
                                beside db_path on first use: its progress (may be NULL) */
    void *prepare_ud;
} RunLaunchOptions;

/* A launched run. The caller owns it; run_launch_close frees it. */
typedef struct {
    Trainer *trainer;        /* training on its own thread */
    Recorder *rec;           /* its events -> the run store and the snapshot */
    long run_id;             /* set once the run is recorded (also when a later step fails) */
    char name[64];           /* the run's name, as stored */
    char run_dir[512];       /* its checkpoint folder */
    char unsigned_why[LM_ERR_LEN];   /* "" when the new run's record carries the user's
                                        code; else why not (an unsafe key file): fork and
                                        rm treat it as another user's (docs/hostile6.md) */
} RunHandle;

/* The run's name: cfg->name when set, else "<model>-<data name>". */
void run_launch_name(const Config *cfg, const char *data_name, char *buf, size_t cap);

/* The checkpoint folder of run `id` of the store `store_id` under runs_dir
 * (runs_dir/run-ID-STOREID, see rundir.h). The one place run folders are named. */
void run_launch_dir(const char *runs_dir, const char *store_id, long id, char *buf,
                    size_t cap);

/* Starts a recorded run of cfg as described by o, filling *h (zeroed first). LM_OK, or on
 * failure nothing is left running and h holds no trainer or recorder (h->run_id is set
 * when the run had been recorded; such a run is marked failed with the reason):
 *   LM_EARG     the trainer could not be built (bad data path, memory estimate, ...),
 *               or its text corpus could not be prepared into the token cache;
 *   LM_ECANCEL  the prepare was stopped (prepare_fn returned nonzero);
 *   LM_EFORMAT  resume: the data's hash differs from o->data_hash;
 *   LM_ESTATE   resume: another live process holds the run;
 *   LM_EDB      the store refused the record;
 *   LM_ENOMEM   the training or recorder thread could not start.
 * err gets the message. */
int run_launch(const Config *cfg, const RunLaunchOptions *o, RunHandle *h, char *err);

/* 1 once the run has ended and its end is recorded. */
int run_launch_done(RunHandle *h);

/* Waits until the run has ended and every event is recorded (stopping it first when
 * stop is 1), then frees the trainer and recorder and sets them NULL (run_id, name and
 * run_dir stay). A caller that keeps the recorder's final snapshot readable (the sweep
 * runner) takes h->rec once run_launch_done and sets it NULL before closing; it then
 * destroys it itself. A handle without a trainer is a no-op. */
void run_launch_close(RunHandle *h, int stop);

#endif
