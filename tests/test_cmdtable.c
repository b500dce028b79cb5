/* test_cmdtable.c — the command table engine on a small fake table: lookup with
 * suggestions, argument checks, dispatch (handlers called with the right words, errors
 * with carets), help text, completion (command names, keys, `model=<tab>` values from a
 * fake provider, enum values from the table, run ids) and hints. Exact comparisons. */
#include "check.h"
#include "cmdtable.h"
#include "err.h"

#include <stdlib.h>
#include <string.h>

struct CmdContext {
    int calls;
    char last[64];
    int last_argc;
    char last_arg1[64];
    char trace[64];   /* the order of steps (s) and handlers (h, r: routed) */
};

static void trace(CmdContext *ctx, char c)
{
    size_t n = strlen(ctx->trace);
    if (n + 1 < sizeof ctx->trace) ctx->trace[n] = c, ctx->trace[n + 1] = 0;
}

static int fake_handler(CmdContext *ctx, int argc, const LexWord *argv)
{
    ctx->calls++;
    trace(ctx, 'h');
    snprintf(ctx->last, sizeof ctx->last, "%s", argv[0].text);
    ctx->last_argc = argc;
    snprintf(ctx->last_arg1, sizeof ctx->last_arg1, "%s", argc > 1 ? argv[1].text : "");
    return strcmp(argv[0].text, "fail") == 0 ? LM_ESTATE : LM_OK;
}

static const CmdArgSpec train_keys[] = {
    {"steps", "steps=N", NULL},
    {"epochs", "epochs=N", NULL},
    {NULL, NULL, NULL},
};


static int routed_handler(CmdContext *ctx, int argc, const LexWord *argv)
{
    (void)argc, (void)argv;
    trace(ctx, 'r');
    return LM_OK;
}

/* `train seeds=N` runs routed_handler instead of the entry's handler. */
static CmdHandler seeds_route(int argc, const LexWord *argv)
{
    for (int i = 1; i < argc; i++)
        if (argv[i].key && !strcmp(argv[i].key, "seeds")) return routed_handler;
    return NULL;
}

static void step(CmdContext *ctx)
{
    trace(ctx, 's');
}
static const CmdArgSpec sample_keys[] = {
    {"prompt", "prompt=TEXT", NULL},
    {"mode", "mode=greedy|temp", "greedy|temp|topk"},
    {NULL, NULL, NULL},
};

static const CmdSub job_subs[] = {
    {"status", "", "how it goes", 0},
    {"resume", "[ID]", "continue", 0},
    {"wait", "", "until it ends", CMD_BLOCKS},
    {NULL, NULL, NULL, 0},
};

static const Command table[] = {
    {"train", "[steps=N|epochs=N] [key=value ...]", "train a model with the current config",
     "Trains until the budget is spent.", ARG_CONFIG_KEYVAL, train_keys, fake_handler,
     "training", 0, NULL, seeds_route},
    {"status", "", "show the running job", NULL, ARG_NONE, NULL, fake_handler, "training", 0, NULL, NULL},
    {"runs", "[RUN_ID]", "list runs or show one", NULL, ARG_RUN_ID, NULL, fake_handler, "runs", 0, NULL, NULL},
    {"sample", "[prompt=TEXT] [mode=...]", "generate text", NULL, ARG_KEYVAL, sample_keys,
     fake_handler, "training", 0, NULL, NULL},
    {"help", "[COMMAND]", "show help", NULL, ARG_COMMAND, NULL, fake_handler, NULL, 0, NULL, NULL},
    {"fail", "", "always fails", NULL, ARG_WORD, NULL, fake_handler, "runs", 0, NULL, NULL},
    {"job", "status|resume [ID]|wait | key=value ...", "a job", NULL, ARG_WORD, NULL,
     fake_handler, "training", 0, job_subs, NULL},
    {"wait", "", "wait for the job", NULL, ARG_NONE, NULL, fake_handler, "training",
     CMD_BLOCKS | CMD_STEP_AFTER, NULL, NULL},
    {"rm", "RUN_ID", "delete a run", NULL, ARG_RUN_ID, NULL, fake_handler, "runs",
     CMD_DESTRUCTIVE, NULL, NULL},
};
static const int n_table = (int)(sizeof table / sizeof table[0]);

static int provider_calls;

static int fake_provider(void *ud, int what, const char *key, const char *prefix, char ***out)
{
    (void)ud;
    (void)prefix; /* returns everything; the engine must filter */
    provider_calls++;
    const char *model[] = {"dispatcher", "dispatcher-mh", "msa", "linear", "lstm", "gru", "rnn"};
    const char *keys[] = {"model", "lr", "layers", "steps" /* duplicate of a train key */};
    const char *runs[] = {"r0001", "r0002", "r0105"};
    const char **src = NULL;
    int n = 0;
    if (what == COMPLETE_CONFIG_VALUES && key && strcmp(key, "model") == 0) {
        src = model;
        n = 7;
    } else if (what == ARG_CONFIG_KEYVAL) {
        src = keys;
        n = 4;
    } else if (what == ARG_RUN_ID) {
        src = runs;
        n = 3;
    }
    if (n == 0) return 0;
    *out = malloc((size_t)n * sizeof **out);
    for (int i = 0; i < n; i++) (*out)[i] = strdup(src[i]);
    return n;
}

static int streq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static void test_find(void)
{
    char err[LM_ERR_LEN];
    const Command *c;
    CHECK(cmdtable_find(table, n_table, "runs", &c, err) == LM_OK && c == &table[2], "find");
    CHECK(cmdtable_find(table, n_table, "trian", &c, err) == LM_EARG && c == NULL, "unknown");
    CHECK(strstr(err, "unknown command 'trian'") && strstr(err, "did you mean 'train'?"),
          "suggestion: %s", err);
    CHECK(cmdtable_find(table, n_table, "xyzzy", &c, err) == LM_EARG && !strstr(err, "mean"),
          "no suggestion: %s", err);
}

/* The caller's step runs once per command whose words checked: before its handler, after
 * it for CMD_STEP_AFTER; a route picks another handler for a form of the command. */
static void test_dispatch_each(void)
{
    char err[LM_ERR_LEN];
    CmdContext ctx = {0};
    int st = cmdtable_dispatch_each(table, n_table, &ctx, "status; wait; train steps=5; "
                                    "train seeds=3", step, err);
    CHECK(st == LM_OK && streq(ctx.trace, "shhsshsr"), "steps and routes: %d %s (%s)", st,
          ctx.trace, err);
    ctx.trace[0] = 0;
    st = cmdtable_dispatch_each(table, n_table, &ctx, "status now; status", step, err);
    CHECK(st == LM_EARG && ctx.trace[0] == 0, "no step for refused words: %s", ctx.trace);
    ctx.trace[0] = 0;
    st = cmdtable_dispatch_each(table, n_table, &ctx, "fail; status", step, err);
    CHECK(st == LM_ESTATE && streq(ctx.trace, "sh"), "a failure stops after its step: %s",
          ctx.trace);
    ctx.trace[0] = 0;
    CHECK(cmdtable_dispatch(table, n_table, &ctx, "train seeds=2", err) == LM_OK &&
          streq(ctx.trace, "r"), "routes without a step too: %s", ctx.trace);
}

static void test_dispatch(void)
{
    char err[LM_ERR_LEN];
    CmdContext ctx = {0};
    int st = cmdtable_dispatch(table, n_table, &ctx, "train steps=5 lr=0.1; runs r0001 # x", err);
    CHECK(st == LM_OK && ctx.calls == 2, "two commands: st %d calls %d %s", st, ctx.calls, err);
    CHECK(streq(ctx.last, "runs") && ctx.last_argc == 2 && streq(ctx.last_arg1, "r0001"),
          "last call %s %d %s", ctx.last, ctx.last_argc, ctx.last_arg1);
    ctx.calls = 0;
    CHECK(cmdtable_dispatch(table, n_table, &ctx, "  # nothing", err) == LM_OK && ctx.calls == 0,
          "comment line");
    st = cmdtable_dispatch(table, n_table, &ctx, "sample lrr=1", err);
    CHECK(st == LM_EARG && ctx.calls == 0, "unknown key st %d", st);
    CHECK(strstr(err, "unknown key 'lrr' for 'sample'") != NULL, "message: %s", err);
    CHECK(strstr(err, "\n  sample lrr=1\n         ^^^\n") != NULL, "caret: %s", err);
    st = cmdtable_dispatch(table, n_table, &ctx, "sample mode=gredy", err);
    CHECK(st == LM_EARG && strstr(err, "bad value 'gredy' for mode (one of greedy|temp|topk)") &&
          strstr(err, "did you mean 'greedy'") && strstr(err, "\n              ^^^^^\n"),
          "bad enum: %s", err);
    st = cmdtable_dispatch(table, n_table, &ctx, "sample promt=hi", err);
    CHECK(st == LM_EARG && strstr(err, "did you mean 'prompt'"), "key suggestion: %s", err);
    st = cmdtable_dispatch(table, n_table, &ctx, "status now", err);
    CHECK(st == LM_EARG && strstr(err, "'status' takes no arguments") &&
          strstr(err, "\n         ^^^\n"), "no args: %s", err);
    st = cmdtable_dispatch(table, n_table, &ctx, "train fast", err);
    CHECK(st == LM_EARG && strstr(err, "takes key=value arguments, not 'fast'"), "bare: %s", err);
    st = cmdtable_dispatch(table, n_table, &ctx, "sample hello", err);   /* a prompt key */
    CHECK(st == LM_EARG && strstr(err, "takes key=value arguments, not 'hello' — a prompt's "
                                        "text goes in prompt=\"hello\""), "prompt hint: %s", err);
    st = cmdtable_dispatch(table, n_table, &ctx, "status; trian", err);
    CHECK(st == LM_EARG && ctx.calls == 1 && strstr(err, "did you mean 'train'") &&
          strstr(err, "\n  status; trian\n          ^^^^^\n"), "second unknown: %s", err);
    st = cmdtable_dispatch(table, n_table, &ctx, "sample prompt=\"To be", err);
    CHECK(st == LM_EARG && strstr(err, "unterminated double quote") &&
          strstr(err, "\n                ^^^^^^\n"), "lex error caret: %s", err);
    ctx.calls = 0;
    st = cmdtable_dispatch(table, n_table, &ctx, "fail; status", err);
    /* the handler reports its own error: err stays empty, the status is the handler's */
    CHECK(st == LM_ESTATE && ctx.calls == 1 && err[0] == 0,
          "handler failure stops: %d %s", st, err);
    /* ARG_CONFIG_KEYVAL leaves unknown keys to the config table; enums are still checked */
    CHECK(cmdtable_dispatch(table, n_table, &ctx, "train whatever=1", err) == LM_OK, "config key");
}

static void test_help(void)
{
    char err[LM_ERR_LEN], *text = NULL;
    CHECK(cmdtable_help(table, n_table, NULL, &text, err) == LM_OK && text, "help all");
    for (int i = 0; text && i < n_table; i++)
        CHECK(strstr(text, table[i].summary) && strstr(text, table[i].name),
              "help lists '%s'", table[i].name);
    if (text) {
        char *tr = strstr(text, "training:\n"), *ru = strstr(text, "runs:\n");
        CHECK(tr && ru && tr < ru, "groups in table order");
        CHECK(ru && strstr(ru, "always fails") && !strstr(ru, "generate text"),
              "commands under their group");
        CHECK(strstr(text, "  train [steps=N|epochs=N] [key=value ...]  train a model") != NULL,
              "aligned line");
    }
    free(text);
    CHECK(cmdtable_help(table, n_table, "sample", &text, err) == LM_OK && text, "help one");
    if (text) {
        CHECK(strstr(text, "usage: sample [prompt=TEXT] [mode=...]") && strstr(text, "generate text"),
              "usage: %s", text);
        CHECK(strstr(text, "mode=greedy|temp") && strstr(text, "one of greedy|temp|topk"),
              "keys: %s", text);
    }
    free(text);
    text = NULL;
    CHECK(cmdtable_help(table, n_table, "smaple", &text, err) == LM_EARG && text == NULL &&
          strstr(err, "did you mean 'sample'"), "help unknown: %s", err);
}

/* Completes line at its end (or at cursor >= 0) and checks the candidate list. */
static void expect(const char *line, int cursor, const char *want, int want_start)
{
    char **c = NULL;
    int n = -1, ws = -1;
    if (cursor < 0) cursor = (int)strlen(line);
    int st = cmdtable_complete(table, n_table, line, cursor, fake_provider, NULL, &c, &n, &ws);
    char got[512] = "";
    for (int i = 0; i < n; i++) {
        strcat(got, i ? " " : "");
        strcat(got, c[i]);
    }
    CHECK(st == LM_OK && streq(got, want), "complete '%s': got '%s', want '%s'", line, got, want);
    CHECK(ws == want_start, "complete '%s': word start %d, want %d", line, ws, want_start);
    cmdtable_free_cands(c, n);
}

static void test_complete(void)
{
    expect("", -1, "fail help job rm runs sample status train wait", 0);
    expect("s", -1, "sample status", 0);
    expect("  tr", -1, "train", 2);
    expect("status; ru", -1, "runs", 8);
    expect("train ", -1, "epochs= layers= lr= model= steps=", 6);
    expect("train l", -1, "layers= lr=", 6);
    provider_calls = 0;
    expect("train model=", -1, "dispatcher dispatcher-mh gru linear lstm msa rnn", 12);
    CHECK(provider_calls == 1, "provider asked once (%d)", provider_calls);
    expect("train lr=0.1 model=dis", -1, "dispatcher dispatcher-mh", 19);
    expect("train model=zz", -1, "", 12);
    expect("sample mode=t", -1, "temp topk", 12);
    expect("sample ", -1, "mode= prompt=", 7);
    expect("sample prompt=\"To", -1, "", 14);  /* inside quotes: nothing */
    expect("runs r01", -1, "r0105", 5);
    expect("runs ", -1, "r0001 r0002 r0105", 5);
    expect("help st", -1, "status", 5);
    expect("status ", -1, "", 7);
    expect("nosuch a", -1, "", 7);
    expect("train # model=", -1, "", 14);
    expect("train model=g; s", -1, "sample status", 15);
    expect("train st more", 8, "steps=", 6);  /* cursor inside the line */
    expect("train ste", 9, "steps=", 6);
    expect("job ", -1, "resume status wait", 4);   /* subcommands of the first word */
    expect("job st", -1, "status", 4);
    expect("job status ", -1, "", 11);             /* only the first word */
    expect("job lr=1 ", -1, "", 9);
}

/* Subcommands are checked; blocking comes from the table's flags, not the typed text. */
static void test_subs_and_flags(void)
{
    char err[LM_ERR_LEN], *text = NULL;
    CmdContext ctx = {0};
    int st = cmdtable_dispatch(table, n_table, &ctx, "job stauts", err);
    CHECK(st == LM_EARG && ctx.calls == 0 && strstr(err, "did you mean 'job status'") &&
          strstr(err, "\n  job stauts\n      ^^^^^^\n"), "bad subcommand: %s", err);
    st = cmdtable_dispatch(table, n_table, &ctx, "job xyzzyq", err);
    CHECK(st == LM_EARG && strstr(err, "one of status, resume, wait"), "no near one: %s", err);
    CHECK(cmdtable_dispatch(table, n_table, &ctx, "job resume 3; job lr=1,2", err) == LM_OK &&
          ctx.calls == 2, "subcommand with an argument, key=value first: %s", err);
    CHECK(cmdtable_blocks(table, n_table, "wait") == 1, "wait blocks");
    CHECK(cmdtable_blocks(table, n_table, "job wait") == 1, "job wait blocks");
    CHECK(cmdtable_blocks(table, n_table, "status; job wait # x") == 1, "second command");
    CHECK(cmdtable_blocks(table, n_table, "job status") == 0, "job status does not block");
    CHECK(cmdtable_blocks(table, n_table, "sample prompt=wait") == 0, "a value named wait");
    CHECK(cmdtable_blocks(table, n_table, "runs wait") == 0, "an argument named wait");
    CHECK(cmdtable_blocks(table, n_table, "wiat; \"wait") == 0, "bad lines do not block");
    CHECK(streq(cmdtable_hint(table, n_table, "job resume"), "[ID]"), "subcommand hint");
    CHECK(streq(cmdtable_hint(table, n_table, "job status"), table[6].args_hint),
          "empty subcommand hint: the command's");
    CHECK(cmdtable_help(table, n_table, "job", &text, err) == LM_OK && text &&
          strstr(text, "subcommands:") && strstr(text, "resume [ID]") &&
          strstr(text, "until it ends (blocks until it ends)"), "help job: %s", text);
    free(text);
    text = NULL;
    CHECK(cmdtable_help(table, n_table, "rm", &text, err) == LM_OK && text &&
          strstr(text, "Destructive"), "help rm: %s", text);
    free(text);
}

static void test_hint(void)
{
    CHECK(streq(cmdtable_hint(table, n_table, "train"), table[0].args_hint), "hint train");
    CHECK(streq(cmdtable_hint(table, n_table, "train lr=1 "), table[0].args_hint), "hint later");
    CHECK(streq(cmdtable_hint(table, n_table, "sample mode="), "mode=greedy|temp"), "key hint");
    CHECK(cmdtable_hint(table, n_table, "tra") == NULL, "partial name: no hint");
    CHECK(cmdtable_hint(table, n_table, "status") == NULL, "empty args_hint");
    CHECK(cmdtable_hint(table, n_table, "train; ") == NULL, "new command");
    CHECK(streq(cmdtable_hint(table, n_table, "status; runs"), "[RUN_ID]"), "second command");
}

int main(void)
{
    test_find();
    test_dispatch();
    test_dispatch_each();
    test_help();
    test_complete();
    test_hint();
    test_subs_and_flags();
    return check_summary();
}
