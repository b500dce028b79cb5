/* cmdtable.h — the command table engine: ONE array of Command entries is the single
 * source for dispatch (cmdtable_dispatch), argument checks, help text (cmdtable_help),
 * tab completion (cmdtable_complete), argument hints (cmdtable_hint) and what a command
 * does beyond its output (cmdtable_blocks: it waits for training to end), as in
 * redis-cli. The commands themselves and their handlers live elsewhere (cmd_*.c); this
 * file knows nothing about training, runs or configs. Dynamic candidates (config keys
 * and values, run ids, experiment names, paths) come from a CompleteProvider the
 * caller passes in. Not a parser of argument values: handlers convert and validate
 * them (config keys through config_set). The engine is cmdtable.c (lookup, checks,
 * dispatch, blocks), cmdtable_help.c (help) and cmdtable_complete.c (completion, hints). */
#ifndef LM_CMDTABLE_H
#define LM_CMDTABLE_H

#include "lexer.h"

/* What a command takes after its name. Besides its ArgKind a command accepts the
 * key=value keys listed in Command.keys (when not NULL).
 *   ARG_NONE           nothing;
 *   ARG_CONFIG_KEYVAL  key=value pairs: config keys (from the provider) and Command.keys;
 *   ARG_KEYVAL         key=value pairs from Command.keys only;
 *   ARG_RUN_ID, ARG_EXPERIMENT, ARG_PATH, ARG_COMMAND, ARG_WORD
 *                      bare words of that kind (ARG_COMMAND: a command name, for help;
 *                      ARG_WORD: free text, no completion; key=value words with keys
 *                      outside Command.keys are the handler's to check, as filters and
 *                      sweep specs need), plus Command.keys. */
typedef enum {
    ARG_NONE, ARG_CONFIG_KEYVAL, ARG_RUN_ID, ARG_EXPERIMENT, ARG_PATH, ARG_WORD,
    ARG_KEYVAL, ARG_COMMAND
} ArgKind;

/* `what` for a provider asked for the values of a config key (key is set). */
#define COMPLETE_CONFIG_VALUES 100

typedef struct CmdContext CmdContext; /* the session; opaque here, passed to handlers */

typedef struct {
    const char *key;    /* e.g. "steps" */
    const char *hint;   /* e.g. "steps=N" */
    const char *values; /* "a|b|c" for enumerations, or NULL */
} CmdArgSpec;

/* Command and CmdSub flags. */
#define CMD_BLOCKS      0x1u /* waits until training ends (`wait`, `sweep wait`): the
                                dashboard, whose screen follows the run, refuses it */
#define CMD_DESTRUCTIVE 0x2u /* deletes stored data (`rm`); help says so */
#define CMD_FOLLOW_BLOCKS 0x4u /* blocks when a bare word `follow` is among its words
                                  (`log ID follow`): the dashboard refuses that form */
#define CMD_SESSION     0x8u /* changes only the session's own state (`use`, `set`, `unset`):
                                as a one-shot shell command (`lmlab set lr=1e-3`) it would
                                do nothing lasting, so the shell refuses it */
#define CMD_STEP_AFTER  0x10u /* the caller's per-command step (cmdtable_dispatch_each) runs
                                 after the handler instead of before it: `wait` and `stop`
                                 act on the session's job as it is, ended or not */
#define CMD_LEAD_USE    0x20u /* a first bare word is an experiment: "train quick lr=1e-3"
                                 runs "use quick", then "train lr=1e-3" (at the prompt as
                                 from the shell, where shellcmd.c does the same) */
#define CMD_LEAD_COMMAND "use" /* the command CMD_LEAD_USE hands the word to */

/* A subcommand: one of the bare words a command takes first (`sweep status`, `show
 * model`). Listed subcommands are completed, hinted and checked (a bare first word that
 * is none of them is refused with a "did you mean"); a command with subcommands may
 * still take key=value words first when its arg_kind allows (a sweep spec). */
typedef struct {
    const char *name;      /* "status" */
    const char *args_hint; /* what follows it ("[ID]") or "" */
    const char *summary;   /* one line, for help */
    unsigned flags;        /* CMD_BLOCKS, CMD_DESTRUCTIVE */
} CmdSub;

/* A handler: argv[0] is the command word; returns LM_OK or a status (the handler reports
 * its own errors through ctx). */
typedef int (*CmdHandler)(CmdContext *ctx, int argc, const LexWord *argv);

typedef struct Command {
    const char *name;      /* "train" */
    const char *args_hint; /* "[steps=N|epochs=N] [key=value ...]" or "" */
    const char *summary;   /* one line for the command list */
    const char *help;      /* full help text (may span lines), or NULL */
    ArgKind arg_kind;
    const CmdArgSpec *keys; /* (terminated by a {NULL} entry) or NULL */
    CmdHandler handler;
    const char *group;     /* heading in the command list, e.g. "training" */
    unsigned flags;        /* CMD_BLOCKS, CMD_DESTRUCTIVE (0: none) */
    const CmdSub *subs;    /* (terminated by a {NULL} entry) or NULL */
    /* The table's rewrite of a form of the command to another handler, or NULL: given the
     * checked words, the handler that runs them instead of `handler` (`train seeds=N` runs
     * as a sweep), or NULL for `handler`. A form is a table entry's business, not a hook
     * inside a handler; handlers never call each other. */
    CmdHandler (*route)(int argc, const LexWord *argv);
} Command;

/* Supplies dynamic candidates: `what` is ARG_CONFIG_KEYVAL (config key names, without
 * '='), ARG_RUN_ID, ARG_EXPERIMENT, ARG_PATH, or COMPLETE_CONFIG_VALUES (values of
 * config key `key`; key is NULL otherwise). Candidates should start with prefix (the
 * engine filters again). Stores a malloc'd array of malloc'd strings in *out (freed by
 * the engine) and returns their count, or returns <= 0 with *out untouched/NULL. */
typedef int (*CompleteProvider)(void *ud, int what, const char *key, const char *prefix,
                                char ***out);

/* Finds the command named name (exact match). LM_OK with *cmd set, or LM_EARG with
 * "unknown command 'trian' — did you mean 'train'?" in err. */
int cmdtable_find(const Command *table, int n, const char *name, const Command **cmd,
                  char *err);

/* Runs every command of line in order: lex, find, check, call the handler. Stops at
 * the first failure. Lexing, lookup and argument errors return LM_EARG with the message
 * followed by the line with carets under the offending word, e.g.
 *   "unknown key 'lrr' — did you mean 'lr'?\n  train lrr=1\n        ^^^\n";
 * a handler's failure returns its status with err empty (the handler reported it).
 * An empty or comment-only line is LM_OK. */
int cmdtable_dispatch(const Command *table, int n, CmdContext *ctx, const char *line,
                      char *err);
/* cmdtable_dispatch with a step the caller runs once per command whose words checked:
 * step(ctx) just before its handler, or just after it (whatever it returned) for a
 * command flagged CMD_STEP_AFTER. step NULL: none. */
typedef void (*CmdStepFn)(CmdContext *ctx);
int cmdtable_dispatch_each(const Command *table, int n, CmdContext *ctx, const char *line,
                           CmdStepFn step, char *err);

/* Help text (malloc'd into *text; caller frees). name NULL or "": every command, grouped
 * by `group` in table order, one line each with its arguments hint and summary.
 * Otherwise that command's usage line, summary, help and its keys (hint and allowed
 * values). LM_OK; LM_EARG for an unknown name (err as cmdtable_find); LM_ENOMEM. */
int cmdtable_help(const Command *table, int n, const char *name, char **text, char *err);

/* Completes the word that ends at byte `cursor` of line (only line[0..cursor) matters;
 * the current command starts after the last ';'). The first word completes to command
 * names; later words to the command's keys (with a trailing '='), config keys (for
 * ARG_CONFIG_KEYVAL), the subcommands (for the first word after the name) and
 * positional candidates by arg_kind; after `key=` to the
 * enumerated values of the key (from Command.keys, else the provider's
 * COMPLETE_CONFIG_VALUES). *cands gets a sorted, de-duplicated, malloc'd array of
 * malloc'd strings (free with cmdtable_free_cands), *ncand their count, *word_start the
 * byte where the text they replace begins (for values: after the '='). Words inside
 * quotes get no candidates. provider may be NULL. LM_OK or LM_ENOMEM. */
int cmdtable_complete(const Command *table, int n, const char *line, int cursor,
                      CompleteProvider p, void *ud, char ***cands, int *ncand,
                      int *word_start);

/* 1 when a command of line blocks until training ends (CMD_BLOCKS on the command, or on
 * the subcommand named by its first bare word), else 0 (also for a line that does not
 * lex or names no command: dispatch reports those). */
int cmdtable_blocks(const Command *table, int n, const char *line);

/* Frees what cmdtable_complete returned. NULL is a no-op. */
void cmdtable_free_cands(char **cands, int n);

/* The hint to show after what is typed at the end of line: while typing `key=` of a key
 * in Command.keys, that key's hint; after a subcommand typed in full, its args_hint
 * (when not empty); otherwise, once the last command's name is typed in full, its
 * args_hint. NULL when there is none. Points into the table. */
const char *cmdtable_hint(const Command *table, int n, const char *line);

/* Adapter so editor_readline (EditorCompleteFn) completes from a table:
 *   CmdCompleter c = {table, n, provider, ud};
 *   editor_readline(&ed, "> ", cmdtable_completer, &c, &line, err); */
typedef struct {
    const Command *table;
    int n;
    CompleteProvider provider;
    void *ud;
} CmdCompleter;
int cmdtable_completer(void *completer, const char *line, int cursor, char ***cands,
                       int *ncand, int *word_start);

/* ---- what the engine's files share (cmdtable.c, cmdtable_complete.c); not for callers */

/* A growable list of malloc'd strings; `failed` records an allocation failure. */
typedef struct {
    char **v;
    int n, cap, failed;
} CmdStrList;
/* Appends a copy of a followed by b (b may be NULL); on failure sets l->failed. */
void cmdtable_strlist_add(CmdStrList *l, const char *a, const char *b);
/* Adds each alternative of "a|b|c". */
void cmdtable_strlist_add_values(CmdStrList *l, const char *values);
/* The entry of cmd->keys named key, or NULL. */
const CmdArgSpec *cmdtable_spec(const Command *cmd, const char *key);
/* The subcommand of cmd named word, or NULL. */
const CmdSub *cmdtable_sub(const Command *cmd, const char *word);

#endif
