/* commands.c — THE command table: every command's name, arguments, help, handler and
 * rewrites (a form of a command that runs another handler: `train seeds=N` runs as a
 * sweep, `sample runs=...` through each run), and the dispatcher that runs a line through
 * it with the session's reap once per command (see commands.h). Dispatch, `help`, tab
 * completion and argument hints all read this one array. The top of commands/: it
 * includes every handler module's header, and nothing below calls back up. */
#include "commands.h"

#include "cmd_analysis.h"
#include "cmd_attach.h"
#include "cmd_bench.h"
#include "cmd_config.h"
#include "cmd_data.h"
#include "cmd_eval.h"
#include "cmd_fork.h"
#include "cmd_jobs.h"
#include "cmd_log.h"
#include "cmd_model.h"
#include "cmd_plot.h"
#include "cmd_report.h"
#include "cmd_runs.h"
#include "cmd_compare.h"
#include "cmd_edits.h"
#include "cmd_export.h"
#include "cmd_sweep.h"
#include "cmd_tokenize.h"
#include "cmd_train.h"
#include "metrics.h"

#include <string.h>

/* Handlers take the Session, which is the table's CmdContext (session.h): no casts. */

/* The value of key= among the words, or NULL. */
static const char *word_value(int argc, const LexWord *argv, const char *key)
{
    for (int i = 1; i < argc; i++)
        if (argv[i].key && !strcmp(argv[i].key, key))
            return argv[i].value;
    return NULL;
}

/* `train seeds=N|repeat=N ...` is a sweep of N seeds (cmd_train_seeds); `train seeds=1
 * group=NAME` stays one run filed into its group, as `train group=NAME`. */
static CmdHandler train_route(int argc, const LexWord *argv)
{
    const char *seeds = word_value(argc, argv, "seeds");
    if (!seeds)
        seeds = word_value(argc, argv, "repeat");
    if (!seeds || (!strcmp(seeds, "1") && word_value(argc, argv, "group")))
        return NULL;
    return cmd_train_seeds;
}

/* `sample runs=A,B,C ...`: the same prompt through each run, side by side. */
static CmdHandler sample_route(int argc, const LexWord *argv)
{
    return word_value(argc, argv, "runs") ? cmd_sample_runs : NULL;
}

static const CmdArgSpec TRAIN_KEYS[] = {
    {"steps", "steps=N", NULL}, {"epochs", "epochs=N", NULL}, {"resume", "resume=RUN_ID", NULL},
    {"seeds", "seeds=N (N runs, one seed group)", NULL}, {"repeat", "repeat=N (= seeds=N)", NULL},
    {"group", "group=NAME", NULL}, {NULL, NULL, NULL}};
static const CmdArgSpec EVAL_KEYS[] = {
    {"split", "split=valid|test", "valid|test"}, {"batches", "batches=N (0 = whole split)", NULL},
    {NULL, NULL, NULL}};
static const CmdArgSpec SAMPLE_KEYS[] = {
    {"prompt", "prompt=\"text\"", NULL}, {"tokens", "tokens=N", NULL},
    {"temp", "temp=T (0 = greedy)", NULL}, {"top_k", "top_k=K", NULL},
    {"top_p", "top_p=P", NULL}, {"seed", "seed=S", NULL},
    {"cache", "cache=true|false", "true|false"},
    {"positions", "positions=count|slide", "count|slide"},
    {"runs", "runs=ID,ID,... (stored runs side by side)", NULL},
    {"which", "which=best|final (with runs=: each run's best, or newest, checkpoint)",
     "best|final"}, {NULL, NULL, NULL}};
static const CmdArgSpec COEFF_KEYS[] = {
    {"layer", "layer=L", NULL}, {"prompt", "prompt=\"text\"", NULL}, {NULL, NULL, NULL}};
static const CmdArgSpec RUNS_KEYS[] = {
    {"sort", "sort=best|recent|model|name|KEY|-KEY", NULL},
    {"limit", "limit=N", NULL}, {"columns", "columns=id,name,lr,best_val,...|default", NULL},
    {"keep", "keep=true (keep columns= as the layout)", "true|false"},
    {"group_by", "group_by=KEY|group", NULL}, {NULL, NULL, NULL}};
static const CmdArgSpec EXPORT_KEYS[] = {
    {"format", "format=csv|json|tensorboard", "csv|json|tensorboard"}, {"file", "file=PATH", NULL},
    {"dir", "dir=FOLDER (format=tensorboard: a new folder)", NULL},
    {"sweep", "sweep=ID", NULL}, {NULL, NULL, NULL}};
static const CmdArgSpec WATCH_KEYS[] = {{"seconds", "seconds=N", NULL}, {NULL, NULL, NULL}};
static const CmdArgSpec NOTE_KEYS[] = {{"sweep", "sweep=ID", NULL}, {"edit", "edit=N", NULL},
    {"delete", "delete=N", NULL}, {NULL, NULL, NULL}};
static const CmdArgSpec LOG_KEYS[] = {{"tail", "tail=N", NULL}, {NULL, NULL, NULL}};
static const CmdArgSpec ALERT_KEYS[] = {
    {"on", "on=diverged|finished|failed|ended|stalled[:S]|SERIES<X", NULL},
    {"run", "run=\"CMD\"", NULL}, {"sweep", "sweep=ID", NULL}, {NULL, NULL, NULL}};
static const CmdArgSpec REPORT_KEYS[] = {
    {"runs", "runs=ID,ID,...|\"FILTER\"", NULL}, {"sweep", "sweep=ID", NULL},
    {"file", "file=report.html|report.md", NULL}, {"title", "title=\"...\"", NULL},
    {"overwrite", "overwrite=true|false", NULL},
    {"series", "series=PATTERN (the series section: gate/*, sys/*; default *)", NULL},
    {NULL, NULL, NULL}};
static const CmdArgSpec PLOT_KEYS[] = {
    {"metric", "metric=train|val|test|lr|grad_norm|val_ppl|...", NULL},
    {"x", "x=step|tokens|time", "step|tokens|time"}, {"smooth", "smooth=K (points)", NULL},
    {"title", "title=\"text\"", NULL}, {"step", "step=N (gates)", NULL},
    {"file", "file=PATH.svg|png|pdf", NULL}, {"band", "band=std|minmax (runs as one group)",
    "std|minmax"}, {"group", "group=NAME (a seed group's runs)", NULL},
    {"series", "series=PATTERN (one run's series as a grid: gate/*, sys/*, *)", NULL},
    {NULL, NULL, NULL}};
static const CmdArgSpec OPEN_KEYS[] = {
    {"which", "which=best|final", "best|final|last"}, {"step", "step=N (a kept checkpoint)", NULL},
    {NULL, NULL, NULL}};
static const CmdArgSpec SAVE_KEYS[] = {
    {"names", "names=lmlab|reference", "lmlab|reference"}, {NULL, NULL, NULL}};
static const CmdArgSpec RM_KEYS[] = {
    {"checkpoints", "checkpoints=true|false", "true|false"}, {NULL, NULL, NULL}};
static const CmdArgSpec SHOW_KEYS[] = {{NULL, NULL, NULL}};
static const CmdSub SHOW_SUBS[] = {
    {"config", "", "every setting, its value and where it came from", 0},
    {"model", "", "the model `train` would build: parameters, memory", 0},
    {"data", "", "the dataset: tokens, vocabulary, splits", 0},
    {"machine", "", "cores, memory, the BLAS kernels in use and why", 0}, {NULL, NULL, NULL, 0}};
static const CmdSub SWEEP_SUBS[] = {
    {"status", "", "the session's sweep and its current trial", 0},
    {"pause", "", "hold the current trial after its step", 0},
    {"resume", "[ID]", "release a paused sweep, or continue stored sweep ID", 0},
    {"stop", "", "end the sweep (the current trial keeps its checkpoint)", 0},
    {"wait", "", "print progress until the sweep ends", CMD_BLOCKS},
    {"show", "[ID]", "the trials ranked by the metric", 0},
    {"list", "", "the stored sweeps", 0},
    {"importance", "ID", "each swept setting's share of the metric's variance, and its sign", 0},
    {"trust", "ID [spec=FINGERPRINT]", "show a stored spec you did not write; sign it as yours",
     0},
    {NULL, NULL, NULL, 0}};
static const CmdSub DATA_SUBS[] = {
    {"prepare", "SPEC [tokenizer=...] [threads=N] [force=true]",
     "tokenize a corpus once into token shards (the cache beside the store)", 0},
    {"list", "", "each prepared corpus: size, tokens, sources, tokenizer, fresh or stale", 0},
    {"rm", "KEY|SPEC [yes]", "delete prepared tokens (without yes: what it would delete)",
     CMD_DESTRUCTIVE},
    {NULL, NULL, NULL, 0}};
static const CmdArgSpec BENCH_KEYS[] = {
    {"steps", "steps=N (timed steps per workload)", NULL},
    {"tokens", "tokens=N (sampling bench)", NULL},
    {"mb", "mb=N (bench data: the generated corpus in MB, default 50)", NULL},
    {"gb", "gb=N (bench data: the largest token cache started on, in GB, default 4)", NULL},
    {"precision", "precision=fp32|bf16|both (both: side by side)", "fp32|bf16|both"},
    {"diagnostics", "diagnostics=N (also time the diagnostics a run with diagnostics=N takes,"
     " as a share of the step)", NULL},
    {NULL, NULL, NULL}};

static const CmdArgSpec FORK_KEYS[] = {
    {"step", "step=N (a step with a checkpoint)", NULL}, {NULL, NULL, NULL}};
#define CONTROL_HELP \
    "Without RUN_ID: this session's run (or sweep). With the id of a run another process\n" \
    "trains (any host sharing the store): a request is written to the store, the run's\n" \
    "owner reads it within about a second and answers; the command waits about 2 s and\n" \
    "prints the answer, or says the owner has not answered yet (exit status 3)."

static const Command COMMANDS[] = {
    {"help", "[command]", "list the commands, or explain one", NULL, ARG_COMMAND, NULL,
     cmd_help, "general", 0, NULL, NULL},
    {"quit", "", "leave lmlab (while a run trains, a prompt asks first; it is stopped cleanly and recorded)", NULL,
     ARG_NONE, NULL, cmd_quit, "general", 0, NULL, NULL},
    {"use", "EXPERIMENT", "load an experiment (experiments/NAME.conf or a path)",
     "Resets the configuration to the defaults, then applies the experiment file: one\n"
     "key=value a line, each key once (a bf16: or fp32: line after it overrides it on its\n"
     "CPU), '#' comments. `use` alone lists the experiments.",
     ARG_EXPERIMENT, NULL, cmd_use, "configuration", CMD_SESSION, NULL, NULL},
    {"set", "key=value ...", "change settings for the next run",
     "Every value is checked when set: type, range, allowed values. `help set` lists the\n"
     "keys; `show config` shows the current values.", ARG_CONFIG_KEYVAL, NULL, cmd_set,
     "configuration", CMD_SESSION, NULL, NULL},
    {"unset", "key ...", "reset settings to the experiment's (or default) values", NULL,
     ARG_WORD, NULL, cmd_unset, "configuration", CMD_SESSION, NULL, NULL},
    {"show", "[config|model|data|machine]",
     "the configuration, the model's size and memory, the data, the machine's BLAS kernels",
     NULL, ARG_WORD, SHOW_KEYS, cmd_show, "configuration", 0, SHOW_SUBS, NULL},
    {"train", "[EXPERIMENT] [steps=N|epochs=N] [resume=RUN_ID] [key=value ...]",
     "start a run in the background (returns at once)",
     "Applies the key=value settings, records a new run in the run store and trains on\n"
     "its own thread. resume=ID continues a stopped or interrupted run from its last\n"
     "checkpoint, as the same run. Follow it with `status`, `wait`, `pause`, `stop`.",
     ARG_CONFIG_KEYVAL, TRAIN_KEYS, cmd_train, "training", CMD_LEAD_USE, NULL, train_route},
    {"checkpoint", "[RUN_ID]", "make a run's owner write a checkpoint now (any process)",
     "Asks the process training RUN_ID (through the store, from any shell) to write a\n"
     "checkpoint of its current weights after its current step (a paused run: at once),\n"
     "waits for it (60 s at most) and names the file: `sample runs=ID which=final`,\n"
     "`open ID which=final` and the dashboard following the run then read those weights.",
     ARG_RUN_ID, NULL, cmd_checkpoint, "training", 0, NULL, NULL},
    {"pause", "[RUN_ID]", "pause the run (or the sweep's trial) after its current step",
     CONTROL_HELP, ARG_RUN_ID, NULL, cmd_control, "training", 0, NULL, NULL},
    {"resume", "[RUN_ID]", "resume a paused run or sweep", CONTROL_HELP, ARG_RUN_ID, NULL,
     cmd_control, "training", 0, NULL, NULL},
    {"stop", "[RUN_ID]", "stop the run or sweep after its current step (writes a checkpoint)",
     CONTROL_HELP, ARG_RUN_ID, NULL, cmd_control, "training", CMD_STEP_AFTER, NULL, NULL},
    {"jobs", "", "every running or paused run of the store, from any process or host",
     "One line per run: id, name, host/pid, step/total, train and val loss, a sparkline of\n"
     "the newest losses, tokens/s, ETA, state (running, paused, stale: its owner is dead or\n"
     "silent; \"no step for N s\": its process lives but has said nothing for N s, frozen\n"
     "or hung). `pause ID`, `resume ID`, `stop ID` control any of them; the dashboard's jobs\n"
     "view shows the same board. Like `log ID follow`, the dashboard and `watch`, it also\n"
     "judges the alerts no owner can: stalled (a silent owner) and ended (a dead one).",
     ARG_NONE, NULL, cmd_jobs, "training", 0, NULL, NULL},
    {"watch", "[seconds=N]", "judge stalled and ended alerts of every run, from outside",
     "Every second, the alert rules a run's own process cannot judge: `stalled:N` of a run\n"
     "whose process has said nothing (no step, no heartbeat) for N s (frozen: kill -STOP,\n"
     "hung), `ended` of a run whose process is gone. Whoever sees it first fires it, once:\n"
     "its line goes to the run's console (`log ID`) and its command runs here. Ends after\n"
     "seconds=N or at Ctrl-C.", ARG_KEYVAL, WATCH_KEYS, cmd_watch, "training", CMD_BLOCKS,
     NULL, NULL},
    {"fork", "RUN_ID step=N [key=value ...]",
     "start a new run from run ID's checkpoint at step N with changed settings",
     "The new run continues from the checkpoint's weights, optimizer moments, data position\n"
     "and random state, with the parent's settings and the key=value changes on top (the\n"
     "model's shape must stay). It is recorded with its parent and step: `run ID` shows\n"
     "them, the history view draws it under its parent and its curve continues the\n"
     "parent's. A step without a checkpoint is refused with the steps that have one.\n"
     "Settings naming files (data=, vocab=, tokens_dir=, init_from=, runs_dir=) are taken\n"
     "from the store only when you wrote the run (a code under your key); a colleague's run\n"
     "forks with them given here (data= must hash as the parent's); the others are taken.",
     ARG_WORD, FORK_KEYS, cmd_fork, "training", 0, NULL, NULL},
    {"status", "", "the current run: step, loss, speed, ETA", NULL, ARG_NONE, NULL,
     cmd_status, "training", 0, NULL, NULL},
    {"attach", "[RUN_ID]", "show a stored run: another process's live run, or a finished one",
     "The dashboard's training view and `status` follow the run from the run store (polled\n"
     "about once a second): its curves, evaluations, gates and samples as they are recorded.\n"
     "Without an id they follow the newest running run of any process on this store (the\n"
     "default). A run trained by this session always shows first; `open RUN_ID` attaches too.",
     ARG_RUN_ID, NULL, cmd_attach, "training", 0, NULL, NULL},
    {"wait", "", "block until the run (or sweep) ends, printing progress (for scripts)", NULL,
     ARG_NONE, NULL, cmd_wait, "training", CMD_BLOCKS | CMD_STEP_AFTER, NULL, NULL},
    {"eval", "[RUN_ID] [split=valid|test] [batches=N]",
     "evaluate the open model (or run RUN_ID's best checkpoint) on a split", NULL,
     ARG_RUN_ID, EVAL_KEYS, cmd_eval, "model", 0, NULL, NULL},
    {"sample", "[prompt=\"...\"] [tokens=N] [temp=T] [top_k=K] [top_p=P] [seed=S] "
     "[positions=count|slide]",
     "generate text, streamed as it is produced",
     "Uses the open model: the running run's current weights (copied between steps), or\n"
     "a run or checkpoint opened with `open`.\n"
     "positions=count (default, as the reference): with cached decoding, positions keep\n"
     "counting past the training window (bptt) up to the cache's reach (5000 for the\n"
     "sinusoidal Dispatcher, bptt for MSA), so text far past bptt tokens can drift into\n"
     "gibberish. positions=slide restarts the window's positions whenever they reach bptt\n"
     "(re-reading the last bptt/2 tokens; a recurrent model's state is rebuilt from them\n"
     "too). cache=false always recomputes a bptt window from position 0.", ARG_KEYVAL, SAMPLE_KEYS, cmd_sample,
     "model", 0, NULL, sample_route},
    {"coeffs", "[layer=L] [prompt=\"...\"]", "Dispatcher gate coefficients per level",
     "A table of each layer's mean gate per level (shift 1, 2, 4, ...), and for a prompt\n"
     "the per-token view: how strongly each level's gate opened at each token.",
     ARG_KEYVAL, COEFF_KEYS, cmd_coeffs, "model", 0, NULL, NULL},
    {"open", "RUN_ID|PATH [which=best|final] [step=N]",
     "open a stored run's checkpoint for sample/eval (and says which step and file)",
     "which=best (default): best.safetensors, the weights of the run's lowest validation\n"
     "evaluation (an estimate over eval_batches batches unless eval_batches=0; `run ID`\n"
     "shows each checkpoint's own evaluation); which=final: the newest step checkpoint;\n"
     "step=N: that step's checkpoint, when kept (keep_checkpoints).", ARG_RUN_ID, OPEN_KEYS, cmd_open, "model", 0, NULL, NULL},
    {"save", "[RUN_ID] [PATH] [names=lmlab|reference]",
     "write the open model (or run RUN_ID's best checkpoint) as a checkpoint",
     "names=reference writes the reference repositories' state_dict names (and their\n"
     "pos_encoder.pe buffer), so fractalego/dispatcher's classes and PyTorch's\n"
     "word_language_model load the file with load_state_dict(strict=True).", ARG_PATH,
     SAVE_KEYS, cmd_save, "model", 0, NULL, NULL},
    {"import", "PATH", "open PyTorch weights: safetensors or torch.save (.pt) files",
     "Reads lmlab's names or the reference repositories' (detected from the names), a\n"
     "bare state_dict or one under model_state_dict/state_dict/model. Without lmlab's\n"
     "metadata, the model's shape comes from the tensors and the rest (heads for msa,\n"
     "the tokenizer) from the current configuration.", ARG_PATH, NULL, cmd_import,
     "model", 0, NULL, NULL},
    {"runs", "[filter ...] [sort=best|recent|KEY|-KEY] [limit=N] [columns=a,b,...|default "
     "[keep=true]] [group_by=KEY|group]", "list stored runs",
     "Filters: model=msa status=finished tag=best name~shake since=2026-11-01 lr<0.001,\n"
     "each key OP value with OP one of = != < <= > >= ~ (contains). Keys: the run's facts\n"
     "  id name status model data tokenizer machine git host params sweep tag group\n"
     "  since until (YYYY-MM-DD[THH:MM] or Nd/Nh/Nm ago)\n"
     "  steps (last step)  best (lowest validation loss)  final (latest validation loss)\n"
     "  (the JSON names best_val final_val last_step sweep_id tags work too)\n"
     "and any config key (lr, d, layers, dropout, ...). An unknown key is refused with a\n"
     "suggestion. sort= is recent (default), best, model, name, or any key above (numbers\n"
     "numerically); -KEY sorts descending (sort=-steps).\n"
     "columns=id,name,lr,best_val chooses the columns (run fields id name model status steps\n"
     "best_val final_val best_ppl params created tags group final_smooth data sweep, or any\n"
     "setting); an unknown one is refused with a suggestion. keep=true keeps them as the\n"
     "layout of later `runs` and the dashboard; columns=default forgets it. group_by=KEY\n"
     "(or group) prints one line per value: N, best and final val as mean ± std.", ARG_WORD, RUNS_KEYS, cmd_runs, "history", 0, NULL, NULL},
    {"run", "RUN_ID [all]", "one run in detail (settings that differ from the defaults; all: every one)", NULL, ARG_RUN_ID, NULL, cmd_run, "history", 0, NULL, NULL},
    {"compare", "RUN_ID RUN_ID ...", "config diff and metrics side by side",
     "A column per run: its name and status, the settings that differ, its evaluations,\n"
     "speed and each series' summary, then whether its numbers are the first run's. Each\n"
     "column is as wide as its widest cell, at most 40 characters: a longer value is cut\n"
     "at its end, a longer row label at its start (the end tells series apart), marked '…'.\n"
     "--json gives every value whole.", ARG_RUN_ID,
     NULL, cmd_compare, "history", 0, NULL, NULL},
    {"group", "NAME [RUN_ID ...]", "seed groups: file runs into group NAME, or show it",
     "`group NAME ID ...` files stored runs into group NAME (replacing their old group; `train\n"
     "seeds=N` and sweeps with seeds=N file theirs themselves); `group NAME` shows its members\n"
     "with mean ± std of best and final val; `group none ID ...` takes runs out. Groups draw\n"
     "as bands: `plot group=NAME band=std file=...`, the history view's % key.",
     ARG_WORD, NULL, cmd_group, "history", 0, NULL, NULL},
    {"tag", "RUN_ID TAG", "tag a run", "`untag RUN_ID TAG` removes one; each is recorded with its\n"
     "time (`run ID` lists the edits).", ARG_RUN_ID, NULL, cmd_tag, "history", 0, NULL, NULL},
    {"untag", "RUN_ID TAG", "remove a tag from a run (recorded with its time)", NULL,
     ARG_RUN_ID, NULL, cmd_untag, "history", 0, NULL, NULL},
    {"rename", "RUN_ID NAME", "rename a run (the old name is recorded with the time)", NULL,
     ARG_RUN_ID, NULL, cmd_rename, "history", 0, NULL, NULL},
    {"note", "RUN_ID|sweep=ID \"text\" | RUN_ID edit=N \"text\" | RUN_ID delete=N",
     "add, edit or delete a note (kept with its time) of a run or a sweep",
     "Every note is kept with its time (a run's notes show in `run ID`, the history view\n"
     "and reports, a sweep's with each of its runs); `runs note~word` finds runs by their\n"
     "notes. A note holds at most 65536 bytes of UTF-8 text (newlines allowed).\n"
     "edit=N replaces note N's text, delete=N deletes it (N: the number `run ID` shows);\n"
     "each change is recorded with its time and the old text (`run ID` lists the edits).",
     ARG_RUN_ID, NOTE_KEYS, cmd_note, "history", 0, NULL, NULL},
    {"log", "RUN_ID [follow] [tail=N]", "a run's console: what it printed, from any process",
     "Progress (every 2 s), evaluations, samples, checkpoints, warnings, errors and the end,\n"
     "each with its time, as the run's owner recorded them in the store (the newest 5000\n"
     "lines of a run are kept; `log` says when older ones were cut). follow: keep printing\n"
     "new lines until the run ends (Ctrl-C stops; not in the dashboard, whose training view\n"
     "shows the console). tail=N: only the last N lines.", ARG_RUN_ID, LOG_KEYS, cmd_log,
     "history", CMD_FOLLOW_BLOCKS, NULL, NULL},
    {"alert", "RUN_ID|sweep=ID on=RULE ... [run=\"CMD\"] | list | off ALERT_ID",
     "be told when a run diverges, ends, stalls or crosses a value",
     "Rules: diverged, finished, failed, ended (any end), stalled[:SECONDS] (no step for\n"
     "that long while the run's owner lives; default 300), SERIES<X or SERIES>X with SERIES\n"
     "step or any name `series` lists (loss, val, best_val, grad_norm, sys/cpu, gate/0/1,\n"
     "grad/<tensor>, ...: its newest value). On a sweep (sweep=ID) a\n"
     "rule applies to each of its runs; per experiment, the config key alerts=RULE,RULE sets\n"
     "rules on every run. The run's owner checks its rules every second; a rule fires once\n"
     "per run: every dashboard attached to the run shows a line and rings the bell, and\n"
     "run=\"CMD\" is started (its words split without a shell, no expansion; the run's facts\n"
     "in LMLAB_RUN_ID, LMLAB_RUN_NAME, LMLAB_ALERT_RULE, LMLAB_ALERT_MESSAGE, LMLAB_STATUS,\n"
     "LMLAB_STEP, LMLAB_LOSS, LMLAB_VAL_LOSS, LMLAB_BEST_VAL, LMLAB_DB). `alert ID` lists a\n"
     "run's rules and what fired; `alert list` every rule; `alert off ALERT_ID` removes one.",
     ARG_WORD, ALERT_KEYS, cmd_alert, "history", 0, NULL, NULL},
    {"rm", "RUN_ID... [checkpoints=true] [yes]",
     "delete runs (and their checkpoints on request); without yes only says what it would do",
     "A run leaves every listing at once; its rows are then deleted a batch at a time, so a\n"
     "run training in another process keeps writing (a removal cut short goes on at the next\n"
     "command and ends at the next rm). The store's file keeps its size: its freed pages\n"
     "hold the next runs' rows; `sqlite3 lmlab.db VACUUM` (no lmlab running) returns them.",
     ARG_RUN_ID, RM_KEYS, cmd_rm, "history", CMD_DESTRUCTIVE, NULL, NULL},
    {"export", "RUN_ID ... [sweep=ID] [format=csv|json] [file=PATH] | format=tensorboard dir=FOLDER",
     "export runs' metrics and evaluations (to stdout without file=)",
     "csv is long form: one header `run,step,metric,value`, then a row per run, step and\n"
     "metric: the step metrics:"
#define STEP_METRIC(name, type, kind, ...) " " #name
#include "metrics.def"
#undef STEP_METRIC
     ";\nthen every other series the run has, by its name in `series` (val_loss ..., sys/cpu ...,\n"
     "gate/L/K, the diagnostics' grad/<tensor> ...). json is an array of runs\n"
     "in the schema of `--json runs` (config typed, created as ISO 8601 UTC and\n"
     "created_unix seconds) with metrics and evals. format=tensorboard dir=FOLDER writes\n"
     "one TensorBoard event file per run into the new FOLDER (FOLDER/ID-NAME/\n"
     "events.out.tfevents.*): every series as scalars, histograms, the settings, name and\n"
     "lineage as text; TensorBoard, Trackio and Aim read it (docs/diagnostics.md).",
     ARG_RUN_ID, EXPORT_KEYS, cmd_export, "history", 0, NULL, NULL},
    {"plot", "RUN_ID ... [metric=train|val|...] [x=step|tokens|time] [smooth=K] "
     "[band=std|minmax] [group=NAME] file=F.svg|png|pdf",
     "draw runs' curves (or `plot gates RUN_ID`) to an SVG, PNG or PDF file for a paper",
     "Curves of several runs with a legend and labelled axes, drawn by cairo. metric= is\n"
     "train (default), val, test or any stored series.\nStep metrics:"
#define STEP_METRIC(name, type, kind, ...) " " #name
#include "metrics.def"
#undef STEP_METRIC
     ";\nand every name `series` lists (val_ppl, sys/cpu, gate/0/1, ...). x= is step (default), tokens seen or\n"
     "training time; smooth=K is a debiased EMA over K points (weight 1 - 2/(K+1), the\n"
     "dashboard's smoothing; it starts at the first raw value). group=NAME plots a seed\n"
     "group's runs; band=std|minmax draws the runs as one group: their mean with a std or\n"
     "min-max band. `plot gates RUN_ID [step=N] file=...` draws the layer x shift heatmap of\n"
     "mean gates at the last recorded step <= N. `plot sweep ID file=...` draws a sweep's\n"
     "parallel coordinates. `plot ID series=PATTERN file=...` draws every series of the run\n"
     "whose name matches (gate/*, sys/*, val*, *) as a grid of small charts; `series`\n"
     "lists the names.",
     ARG_RUN_ID, PLOT_KEYS, cmd_plot, "history", 0, NULL, NULL},
    {"series", "[RUN_ID] [PATTERN]", "the named series: every name a run can have, or a run's",
     "The one registry of series (docs/series.md): name, aliases, unit, kind (per step, per\n"
     "evaluation, per sample, histogram), how a run's series reads as one number (last, min,\n"
     "max, mean: the value of `runs` columns and filters, compare and alerts) and help.\n"
     "With RUN_ID: the series that run has, with that number; PATTERN (gate/*, sys/*, val*)\n"
     "keeps the matching ones. Any of these names works in alert rules (on='val<2'), `runs`\n"
     "filters, columns and sort (loss<2, columns=id,loss,val_loss.min), plot metric= and\n"
     "series=, the dashboard's grid view and compare.",
     ARG_RUN_ID, NULL, cmd_series, "history", 0, NULL, NULL},
    {"bench", "[small|paper|small-msa|paper-msa|wide-msa|scan-dispatcher-N|scan-msa-N|EXPERIMENT|sample|store|track|board|data|tokenizer|all] "
     "[steps=N] [precision=fp32|bf16|both] [tokenizer=A,B] [file=PATH] [mb=N] [gb=N]", "measure training and sampling speed on this machine",
     "Prints the sgemm peak, then per workload: tokens/s, ms per step, the time split by\n"
     "stage (each part's forward and backward, the optimizer, the gradient's zeroing and\n"
     "sum, the waits for the other threads) with the bottleneck named, achieved model\n"
     "GFLOP/s in all and per part against the peak of its precision, and peak memory\n"
     "(each workload in its own process). small = dispatcher V=65 d=128 nhid=512 L=4 bptt=64 batch=12\n"
     "AdamW; paper = dispatcher V=28782 d=512 nhid=512 L=6 bptt=512 batch=20 Adam clip\n"
     "0.5; -msa: the same with MSA; wide-msa: nanoGPT's wider shape (MSA, d=192 nhid=768 L=6,\n"
     "6 heads, bptt=128 batch=16, V=65, AdamW); scan-*-N: d=128 at bptt N, 8192 tokens per step;\n"
     "EXPERIMENT (an experiments/ name, e.g. speedrun_shakespeare): that file's model, shape,\n"
     "optimizer and precision as a run of it gets them on this CPU, its data's vocabulary;\n"
     "sample: sampling at bptt=512 with and without the cache; store: the run store's\n"
     "overhead on training throughput; track: what the owner's system metrics, console and\n"
     "alert checks cost per second of training, as a share of a small step. `threads` is honoured. precision=bf16 runs the\n"
     "workloads with bf16 matrix products (CPUs with avx512_bf16) and prints the bf16 peak;\n"
     "precision=both runs fp32 then bf16 side by side and prints the tokens/s ratio, as a share\n"
     "of the two peaks' ratio and against the most the bf16 step's other stages allow;\n"
     "board: a dashboard frame (jobs and history views) and the run list's sorts and\n"
     "filters on synthetic stores of 200 runs (20 running) and 10,000 runs.\n"
     "data: `data prepare` MB/s per tokenizer over a generated corpus of mb=N MB (default 50)\n"
     "on every core (threads=N: that many).\n"
     "tokenizer: encoding MB/s of each tokenizer on one core (tokenizer=A,B picks them;\n"
     "file=PATH the text, default the bundled corpora), each built as `train` would.",
     ARG_WORD, BENCH_KEYS, cmd_bench, "general", 0, NULL, NULL},
    {"sweep", "[file=NAME] [base=EXPERIMENT] key=v1,v2 ... [seeds=N] [parallel=K] | status|"
     "pause|resume [ID]|stop|wait [ID]|status [ID]|show [ID]|list|importance ID|trust ID",
     "hyperparameter sweeps (grid, random, successive halving)",
     "Starts a sweep in the background: its trials train one after another, each a run\n"
     "tagged sweep-ID and named NAME-tK. Spec words (or file=NAME: experiments/sweeps/\n"
     "NAME.sweep, one word a line, each key once; words here override the file's):\n"
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
     "trial's checkpoint); status ID and wait ID: any stored sweep, from any shell.\n"
     "resume ID continues a stored sweep after a quit or a crash:\n"
     "done trials are not rerun, an interrupted one continues from its last checkpoint.\n"
     "show [ID]: the trials ranked by the metric: swept values as columns, best and final\n"
     "val loss, steps, training time, status; the best marked. list: the stored sweeps.\n"
     "importance ID: each swept setting's share of the metric's variance (eta squared),\n"
     "its sign (rank correlation) and its range against the seed-to-seed noise (seeds=N\n"
     "trials); one trial per value cannot tell and says so.\n"
     "A stored spec trains only when you wrote it (a code under your key, docs/hostile6.md):\n"
     "one planted or edited in a shared store, or made by an older lmlab, is refused and its\n"
     "trials listed `refused`; trust ID shows the whole spec, and trust ID spec=FINGERPRINT\n"
     "(the fingerprint it prints) signs that text as yours, then resume ID trains it.",
     ARG_WORD, NULL, cmd_sweep, "sweeps", 0, SWEEP_SUBS, NULL},
    {"report", "runs=ID,ID,...|FILTER [sweep=ID] file=report.html|report.md [overwrite=true]",
     "write one self-contained HTML report (or Markdown with images) to hand to a colleague",
     "The runs (runs=1,2,5 or runs=\"model=msa status=finished\", a filter as `runs`\n"
     "takes; a sweep's runs with sweep=ID): training and validation curves (SVG from the\n"
     "same cairo code as `plot`), the runs table with the settings that differ, seed groups\n"
     "as mean ± std bands, the sweep's parallel coordinates and parameter importance, the\n"
     "best run's samples, the notes, system metrics, and the machine and versions. An\n"
     ".html file holds everything (images inline, no scripts, no network); a .md file gets\n"
     "its images as files in a folder beside it (NAME_files/). An existing file (or\n"
     "NAME_files/) is replaced only with overwrite=true; a symbolic link is never written\n"
     "through.", ARG_KEYVAL, REPORT_KEYS,
     cmd_report, "history", 0, NULL, NULL},
    {"data", "prepare SPEC [tokenizer=...] [threads=N] | list | rm KEY|SPEC [yes]",
     "prepare a corpus as token shards once; list and delete prepared corpora",
     "SPEC: a bundled name, a text file, a directory of files (recursive, sorted; dot files\n"
     "skipped), a WikiText-layout directory, .jsonl files (one JSON object a line, the text in\n"
     "text_key=, default text), any of them .gz, .xz or .zst, or a comma list\n"
     "(data=a.txt,b/,c.jsonl.zst); not / or a system directory (/usr, /proc, ...). The\n"
     "tokens go to lmlab-tokens/ beside the run store (tokens_dir= elsewhere), keyed by\n"
     "the sources and the tokenizer with its options; a source changed since makes the\n"
     "cache stale and the next prepare (or train) does it again. Binary documents and bad\n"
     ".jsonl lines are skipped and counted (strict=true refuses them). threads=N encodes\n"
     "on N cores (0: all). force=true prepares again even when fresh. Progress: a bar on\n"
     "a terminal, --json events. See docs/data_prepare.md.",
     ARG_WORD, NULL, cmd_data, "general", 0, DATA_SUBS, NULL},
    {"tokenize", "TEXT", "print the pieces and ids of TEXT as typed (no end-of-line token) under "
     "the open model's tokenizer (after `open ID`), else the settings' tokenizer", NULL,
     ARG_WORD, NULL, cmd_tokenize, "general", 0, NULL, NULL},
};

const Command *session_commands(int *n)
{
    *n = (int)(sizeof COMMANDS / sizeof COMMANDS[0]);
    return COMMANDS;
}

int session_run_line(Session *s, const char *line)
{
    int n;
    const Command *table = session_commands(&n);
    s->commands = table;
    s->n_commands = n;
    char err[LM_ERR_LEN * 2] = "";
    /* the step once per command: the session's reap (Session is the table's CmdContext) */
    int rc = cmdtable_dispatch_each(table, n, s, line, session_job_reap, err);
    if (rc && err[0])
        session_error(s, rc, "%s", err);
    return rc;
}
