/* commands.c — THE command table: every command's name, arguments, help and handler.
 * Dispatch, `help`, tab completion and argument hints all read this one array. */
#include "session.h"

#define H(fn) ((int (*)(CmdContext *, int, const LexWord *))(fn))

static const CmdArgSpec TRAIN_KEYS[] = {
    {"steps", "steps=N", NULL}, {"epochs", "epochs=N", NULL}, {"resume", "resume=RUN_ID", NULL},
    {NULL, NULL, NULL}};
static const CmdArgSpec EVAL_KEYS[] = {
    {"split", "split=valid|test", "valid|test"}, {"batches", "batches=N (0 = whole split)", NULL},
    {NULL, NULL, NULL}};
static const CmdArgSpec SAMPLE_KEYS[] = {
    {"prompt", "prompt=\"text\"", NULL}, {"tokens", "tokens=N", NULL},
    {"temp", "temp=T (0 = greedy)", NULL}, {"top_k", "top_k=K", NULL},
    {"top_p", "top_p=P", NULL}, {"seed", "seed=S", NULL},
    {"cache", "cache=true|false", "true|false"}, {NULL, NULL, NULL}};
static const CmdArgSpec COEFF_KEYS[] = {
    {"layer", "layer=L", NULL}, {"prompt", "prompt=\"text\"", NULL}, {NULL, NULL, NULL}};
static const CmdArgSpec RUNS_KEYS[] = {
    {"sort", "sort=best|recent|model|name", "best|recent|model|name"},
    {"limit", "limit=N", NULL}, {NULL, NULL, NULL}};
static const CmdArgSpec EXPORT_KEYS[] = {
    {"format", "format=csv|json", "csv|json"}, {"file", "file=PATH", NULL},
    {"sweep", "sweep=ID", NULL}, {NULL, NULL, NULL}};
static const CmdArgSpec OPEN_KEYS[] = {
    {"which", "which=best|last", "best|last"}, {NULL, NULL, NULL}};
static const CmdArgSpec RM_KEYS[] = {
    {"checkpoints", "checkpoints=true|false", "true|false"}, {NULL, NULL, NULL}};
static const CmdArgSpec SHOW_KEYS[] = {{NULL, NULL, NULL}};
static const CmdArgSpec BENCH_KEYS[] = {
    {"steps", "steps=N (timed steps per workload)", NULL},
    {"tokens", "tokens=N (sampling bench)", NULL}, {NULL, NULL, NULL}};

static const Command COMMANDS[] = {
    {"help", "[command]", "list the commands, or explain one", NULL, ARG_COMMAND, NULL,
     H(cmd_help), "general"},
    {"quit", "", "leave lmlab (a running run is stopped cleanly and recorded)", NULL,
     ARG_NONE, NULL, H(cmd_quit), "general"},
    {"use", "EXPERIMENT", "load an experiment (experiments/NAME.conf or a path)",
     "Resets the configuration to the defaults, then applies the experiment file: one\n"
     "key=value a line, '#' comments. `use` alone lists the experiments.",
     ARG_EXPERIMENT, NULL, H(cmd_use), "configuration"},
    {"set", "key=value ...", "change settings for the next run",
     "Every value is checked when set: type, range, allowed values. `help set` lists the\n"
     "keys; `show config` shows the current values.", ARG_CONFIG_KEYVAL, NULL, H(cmd_set),
     "configuration"},
    {"unset", "key ...", "reset settings to the experiment's (or default) values", NULL,
     ARG_WORD, NULL, H(cmd_unset), "configuration"},
    {"show", "[config|model|data]", "the configuration, the model's size and memory, the data",
     NULL, ARG_WORD, SHOW_KEYS, H(cmd_show), "configuration"},
    {"train", "[steps=N|epochs=N] [resume=RUN_ID] [key=value ...]",
     "start a run in the background (returns at once)",
     "Applies the key=value settings, records a new run in the run store and trains on\n"
     "its own thread. resume=ID continues a stopped or interrupted run from its last\n"
     "checkpoint, as the same run. Follow it with `status`, `wait`, `pause`, `stop`.",
     ARG_CONFIG_KEYVAL, TRAIN_KEYS, H(cmd_train), "training"},
    {"pause", "", "pause the run after its current step", NULL, ARG_NONE, NULL, H(cmd_pause),
     "training"},
    {"resume", "", "resume a paused run", NULL, ARG_NONE, NULL, H(cmd_resume), "training"},
    {"stop", "", "stop the run after its current step (writes a checkpoint)", NULL, ARG_NONE,
     NULL, H(cmd_stop), "training"},
    {"status", "", "the current run: step, loss, speed, ETA", NULL, ARG_NONE, NULL,
     H(cmd_status), "training"},
    {"wait", "", "block until the run ends, printing progress (for scripts)", NULL, ARG_NONE,
     NULL, H(cmd_wait), "training"},
    {"eval", "[split=valid|test] [batches=N]", "evaluate the open model on a split", NULL,
     ARG_KEYVAL, EVAL_KEYS, H(cmd_eval), "model"},
    {"sample", "[prompt=\"...\"] [tokens=N] [temp=T] [top_k=K] [top_p=P] [seed=S]",
     "generate text, streamed as it is produced",
     "Uses the open model: the running run's current weights (copied between steps), or\n"
     "a run or checkpoint opened with `open`.", ARG_KEYVAL, SAMPLE_KEYS, H(cmd_sample),
     "model"},
    {"coeffs", "[layer=L] [prompt=\"...\"]", "Dispatcher gate coefficients per level",
     "A table of each layer's mean gate per level (shift 1, 2, 4, ...), and for a prompt\n"
     "the per-token view: how strongly each level's gate opened at each token.",
     ARG_KEYVAL, COEFF_KEYS, H(cmd_coeffs), "model"},
    {"open", "RUN_ID|PATH [which=best|last]", "open a stored run's checkpoint for sample/eval",
     NULL, ARG_RUN_ID, OPEN_KEYS, H(cmd_open), "model"},
    {"save", "[PATH]", "write the open model as a checkpoint", NULL, ARG_PATH, NULL,
     H(cmd_save), "model"},
    {"import", "PATH", "open PyTorch weights (safetensors, PyTorch names) with this config",
     NULL, ARG_PATH, NULL, H(cmd_import), "model"},
    {"runs", "[filter ...] [sort=best|recent] [limit=N]", "list stored runs",
     "Filters: model=msa status=finished tag=best name~shake since=2026-11-01 lr<0.001\n"
     "(any config key with = != < <= > >= ~).", ARG_WORD, RUNS_KEYS, H(cmd_runs), "history"},
    {"run", "RUN_ID", "one run in detail", NULL, ARG_RUN_ID, NULL, H(cmd_run), "history"},
    {"compare", "RUN_ID RUN_ID ...", "config diff and metrics side by side", NULL, ARG_RUN_ID,
     NULL, H(cmd_compare), "history"},
    {"tag", "RUN_ID TAG", "tag a run", NULL, ARG_RUN_ID, NULL, H(cmd_tag), "history"},
    {"note", "RUN_ID \"text\"", "attach a note to a run", NULL, ARG_RUN_ID, NULL, H(cmd_note),
     "history"},
    {"rm", "RUN_ID... [checkpoints=true] [yes]",
     "delete runs (and their checkpoints on request); without yes only says what it would do",
     NULL,
     ARG_RUN_ID, RM_KEYS, H(cmd_rm), "history"},
    {"export", "RUN_ID ... format=csv|json file=PATH", "export runs' metrics with config columns",
     NULL, ARG_RUN_ID, EXPORT_KEYS, H(cmd_export), "history"},
    {"bench", "[small|paper|small-msa|paper-msa|scan-dispatcher-N|scan-msa-N|sample|store|all] "
     "[steps=N]", "measure training and sampling speed on this machine",
     "Prints the sgemm peak, then per workload: tokens/s, ms per step, the time split by\n"
     "layer kind, achieved model GFLOP/s against the peak, and peak memory (each workload\n"
     "in its own process). small = dispatcher V=65 d=128 nhid=512 L=4 bptt=64 batch=12\n"
     "AdamW; paper = dispatcher V=28782 d=512 nhid=512 L=6 bptt=512 batch=20 Adam clip\n"
     "0.5; -msa: the same with MSA; scan-*-N: d=128 at bptt N, 8192 tokens per step;\n"
     "sample: sampling at bptt=512 with and without the cache; store: the run store's\n"
     "overhead on training throughput. `threads` is honoured.",
     ARG_WORD, BENCH_KEYS, H(cmd_bench), "general"},
    {"sweep", "[file=NAME] [base=EXPERIMENT] key=v1,v2 ... | status|pause|resume [ID]|stop|"
     "wait|show [ID]|list",
     "hyperparameter sweeps (grid, random, successive halving)",
     "Starts a sweep in the background: its trials train one after another, each a run\n"
     "tagged sweep-ID and named NAME-tK. Spec words (or file=NAME: experiments/sweeps/\n"
     "NAME.sweep, one word a line; words given here override the file's):\n"
     "  base=EXPERIMENT (default: the current settings)  strategy=grid|random|halving\n"
     "  steps=N|epochs=N (budget per trial)  metric=best_val|final_val (ranking)\n"
     "  trials=N seed=S (random draws)  min_steps=N eta=K (halving)  name=NAME\n"
     "  max_trials=N (default 64; more needs force=true)\n"
     "  swept config keys: lr=1e-3,3e-4 (list)  lr=loguniform(1e-4,1e-2)  dropout=uniform(0,0.3)\n"
     "Every trial is checked against the configuration before anything runs. grid: every\n"
     "combination, the first key varying slowest; random: trials draws seeded by seed.\n"
     "halving (successive halving, budget steps=N): rungs r0=min_steps (default\n"
     "steps/eta^2), r_i = min_steps*eta^i while below steps, then steps. Every trial trains\n"
     "to r0. At each rung but the last, the n trials that entered it are ranked by their\n"
     "validation loss at step r_i (the full evaluation over the whole validation split that\n"
     "the trainer does when it stops at the rung); the best ceil(n/eta) continue from their\n"
     "step-r_i checkpoint, the others stop there (status: stopped early at step r_i). A\n"
     "trial that diverged or failed ranks last; ties go to the lower trial. Trials are\n"
     "grid combinations, or trials= random draws when given (needed with ranges).\n"
     "status, pause, resume, stop, wait: the session's sweep (stop keeps the current\n"
     "trial's checkpoint). resume ID continues a stored sweep after a quit or a crash:\n"
     "done trials are not rerun, an interrupted one continues from its last checkpoint.\n"
     "show [ID]: the trials ranked by the metric: swept values as columns, best and final\n"
     "val loss, steps, training time, status; the best marked. list: the stored sweeps.",
     ARG_WORD, NULL, H(cmd_sweep), "sweeps"},
};

const Command *session_commands(int *n)
{
    *n = (int)(sizeof COMMANDS / sizeof COMMANDS[0]);
    return COMMANDS;
}
