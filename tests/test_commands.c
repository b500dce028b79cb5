/* test_commands.c — the history commands (runs, run, compare, tag, note, rm, export)
 * through the real command table in script mode, in text and JSON output, against a
 * store filled directly through core/runstore.h with four runs of different models,
 * configs and validation losses. Checks filters (incl. quotes and semicolons as data),
 * sort and limit, the detail view, config diffs, tags, notes, CSV/JSON export read back
 * from disk, deletion, and one clear error for each bad input. Not a test of training
 * or of the store's SQL (test_session.c, test_runstore.c). */
#include "check.h"
#include "err.h"
#include "metrics.h"
#include "commands.h"
#include "session.h"
#include "session_util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[64];

static int count_lines(const char *t)
{
    int n = 0;
    for (; *t; t++) n += *t == '\n';
    return n;
}

/* The JSON objects of the output, one per line, in an array (caller decrefs). */
static json_t *json_lines(void)
{
    json_t *a = json_array();
    char *copy = strdup(out);
    for (char *sv = NULL, *l = strtok_r(copy, "\n", &sv); l; l = strtok_r(NULL, "\n", &sv)) {
        json_t *o = json_loads(l, 0, NULL);
        if (o) json_array_append_new(a, o);
    }
    free(copy);
    return a;
}

/* The ids of the JSON lines, as "3,2,1" (for order checks). */
static const char *json_ids(void)
{
    static char ids[256];
    ids[0] = 0;
    json_t *a = json_lines();
    for (size_t i = 0; i < json_array_size(a); i++) {
        size_t u = strlen(ids);
        snprintf(ids + u, sizeof ids - u, "%s%lld", i ? "," : "",
                 (long long)json_integer_value(json_object_get(json_array_get(a, i), "id")));
    }
    json_decref(a);
    return ids;
}

/* A JSON string value, "" when absent (so a failed check cannot crash the test). */
static const char *js(const json_t *v)
{
    const char *t = json_string_value(v);
    return t ? t : "";
}

typedef struct {
    const char *name, *model, *config, *status;
    long params;
    double val[2];   /* two validation losses (NAN: none) */
} Spec;

#define CK "checkpoint_every=25\nkeep_checkpoints=1\n"   /* run 2's step 75 is pruned */
static const Spec SPECS[] = {
    {"disp-small", "dispatcher", "model=dispatcher\nlr=0.003\nd_model=128\nbptt=64\n" CK,
     "finished", 120000, {2.5, 2.1}},
    {"msa-a", "msa", "model=msa\nlr=0.0005\nd_model=128\nbptt=64\n" CK, "finished", 1234567,
     {1.9, 2.0}},
    {"msa-b", "msa", "model=msa\nlr=0.0001\nd_model=256\nbptt=64\n" CK, "stopped", 2500000,
     {1.8, 1.7}},
    {"lstm-nan", "lstm", "model=lstm\nlr=0.01\nd_model=128\nbptt=64\n" CK, "diverged", 900,
     {NAN, NAN}},
};

/* Creates the four runs (ids 1..4), 10 steps each, checkpoints and samples on run 2,
 * a checkpoint file for run 4, and a sweep over runs 2 and 3. Returns the sweep id. */
static long fill_store(const char *db)
{
    RunStore *st;
    char err[LM_ERR_LEN];
    long id = 0, sweep = 0;
    CHECK(runstore_open(db, &st, err) == LM_OK, "open: %s", err);
    if (!st) return 0;
    for (int r = 0; r < 4; r++) {
        const Spec *p = &SPECS[r];
        RunInfo info = {.name = p->name, .config = p->config, .model = p->model,
                        .data_name = "tinyshakespeare", .data_hash = "abc123",
                        .tokenizer = "char", .machine = "test box", .git_rev = "deadbeef",
                        .params = p->params};
        CHECK(runstore_run_create(st, &info, &id, err) == LM_OK && id == r + 1, "create: %s",
              err);
        for (long k = 1; k <= 10; k++) {
            StepMetric m = {.step = k * 10, .tokens = k * 640, .loss = 3.0f - 0.1f * k,
                            .lr = 1e-3f, .tokens_per_s = 5000, .elapsed = k};
            runstore_log_step(st, id, &m, err);
        }
        for (int e = 0; e < 2 && !isnan(p->val[e]); e++) {
            EvalMetric ev = {.step = 50 * (e + 1), .split = "valid", .loss = p->val[e],
                             .ppl = exp(p->val[e]), .bpc = NAN};
            runstore_log_eval(st, id, &ev, err);
        }
        CHECK(runstore_flush(st, err) == LM_OK, "flush: %s", err);
        CHECK(runstore_run_set_status(st, id, p->status, r == 3 ? "loss became NaN" : NULL,
                                      err) == LM_OK, "status: %s", err);
    }
    /* run 2's checkpoints: two files that exist, one (step 75) that keep_checkpoints
     * removed (checkpoint_every=25 keep_checkpoints=1), one (step 90, off its grid: a
     * `checkpoint ID`) deleted by hand; the recorded val_loss is the trainer's best-so-far
     * (1.9 at step 100), `run` shows each file's own evaluation instead (2.0 at step 100) */
    CheckpointRecord c1 = {.step = 50, .val_loss = 1.9, .is_best = 1};
    CheckpointRecord c2 = {.step = 100, .val_loss = 1.9};
    CheckpointRecord c3 = {.step = 75, .val_loss = 1.9};
    snprintf(c1.path, sizeof c1.path, "%s/step50.safetensors", tmpdir);
    snprintf(c2.path, sizeof c2.path, "%s/step100.safetensors", tmpdir);
    snprintf(c3.path, sizeof c3.path, "%s/step75.safetensors", tmpdir);
    for (const char *p2 = c1.path; p2; p2 = p2 == c1.path ? c2.path : NULL) {
        FILE *cf = fopen(p2, "w");
        if (cf) fclose(cf);
    }
    runstore_log_checkpoint(st, 2, &c1, err);
    runstore_log_checkpoint(st, 2, &c2, err);
    runstore_log_checkpoint(st, 2, &c3, err);
    CheckpointRecord c5 = {.step = 90, .val_loss = 1.9};
    snprintf(c5.path, sizeof c5.path, "%s/step90.safetensors", tmpdir);
    runstore_log_checkpoint(st, 2, &c5, err);
    CheckpointRecord c4 = {.step = 10, .val_loss = NAN};   /* a real file, for rm, in the */
    char dir4[128];                                        /* run's own (signed) folder */
    snprintf(dir4, sizeof dir4, "%s/run4", tmpdir);
    mkdir(dir4, 0755);
    CHECK(runstore_set_checkpoint_dir(st, 4, dir4, err) == LM_OK, "run 4's folder: %s", err);
    snprintf(c4.path, sizeof c4.path, "%s/ck4.safetensors", dir4);
    FILE *f = fopen(c4.path, "w");
    if (f) fclose(f);
    runstore_log_checkpoint(st, 4, &c4, err);
    const char *texts[] = {"first sample", "second sample", "third\nsample", "fourth sample"};
    for (int k = 0; k < 4; k++)
        runstore_log_sample(st, 2, 25 * (k + 1), "ROMEO:", "temp=0.8", texts[k], err);
    CHECK(runstore_sweep_create(st, "lr-sweep", "lr=0.0005,0.0001", "grid", &sweep, err) ==
          LM_OK, "sweep: %s", err);
    runstore_sweep_trial_set(st, sweep, 0, 2, "lr=0.0005", "finished", err);
    runstore_sweep_trial_set(st, sweep, 1, 3, "lr=0.0001", "finished", err);
    runstore_close(st);
    return sweep;
}

static void test_runs_text(Session *s)
{
    CHECK(run(s, "runs") == LM_OK && n_errors == 0, "runs: %s", out);
    CHECK(count_lines(out) == 5, "header + 4 runs: %s", out);
    CHECK(!strncmp(out, "  id  name", 10) && strstr(out, "best val (ppl)") && strstr(out, "tags"),
          "header: %s", out);
    CHECK(strstr(out, "1.2M") && strstr(out, "120.0K") && strstr(out, "2.5M"), "params: %s",
          out);
    CHECK(strstr(out, "1.7000 (5.47)") && strstr(out, "diverged"), "losses: %s", out);
    int y, mo, d, h, mi;
    const char *l2 = strchr(out, '\n') + 1;
    const char *dash = strstr(l2, " 20");
    CHECK(dash && sscanf(dash, " %4d-%2d-%2d %2d:%2d", &y, &mo, &d, &h, &mi) == 5,
          "created as YYYY-MM-DD HH:MM: %s", l2);
    CHECK(run(s, "runs model=msa") == LM_OK && count_lines(out) == 3 && strstr(out, "msa-a") &&
          strstr(out, "msa-b") && !strstr(out, "disp-small"), "model=msa: %s", out);
    CHECK(run(s, "runs \"name=x'; DROP TABLE runs; --\"") == LM_OK && n_errors == 0 &&
          strstr(out, "no runs match"), "injection as data: %s", out);
    CHECK(run(s, "runs name=\"a;b\" model='msa\"'") == LM_OK && strstr(out, "no runs match"),
          "quoted semicolon: %s", out);
    CHECK(run(s, "runs") == LM_OK && count_lines(out) == 5, "still 4 runs: %s", out);
    CHECK(run(s, "runs name~\"sa-\"") == LM_OK && count_lines(out) == 3, "name~: %s", out);
}

static void test_runs_json(Session *s)
{
    CHECK(run(s, "runs sort=best") == LM_OK && !strcmp(json_ids(), "3,2,1,4"),
          "sort=best: %s", out);
    json_t *a = json_lines();
    json_t *r3 = json_array_get(a, 0), *r4 = json_array_get(a, 3);
    CHECK(json_array_size(a) == 4, "4 objects: %s", out);
    CHECK(fabs(json_real_value(json_object_get(r3, "best_val")) - 1.7) < 1e-9 &&
          fabs(json_real_value(json_object_get(r3, "final_val")) - 1.7) < 1e-9 &&
          json_integer_value(json_object_get(r3, "params")) == 2500000 &&
          json_integer_value(json_object_get(r3, "steps")) == 100 &&
          !strcmp(js(json_object_get(r3, "model")), "msa"), "run 3: %s", out);
    CHECK(json_is_null(json_object_get(r4, "best_val")) &&
          json_is_null(json_object_get(r4, "final_val")), "NaN is null: %s", out);
    json_decref(a);
    CHECK(run(s, "runs lr<0.001") == LM_OK && !strcmp(json_ids(), "3,2"), "lr<: %s", out);
    CHECK(run(s, "runs lr<=0.0005 sort=best") == LM_OK && !strcmp(json_ids(), "3,2"),
          "lr<=: %s", out);
    CHECK(run(s, "runs lr>=0.003 d_model=128") == LM_OK && !strcmp(json_ids(), "4,1"),
          "lr>= and d_model: %s", out);
    CHECK(run(s, "runs sort=best limit=2") == LM_OK && !strcmp(json_ids(), "3,2"),
          "limit: %s", out);
    CHECK(run(s, "runs sort=name") == LM_OK && !strcmp(json_ids(), "1,4,2,3"), "name: %s", out);
    CHECK(run(s, "runs model=none") == LM_OK && out_len == 0, "empty JSON list: %s", out);
}

static void test_run_detail(Session *s)
{
    s->json = 0;
    CHECK(run(s, "run 2") == LM_OK, "run 2: %s", out);
    CHECK(strstr(out, "msa-a") && strstr(out, "lr=0.0005") && strstr(out, "abc123") &&
          strstr(out, "deadbeef") && strstr(out, "test box") && strstr(out, "finished"),
          "fields: %s", out);
    CHECK(strstr(out, "step50.safetensors  * best") && strstr(out, "step100.safetensors"),
          "checkpoints: %s", out);
    CHECK(!strstr(out, "step75.safetensors") && strstr(out, "1 older checkpoint file removed"),
          "a removed checkpoint is not listed: %s", out);
    CHECK(!strstr(out, "step90.safetensors") &&
          strstr(out, "(1 recorded checkpoint file is missing, not removed by keep_checkpoints: "
                      "deleted or moved outside lmlab; the newest was step 90's)"),
          "a checkpoint deleted by hand is not keep_checkpoints': %s", out);
    CHECK(strstr(out, "step 100      val 2.0000") && !strstr(out, "step 100      val 1.9"),
          "each checkpoint with its own evaluation: %s", out);
    CHECK(!strstr(out, "first sample") && strstr(out, "second sample") &&
          strstr(out, "    third\n    sample") && strstr(out, "fourth sample"),
          "last 3 samples, indented: %s", out);
    CHECK(run(s, "run 4") == LM_OK && strstr(out, "diverged — loss became NaN"),
          "reason: %s", out);
    s->json = 1;
    CHECK(run(s, "run 2") == LM_OK && count_lines(out) == 1, "run JSON: %s", out);
    json_t *o = json_loads(out, 0, NULL);
    json_t *ck = json_object_get(o, "checkpoints"), *sm = json_object_get(o, "samples");
    json_t *cfg = json_object_get(o, "config");
    CHECK(json_is_real(json_object_get(cfg, "lr")) &&
          json_real_value(json_object_get(cfg, "lr")) == 0.0005 &&
          json_is_integer(json_object_get(cfg, "d_model")) &&
          json_integer_value(json_object_get(cfg, "d_model")) == 128, "typed config: %s", out);
    CHECK(json_array_size(ck) == 2 && json_is_true(json_object_get(json_array_get(ck, 0), "best"))
          && json_integer_value(json_object_get(json_array_get(ck, 1), "step")) == 100 &&
          json_real_value(json_object_get(json_array_get(ck, 1), "val_loss")) == 2.0,
          "checkpoints: %s", out);
    CHECK(json_array_size(sm) == 3 && !strcmp(js(json_object_get(
          json_array_get(sm, 2), "text")), "fourth sample"), "samples: %s", out);
    CHECK(!strcmp(js(json_object_get(o, "data_hash")), "abc123") &&
          json_integer_value(json_object_get(o, "steps")) == 100, "fields: %s", out);
    json_decref(o);
}

/* The column (in characters, a UTF-8 character one) where byte offset b of line is. */
static int column_at(const char *line, size_t b)
{
    int c = 0;
    for (size_t i = 0; i < b; i++) c += ((unsigned char)line[i] & 0xC0) != 0x80;
    return c;
}

/* The byte offset of column col in line, or -1 past its end. */
static int byte_of_column(const char *line, int col)
{
    int c = 0;
    for (int i = 0; line[i]; i++) {
        if (((unsigned char)line[i] & 0xC0) == 0x80) continue;
        if (c++ == col) return i;
    }
    return -1;
}

/* Checks that in the table in out (its first line the header) every row's cell of each
 * of the n columns named in the header starts where the name does (in characters),
 * after a space; a row starting with "numbers," or '(' is not a table row. Returns the
 * rows checked, -1 when a name is not in the header. */
static int columns_aligned(const char **names, int n)
{
    char *copy = strdup(out), *save = NULL;
    const char *head = strtok_r(copy, "\n", &save);
    int col[8], rows = 0;
    for (int k = 0; k < n && k < 8; k++) {
        const char *at = head ? strstr(head, names[k]) : NULL;
        CHECK(at, "'%s' in the header: %s", names[k], out);
        if (!at) {
            free(copy);
            return -1;
        }
        col[k] = column_at(head, (size_t)(at - head));
    }
    for (char *l = strtok_r(NULL, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(l, "numbers,", 8) || l[0] == '(') continue;
        for (int k = 0; k < n && k < 8; k++) {
            int b = byte_of_column(l, col[k]), p = byte_of_column(l, col[k] - 1);
            CHECK(b > 0 && p > 0 && l[p] == ' ' && l[b] != ' ', "the %s column (at %d): '%s'",
                  names[k], col[k], l);
        }
        rows++;
    }
    free(copy);
    return rows;
}

/* compare's text table of two runs with a prompt of 51 characters, a name of 50 with
 * two non-ASCII letters and a label longer than the old 18-wide column ("tokens_per_s
 * (mean)"): every value starts where its run's column starts in the header, and a value
 * over 40 characters is cut at its end, marked '…' (test_textcol has the cuts
 * themselves). A setting compare does not know (an older version's) is not a row. `runs`
 * and `runs columns=` cut the name at 40 characters (not bytes) and keep their columns. */
static void test_compare_aligned(Session *s)
{
    char err[LM_ERR_LEN];
    const char *cfg[2] = {
        "model=msa\nlr=0.001\nsample_prompt=It was the best of times, it was the worst of "
        "times\nan_older_versions_setting_named_at_some_length_a=1\n",
        "model=msa\nlr=0.002\nsample_prompt=Hi\n"
        "an_older_versions_setting_named_at_some_length_a=2\n"};
    const char *name = "wide-b-\xc3\xbcnic\xc3\xb6" "de-a-name-longer-than-forty-characters",
               *cut = "  wide-b-\xc3\xbcnic\xc3\xb6" "de-a-name-longer-than-forty\xe2\x80\xa6";
    long ids[2] = {0, 0};
    RunStore *st = session_store(s);
    for (int r = 0; st && r < 2; r++) {
        RunInfo info = {.name = r ? name : "wide-a", .config = cfg[r], .model = "msa",
                        .data_name = "tinyshakespeare", .tokenizer = "char", .params = 900};
        CHECK(runstore_run_create(st, &info, &ids[r], err) == LM_OK, "create: %s", err);
        StepMetric m = {.step = 10, .tokens = 640, .loss = 3.0f, .lr = 1e-3f,
                        .tokens_per_s = 5000, .elapsed = 1};
        runstore_log_step(st, ids[r], &m, err);
    }
    CHECK(st && runstore_flush(st, err) == LM_OK, "flush: %s", err);
    char line[64];
    snprintf(line, sizeof line, "compare %ld %ld", ids[0], ids[1]);
    s->json = 0;
    CHECK(run(s, line) == LM_OK, "compare: %s", out);
    char want[2][16];
    for (int k = 0; k < 2; k++) snprintf(want[k], sizeof want[k], "run %ld", ids[k]);
    const char *cols[] = {want[0], want[1]};
    CHECK(columns_aligned(cols, 2) > 10, "compare's rows: %s", out);
    CHECK(strstr(out, "  It was the best of times, it was the wo\xe2\x80\xa6  Hi\n"),
          "a long value cut at its end, marked: %s", out);
    CHECK(strstr(out, "\ntokens_per_s (mean)  ") && !strstr(out, "an_older"),
          "tokens_per_s's row, no unknown setting: %s", out);
    CHECK(strstr(out, "\nname  ") && strstr(out, cut), "a long name cut to 40 characters, "
          "not bytes: %s", out);
    char want_row[128];
    CHECK(run(s, "runs") == LM_OK, "runs: %s", out);   /* the name column, then model */
    const char *rcols[] = {"name", "model", "status"};
    snprintf(want_row, sizeof want_row, "%s  msa", cut);
    CHECK(columns_aligned(rcols, 3) >= 2 && strstr(out, want_row), "runs: %s", out);
    CHECK(run(s, "runs columns=id,name,lr") == LM_OK, "runs columns=: %s", out);
    const char *tcols[] = {"name", "lr"};
    snprintf(want_row, sizeof want_row, "%s  0.002", cut);
    CHECK(columns_aligned(tcols, 2) >= 2 && strstr(out, want_row), "runs columns=: %s", out);
}

static void test_compare(Session *s)
{
    s->json = 0;
    CHECK(run(s, "compare 2 3") == LM_OK, "compare: %s", out);
    CHECK(strstr(out, "\nlr ") && strstr(out, "\nd_model ") && !strstr(out, "\nbptt") &&
          !strstr(out, "\nmodel "), "only differing keys: %s", out);
    s->json = 1;
    CHECK(run(s, "compare 2 3 1") == LM_OK && count_lines(out) == 1, "compare JSON: %s", out);
    json_t *o = json_loads(out, 0, NULL), *diff = json_object_get(o, "diff");
    CHECK(json_array_size(json_object_get(o, "runs")) == 3 &&
          json_integer_value(json_array_get(json_object_get(o, "runs"), 2)) == 1, "runs: %s",
          out);
    CHECK(json_object_size(diff) == 3 && json_object_get(diff, "lr") &&
          json_object_get(diff, "model") && json_object_get(diff, "d_model") &&
          !json_object_get(diff, "bptt"), "diff keys: %s", out);
    CHECK(json_integer_value(json_array_get(json_object_get(diff, "d_model"), 1)) == 256,
          "diff values in run order, typed as in the run's JSON: %s", out);
    CHECK(fabs(json_real_value(json_array_get(json_object_get(o, "best_val"), 0)) - 1.9) < 1e-9
          && fabs(json_real_value(json_array_get(json_object_get(o, "final_val"), 0)) - 2.0)
          < 1e-9, "losses: %s", out);
    json_decref(o);
}

static void test_tag_note(Session *s)
{
    s->json = 0;
    CHECK(run(s, "tag 2 best") == LM_OK && strstr(out, "run 2 tagged 'best'"), "tag: %s", out);
    CHECK(run(s, "runs tag=best") == LM_OK && count_lines(out) == 2 && strstr(out, "msa-a"),
          "runs tag=best: %s", out);
    CHECK(run(s, "tag 2 \"two words\"") != LM_OK && n_errors == 1, "bad tag: %s", out);
    CHECK(run(s, "note 3 \"lower lr; looks good\"") == LM_OK && strstr(out, "note saved"),
          "note: %s", out);
    s->json = 1;
    CHECK(run(s, "run 3") == LM_OK, "%s", out);
    json_t *o = json_loads(out, 0, NULL);
    CHECK(o && !strcmp(js(json_object_get(o, "notes")), "lower lr; looks good"),
          "note stored: %s", out);
    json_decref(o);
    /* issue 37: every note is kept with its time (the old `note` replaced the one note) */
    s->json = 0;
    CHECK(run(s, "note 3 \"second thought <b>\"") == LM_OK, "second note: %s", out);
    CHECK(run(s, "run 3") == LM_OK && strstr(out, "lower lr; looks good") &&
          strstr(out, "second thought <b>"), "both notes in run 3: %s", out);
    CHECK(run(s, "runs note~THOUGHT") == LM_OK && count_lines(out) == 2 && strstr(out, "msa-b"),
          "runs note~: %s", out);
    CHECK(run(s, "note 3 \"x\" && echo") == LM_OK, "words joined: %s", out);
    s->json = 1;
    CHECK(run(s, "run 3") == LM_OK && (o = json_loads(out, 0, NULL)), "%s", out);
    json_t *nl = json_object_get(o, "note_list");
    CHECK(json_array_size(nl) == 3 && !strcmp(js(json_object_get(json_array_get(nl, 1), "text")),
          "second thought <b>") && json_is_string(json_object_get(json_array_get(nl, 0), "time")),
          "note_list with times: %s", out);
    CHECK(!strcmp(js(json_object_get(o, "notes")), "x && echo"), "notes = the newest: %s", out);
    json_decref(o);
    int nc;   /* `log ID follow` waits for the run: the dashboard refuses that form only */
    const Command *table = session_commands(&nc);
    CHECK(cmdtable_blocks(table, nc, "log 3 follow") == 1 &&
          cmdtable_blocks(table, nc, "log 3 tail=5") == 0 &&
          cmdtable_blocks(table, nc, "note 3 follow") == 0, "log follow blocks, nothing else");
    CHECK(run(s, "runs tag=best") == LM_OK && !strcmp(json_ids(), "2"), "%s", out);
    o = json_loads(out, 0, NULL);
    json_t *tags = json_object_get(o, "tags");
    CHECK(json_array_size(tags) == 1 && !strcmp(js(json_array_get(tags, 0)),
                                                "best"), "tags array: %s", out);
    json_decref(o);
    CHECK(run(s, "tag 3 lowlr") == LM_OK && (o = json_loads(out, 0, NULL)) &&
          json_integer_value(json_object_get(o, "run")) == 3 &&
          json_array_size(json_object_get(o, "tags")) == 1 &&
          !strcmp(js(json_array_get(json_object_get(o, "tags"), 0)), "lowlr"),
          "tag JSON: %s", out);
    json_decref(o);
}

static void test_export(Session *s, long sweep)
{
    char line[512], path[256];
    s->json = 0;
    snprintf(path, sizeof path, "%s/out.csv", tmpdir);
    snprintf(line, sizeof line, "export 1 2 file=%s", path);
    CHECK(run(s, line) == LM_OK && strstr(out, "wrote 2 runs (20 step rows)"), "csv: %s", out);
    FILE *f = fopen(path, "r");
    char buf[8192] = "";
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    if (f) fclose(f);
    /* long form: a header, metrics.def's step metrics x 10 steps x 2 runs, run 1's 2
     * evaluations and run 2's 2 (loss and ppl each; bpc NaN is left out) */
    CHECK(count_lines(buf) == 1 + STEP_METRIC_N * 20 + 4 + 4 && !strncmp(buf, "run,step,metric,value\n", 22),
          "csv file (%d lines): %.200s", count_lines(buf), buf);
    CHECK(strstr(buf, "\n2,30,tokens,1920\n") && strstr(buf, "\n2,100,val_loss,2\n") &&
          strstr(buf, "\n1,100,loss,2\n"), "csv rows of runs 1 and 2: %.300s", buf);
    s->json = 1;
    snprintf(path, sizeof path, "%s/out.json", tmpdir);
    snprintf(line, sizeof line, "export 3 2 format=json file=%s", path);
    CHECK(run(s, line) == LM_OK, "json: %s", out);
    json_t *o = json_loads(out, 0, NULL);
    CHECK(o && json_integer_value(json_object_get(o, "runs")) == 2 &&
          json_integer_value(json_object_get(o, "steps")) == 20, "reply: %s", out);
    json_decref(o);
    json_t *a = json_load_file(path, 0, NULL);
    CHECK(json_array_size(a) == 2 &&
          json_integer_value(json_object_get(json_array_get(a, 0), "id")) == 3 &&
          json_integer_value(json_object_get(json_array_get(a, 1), "id")) == 2,
          "json file holds runs 3 and 2");
    json_decref(a);
    snprintf(path, sizeof path, "%s/sweep.json", tmpdir);
    snprintf(line, sizeof line, "export sweep=%ld file=%s", sweep, path);
    CHECK(run(s, line) == LM_OK && (a = json_load_file(path, 0, NULL)) &&
          json_array_size(a) == 2, "sweep export: %s", out);
    json_decref(a);
    s->json = 0;
    CHECK(run(s, "export 2 file=/nonexistent-dir/x.csv") != LM_OK && n_errors == 1 &&
          strstr(out, "/nonexistent-dir/x.csv"), "unwritable: %s", out);
    CHECK(run(s, "export 2") == LM_OK && !strncmp(out, "run,step,metric,value\n2,10,", 27),
          "no file: csv on stdout: %.200s", out);
    CHECK(run(s, "export 2 file=") != LM_OK && strstr(out, "file= is empty"), "%s", out);
    CHECK(run(s, "export 2 file=x.txt") != LM_OK && strstr(out, "format=csv|json"),
          "unknown extension: %s", out);
    CHECK(run(s, "export file=x.csv") != LM_OK && n_errors == 1, "no ids: %s", out);
    CHECK(run(s, "export 2 99 file=x.csv") != LM_OK && strstr(out, "no run 99"), "%s", out);
}

static void test_rm(Session *s)
{
    s->json = 0;
    /* a fake training run: cmd_rm only compares the pointer with NULL */
    s->trainer = (Trainer *)(void *)s;
    s->run_id = 1;
    CHECK(run(s, "rm 1") == LM_ESTATE && strstr(out, "stop"), "refuses the live run: %s", out);
    s->trainer = NULL;
    s->run_id = 0;
    char ck[128];
    snprintf(ck, sizeof ck, "%s/run4/ck4.safetensors", tmpdir);
    CHECK(access(ck, F_OK) == 0, "checkpoint file of run 4 exists before rm");
    CHECK(run(s, "rm 4 checkpoints=true") != LM_OK && strstr(out, "--yes") &&
          access(ck, F_OK) == 0, "rm in a script without --yes deleted: %s", out);
    CHECK(run(s, "rm 4 checkpoints=true --yes") == LM_OK &&
          strstr(out, "deleted run 4 and the 1 file it wrote"), "rm: %s", out);
    CHECK(access(ck, F_OK) != 0, "rm checkpoints=true removed %s", ck);
    CHECK(run(s, "runs") == LM_OK && count_lines(out) == 4 && !strstr(out, "lstm-nan"),
          "3 runs left: %s", out);
    CHECK(run(s, "run 4") != LM_OK && strstr(out, "no run 4 — `runs` lists them"), "%s", out);
    CHECK(run(s, "rm 4 yes") != LM_OK && strstr(out, "no run 4"), "rm twice: %s", out);
}

/* Each line must fail with exactly one error containing the text. */
static void test_errors(Session *s)
{
    static const char *cases[][2] = {
        {"run abc", "run id expected, got 'abc'"}, {"run", "run id expected"},
        {"run 99", "no run 99 — `runs` lists them"}, {"run 1 2", "one run id"},
        {"runs foo", "invalid filter term 'foo'"}, {"runs lrr<1", "did you mean 'lr'"},
        {"runs best_vall<2", "did you mean 'best_val'"}, {"runs since=yesterday", "since=yesterday"},
        {"runs limit=x", "limit takes a whole number"}, {"runs sort=worst", "sort"},
        {"compare 2", "at least two"}, {"compare", "at least two"},
        {"compare 2 x", "run id expected, got 'x'"}, {"compare 2 77", "no run 77"},
        {"tag", "run id expected"}, {"tag 2", "tag takes one tag"}, {"tag zz best", "'zz'"},
        {"note 2", "note needs the text"}, {"note", "run id expected"},
        {"rm", "run id expected"}, {"rm 2 3", "--yes"}, {"rm -3", "'-3'"},
        {"export 2 file=x.csv sweep=abc", "sweep id expected"},
        {"export 2 file=x.csv sweep=42", "no sweep 42"},
    };
    for (int j = 0; j < 2; j++) {
        s->json = j;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            int rc = run(s, cases[i][0]);
            /* table errors (sort=worst) add caret lines in text mode */
            CHECK(rc != LM_OK && n_errors == 1 && (count_lines(out) == 1 || !j) &&
                  strstr(out, cases[i][1]), "'%s' (json %d) -> %s", cases[i][0], j, out);
        }
    }
    s->json = 0;
    CHECK(run(s, "runs") == LM_OK && count_lines(out) == 4, "still working: %s", out);
}

/* The real table: subcommands complete, and only `wait` / `sweep wait` block. */
static void test_table(Session *s)
{
    int n, nc = 0, ws = 0;
    const Command *t = session_commands(&n);
    const char *lines[] = {"show ", "sweep ", "sweep s"};
    const char *want[] = {"config data machine model", "importance list pause resume show status stop trust wait",
                          "show status stop"};
    for (int i = 0; i < 3; i++) {
        char **c = NULL, got[256] = "";
        CHECK(cmdtable_complete(t, n, lines[i], (int)strlen(lines[i]), session_complete, s, &c,
                                &nc, &ws) == LM_OK, "complete '%s'", lines[i]);
        for (int k = 0; k < nc && strlen(got) + strlen(c[k]) + 2 < sizeof got; k++) {
            strcat(got, k ? " " : "");
            strcat(got, c[k]);
        }
        CHECK(!strcmp(got, want[i]), "complete '%s': '%s', want '%s'", lines[i], got, want[i]);
        cmdtable_free_cands(c, nc);
    }
    CHECK(cmdtable_blocks(t, n, "wait") && cmdtable_blocks(t, n, "status; sweep wait"),
          "wait and sweep wait block");
    CHECK(!cmdtable_blocks(t, n, "sweep status") && !cmdtable_blocks(t, n, "runs; stop"),
          "status, runs, stop do not block");
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/lmlab-cmds-XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    char db[128];
    snprintf(db, sizeof db, "%s/runs.db", tmpdir);
    long sweep = fill_store(db);
    if (chdir(tmpdir)) return 1;   /* a wrongly accepted export lands here, not in the tree */
    Session s;
    session_init(&s, db);
    session_set_writer(&s, capture, NULL);
    test_runs_text(&s);
    s.json = 1;
    test_runs_json(&s);
    test_run_detail(&s);
    test_compare(&s);
    test_tag_note(&s);
    test_export(&s, sweep);
    test_rm(&s);
    test_errors(&s);
    test_table(&s);
    test_compare_aligned(&s);
    session_free(&s);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_summary();
}
