/* cmd_export.c — `export`: runs (by id or a sweep's) as CSV or JSON to a file or the
 * command's output, or as TensorBoard event files to a folder. Not here: the export schema
 * and its writing (runstore_export, core/store), the event files (core/run/tboard.c), the
 * other history commands (cmd_runs.c, cmd_compare.c, cmd_edits.c). */
#include "session.h"
#include "cmd_export.h"
#include "runargs.h"
#include "tboard.h"

#include "err.h"
#include "jsonlines.h"
#include "jsonval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends the run ids of sweep `word` to ids. */
static int sweep_ids(Session *s, RunStore *st, const char *word, long *ids, int *n)
{
    long sw = session_parse_run_id(word);
    if (sw <= 0) return session_error(s, LM_EARG, "sweep id expected, got '%s'", word);
    SweepTrialRow *t = NULL;
    SweepRow row;
    int nt = 0, added = 0;
    char err[LM_ERR_LEN];
    int status = runstore_sweep_get(st, sw, &row, err);
    if (status == LM_EARG) return session_error(s, status, "no sweep %ld", sw);
    if (!status) free(row.spec);
    if (!status) status = runstore_sweep_trials(st, sw, &t, &nt, err);
    if (status) return session_error(s, status, "%s", err);
    for (int i = 0; i < nt && *n < RUNARGS_MAX_IDS; i++)
        if (t[i].run_id > 0) ids[(*n)++] = t[i].run_id, added++;
    free(t);
    if (!added) return session_error(s, LM_EARG, "sweep %ld has no runs to export yet", sw);
    return LM_OK;
}

/* format= or the file's extension. NULL after reporting. */
static const char *export_format(Session *s, const char *format, const char *file)
{
    if (format) return format;
    const char *dot = strrchr(file, '.');
    if (dot && !strcmp(dot, ".csv")) return "csv";
    if (dot && !strcmp(dot, ".json")) return "json";
    session_error(s, LM_EARG, "cannot tell the format from '%s': name it .csv or .json, or "
                  "add format=csv|json", file);
    return NULL;
}

/* The runs' step rows, counted by the store (not read: a 5 M-step run's loss was read
 * whole here, 80 MB, to be counted). */
static long count_steps(RunStore *st, const long *ids, int n)
{
    long total = 0;
    for (int i = 0; i < n; i++) {
        StepMetric last;
        long rows = 0;
        if (runstore_last_step(st, ids[i], &last, &rows, NULL) == LM_OK) total += rows;
    }
    return total;
}

/* export without file=: the CSV or JSON itself as the command's output, streamed so the
 * export is never held whole (1 GB of CSV for a 5 M-step run was; under --json the whole
 * export was parsed back, 1.6 GB for 1 M steps). Under --json it joins the
 * one-object-per-line stream: format=json as one {...run, "event":"export"} object a run,
 * re-encoded as it comes (jsonlines.h: the bytes json_dumps gave of the parsed export),
 * csv as one {"event":"export","format":"csv","csv":TEXT}, TEXT escaped a piece at a
 * time. */

/* The session's output as a stream (jsonlines' put): remembers whether a line is open. */
typedef struct {
    Session *s;
    char last;   /* the last byte put, 0 before any */
} Sink;

static int sink_put(void *ud, const char *text, size_t n)
{
    Sink *k = ud;
    session_stream(k->s, text);
    if (n) k->last = text[n - 1];
    return 0;
}

/* The text export on its way to the session's output: pieces that end at a line's end
 * (a UTF-8 character is never cut, so each piece is escaped as the whole text would be),
 * passed on once 64 KiB wait. */
typedef struct {
    Sink *k;
    char *buf;
    size_t n, cap;
    int oom;
    const char *head;   /* under --json: the line's start, put before the first piece,
                           each piece then the inside of its "csv" string */
    int started;
} Pieces;

static void pieces_pass(Pieces *pc, size_t upto)
{
    char keep = pc->buf[upto];
    pc->buf[upto] = 0;
    if (pc->head && !pc->started++) sink_put(pc->k, pc->head, strlen(pc->head));
    if (!pc->head) session_stream(pc->k->s, pc->buf);
    else if (jsonlines_put_string(pc->buf, upto, sink_put, pc->k)) pc->oom = 1;
    pc->buf[upto] = keep;
    memmove(pc->buf, pc->buf + upto, pc->n - upto);
    pc->n -= upto;
}

static ssize_t pieces_write(void *c, const char *p, size_t n)
{
    Pieces *pc = c;
    if (pc->n + n + 1 > pc->cap) {
        size_t cap = (pc->n + n + 1) * 2;
        char *b = realloc(pc->buf, cap);
        if (!b) { pc->oom = 1; return -1; }
        pc->buf = b, pc->cap = cap;
    }
    memcpy(pc->buf + pc->n, p, n);
    pc->n += n;
    size_t nl = pc->n;
    while (pc->n >= 65536 && nl > 0 && pc->buf[nl - 1] != '\n') nl--;
    if (pc->n >= 65536 && nl > 0) pieces_pass(pc, nl);
    return (ssize_t)n;
}

static int pieces_close(void *c)
{
    Pieces *pc = c;
    if (pc->n && !pc->oom) pieces_pass(pc, pc->n);
    return 0;
}

/* The JSON export on its way to --json's lines. */
static ssize_t lines_write(void *c, const char *p, size_t n)
{
    return jsonlines_write(c, p, n) ? -1 : (ssize_t)n;
}

static int export_print(Session *s, RunStore *st, const long *ids, int n, const char *format)
{
    char err[LM_ERR_LEN], head[96];
    Sink k = {s, 0};
    snprintf(head, sizeof head, "{\"event\":\"export\",\"format\":\"%s\",\"csv\":\"", format);
    int lines = s->json && !strcmp(format, "json");
    Pieces pc = {&k, NULL, 0, 0, 0, s->json && !lines ? head : NULL, 0};
    JsonLines jl;
    jsonlines_init(&jl, "\"event\":\"export\"", sink_put, &k);
    cookie_io_functions_t io = {NULL, lines ? lines_write : pieces_write, NULL,
                                lines ? NULL : pieces_close};
    FILE *f = fopencookie(lines ? (void *)&jl : (void *)&pc, "w", io);
    if (!f) return session_error(s, LM_ENOMEM, "out of memory exporting");
    int status = runstore_export_stream(st, ids, n, format, f, err);
    if (fclose(f) && !status) status = err_set(err, LM_ENOMEM, "out of memory exporting");
    if (lines && jsonlines_finish(&jl) && (!status || status == LM_ENOMEM))
        status = err_set(err, jl.status, "%s", jl.status == LM_EFORMAT ? "the export's JSON "
                         "could not be re-encoded as lines (please report it)" : jl.status ==
                         LM_EIO ? "writing the export failed" : "out of memory exporting");
    if (pc.oom && !status) status = err_set(err, LM_ENOMEM, "out of memory exporting");
    if (!status && pc.head && !pc.started) sink_put(&k, head, strlen(head));
    if (!status && pc.head) sink_put(&k, "\"}\n", 3);
    if (status && s->json && k.last && k.last != '\n') sink_put(&k, "\n", 1);   /* a cut line */
    jsonlines_free(&jl);
    free(pc.buf);
    return status ? session_error(s, status, "%s", err) : LM_OK;
}

/* export format=tensorboard dir=D (core/run/tboard.h). */
static int export_tensorboard(Session *s, RunStore *st, const long *ids, int n,
                              const char *dir)
{
    char err[LM_ERR_LEN];
    TboardReport rep;
    int status = tboard_export(st, ids, n, dir, &rep, err);
    if (status) return session_error(s, status, "%s", err);
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:o s:s s:i s:I s:I s:I s:o}", "ok", 1, "dir",
                                       jsonval_str(dir), "format", "tensorboard", "runs",
                                       rep.runs, "scalars", (json_int_t)rep.scalars,
                                       "histograms", (json_int_t)rep.histograms, "texts",
                                       (json_int_t)rep.texts, "first", jsonval_str(rep.first)));
    else
        session_printf(s, "wrote %d run%s to %s (TensorBoard event files: %ld scalars, %ld "
                       "histograms, %ld texts), e.g. %s; view with `tensorboard --logdir %s`",
                       rep.runs, rep.runs == 1 ? "" : "s", dir, rep.scalars, rep.histograms,
                       rep.texts, rep.first, dir);
    return LM_OK;
}

static int export_read(Session *s, int argc, const LexWord *argv)
{
    const char *format = NULL, *file = NULL, *sweep = NULL, *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (argv[i].key && !strcmp(argv[i].key, "format")) format = argv[i].value;
        else if (argv[i].key && !strcmp(argv[i].key, "file")) file = argv[i].value;
        else if (argv[i].key && !strcmp(argv[i].key, "sweep")) sweep = argv[i].value;
        else if (argv[i].key && !strcmp(argv[i].key, "dir")) dir = argv[i].value;
    }
    int tb = format && !strcmp(format, "tensorboard");
    if (tb && file)
        return session_error(s, LM_EARG, "format=tensorboard writes a folder: give dir=FOLDER "
                             "(a new folder), not file=");
    if (dir && !tb)
        return session_error(s, LM_EARG, "dir= is for format=tensorboard (csv and json take "
                             "file=PATH)");
    if (file && !*file)
        return session_error(s, LM_EARG, "file= is empty: give a path, e.g. `export 3 4 "
                             "file=runs.csv`, or leave file= out to print the export");
    if (!file && !format) format = "csv";
    if (file && !(format = export_format(s, format, file))) return LM_EARG;
    RunStore *st = session_store(s);
    if (!st) return LM_EDB;
    long ids[RUNARGS_MAX_IDS];
    int n = 0;
    if (runargs_parse_ids(s, st, argc, argv, ids, &n)) return LM_EARG;
    if (sweep && sweep_ids(s, st, sweep, ids, &n)) return LM_EARG;
    if (n == 0) return session_error(s, LM_EARG, "export needs run ids or sweep=ID, e.g. "
                                     "`export 3 4 file=runs.csv`");
    char err[LM_ERR_LEN];
    if (tb) return export_tensorboard(s, st, ids, n, dir);
    if (!file) return export_print(s, st, ids, n, format);
    int status = runstore_export(st, ids, n, format, file, err);
    if (status) return session_error(s, status, "%s", err);
    long steps = count_steps(st, ids, n);
    if (s->json)
        session_emit_json(s, json_pack("{s:b s:o s:s s:i s:I}", "ok", 1,
                                       "file", jsonval_str(file), "format", format,
                                       "runs", n, "steps", (json_int_t)steps));
    else
        session_printf(s, "wrote %d run%s (%ld step rows) to %s (%s)", n, n == 1 ? "" : "s",
                       steps, file, format);
    return LM_OK;
}

int cmd_export(Session *s, int argc, const LexWord *argv)
{
    return runargs_read_checked(s, export_read, argc, argv);
}
