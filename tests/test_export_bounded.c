/* test_export_bounded.c — the exports stream: CSV, JSON and TensorBoard of a run hold
 * memory that does not grow with its rows, to a file and, through the command, as
 * `--json export` prints them (one JSON line a run, or the CSV as one line's string: both
 * were held whole and the JSON parsed back, 115 MB more for 4N rows); those lines are the
 * bytes json_dumps gave of the parsed export. A run of N logged steps (metrics, evaluations,
 * a named scalar series and a named histogram series of N points each, and system
 * samples of ranks 0 and 1 every 1,000 steps, a sample every 10 s: SQLite sorts those by
 * step in its own sorter, which spills to a file past its cache; rows made with SQL) is
 * exported at N and at 4N, after one export that filled SQLite's page cache. The heap's
 * peak during each export, counted by this program's own malloc (it forwards to glibc's),
 * may not grow by more than 512 KiB, where a reader that holds the run grows by megabytes
 * (16 bytes a point is 1 MB for the 3N more points of one series). No timing: the counts
 * are bytes. Skipped in a sanitized build (the sanitizer owns malloc). */
#include "runstore_util.h"
#include "commands.h"
#include "session.h"
#include "tboard.h"

#include <malloc.h>
#include <stdint.h>

/* ---- a counting allocator: live bytes and their peak --------------------------------- */

/* Not in a sanitized build: the sanitizer's own malloc must be the one (a malloc defined
 * here took its place and ASan aborted before main). */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static size_t live, peak;

static void *counted(void *p)
{
    if (p) {
        live += malloc_usable_size(p);
        if (live > peak) peak = live;
    }
    return p;
}

void *malloc(size_t n) { return counted(__libc_malloc(n)); }
void *calloc(size_t n, size_t k) { return counted(__libc_calloc(n, k)); }
void free(void *p)
{
    if (p) live -= malloc_usable_size(p);
    __libc_free(p);
}
void *realloc(void *p, size_t n)
{
    size_t was = p ? malloc_usable_size(p) : 0;
    void *q = __libc_realloc(p, n);
    if (q || !n) live -= was;
    return counted(q);
}

/* ---- the runs ------------------------------------------------------------------------- */

/* n logged steps of run: rows of every kind an export reads, written with SQL. */
static void fill(const char *path, long run, long n)
{
    char sql[3000];
    snprintf(sql, sizeof sql,
             "WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k+1 FROM i WHERE k < %ld)"
             " INSERT INTO metrics SELECT %ld, k, k*0.001, 64*k, 4.0/(1+0.01*k), 0.001,"
             " 0.5+(k%%7), 1000+k, k*0.01 FROM i;"
             "WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k+1 FROM i WHERE k < %ld)"
             " INSERT INTO evals SELECT %ld, k, 'valid', 3.0/(1+0.01*k), 20.0, 4.2, 640*k,"
             " k*0.01 FROM i;"
             "WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k+1 FROM i WHERE k < %ld)"
             " INSERT INTO run_sysmetrics(run_id, rank, t, step, cpu, rss_mb, threads, load1,"
             " mem_avail_mb, mem_total_mb, tokens_per_s) SELECT %ld, r, 1e9+k, k, 90, 40, 2,"
             " 1.5, 4000, 8000, 1000 FROM i, (SELECT 0 AS r UNION ALL SELECT 1)"
             " WHERE k %% 1000 = 0;"
             "INSERT INTO series_names(run_id, name, kind) VALUES (%ld, 'grad/w', 0),"
             " (%ld, 'hist/w', 1);"
             "WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k+1 FROM i WHERE k < %ld)"
             " INSERT INTO series_points SELECT (SELECT id FROM series_names WHERE run_id=%ld"
             " AND name='grad/w'), k, 0.1*k FROM i;"
             "WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k+1 FROM i WHERE k < %ld)"
             " INSERT INTO series_hists SELECT (SELECT id FROM series_names WHERE run_id=%ld"
             " AND name='hist/w'), k, -1, 1, 10, 0.5, 2.5, k%%2, 0, 0, zeroblob(512) FROM i;"
             "UPDATE runs SET last_step=%ld, status='finished' WHERE id=%ld;",
             n, run, n, run, n, run, run, run, n, run, n, run, n, run);
    CHECK(q_exec(path, sql) == SQLITE_OK, "rows of run %ld made", run);
}

/* The heap's growth at the peak of one export of run (format csv, json or tensorboard). */
static size_t export_peak(RunStore *s, long run, const char *format, const char *out)
{
    char err[LM_ERR_LEN];
    size_t base = live;
    peak = live;
    int rc = strcmp(format, "tensorboard") ? runstore_export(s, &run, 1, format, out, err)
                                           : tboard_export(s, &run, 1, out, NULL, err);
    CHECK(rc == LM_OK, "export %s of run %ld: %s", format, run, err);
    return peak - base;
}

/* ---- --json export through the command ----------------------------------------------- */

/* What the command printed: counted, and kept when keep is set (outside a measured peak). */
static size_t printed;
static int keep, n_errors;
static char *kept;
static size_t n_kept, cap_kept;

static void sink(void *ud, int kind, const char *text)
{
    (void)ud;
    size_t n = strlen(text) + (kind != SESSION_OUT_STREAM);
    printed += n;
    n_errors += kind == SESSION_OUT_ERROR;
    if (kind == SESSION_OUT_ERROR) fprintf(stderr, "%s\n", text);
    if (!keep) return;
    if (n_kept + n + 1 > cap_kept) kept = realloc(kept, cap_kept = (n_kept + n + 1) * 2);
    memcpy(kept + n_kept, text, strlen(text));
    n_kept += strlen(text);
    if (kind != SESSION_OUT_STREAM) kept[n_kept++] = '\n';
    kept[n_kept] = 0;
}

/* The heap's growth at the peak of the command `line` under --json. */
static size_t command_peak(Session *ses, const char *line)
{
    size_t base = live;
    peak = live;
    printed = 0;
    n_errors = 0;
    CHECK(session_run_line(ses, line) == LM_OK && !n_errors, "%s", line);
    return peak - base;
}

/* The lines the command printed before it streamed: the export whole in memory, parsed
 * back, one event a run (json) or the CSV as one string (malloc'd). */
static char *old_lines(RunStore *st, long run, const char *format)
{
    char *buf = NULL, err[LM_ERR_LEN];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(runstore_export_stream(st, &run, 1, format, f, err) == LM_OK, "export: %s", err);
    fclose(f);
    json_t *arr = strcmp(format, "json") ? json_pack("[{s:s s:s s:s}]", "event", "export",
                                                      "format", format, "csv", buf)
                                         : json_loads(buf, JSON_DECODE_ANY, NULL), *o;
    size_t i, n = 0;
    char *out = malloc(2 * len + 4096);
    out[0] = 0;
    json_array_foreach(arr, i, o) {
        if (!json_object_get(o, "event")) json_object_set_new(o, "event", json_string("export"));
        char *t = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(16));
        n += (size_t)sprintf(out + n, "%s\n", t);
        free(t);
    }
    json_decref(arr);
    free(buf);
    return out;
}

static void test_json_lines(const char *path, long small, long big)
{
    Session ses;
    session_init(&ses, path);
    session_set_writer(&ses, sink, NULL);
    ses.json = 1;
    char line[128];
    static const char *const FORMATS[] = {"csv", "json"};
    for (int f = 0; f < 2; f++) {
        size_t at[2], out[2];
        snprintf(line, sizeof line, "export %ld format=%s", big, FORMATS[f]);
        command_peak(&ses, line);   /* SQLite's page cache filled first */
        for (int k = 0; k < 2; k++) {
            snprintf(line, sizeof line, "export %ld format=%s", k ? big : small, FORMATS[f]);
            at[k] = command_peak(&ses, line);
            out[k] = printed;
        }
        CHECK(out[1] > 3 * out[0], "--json %s: the 4N export printed whole (%zu, %zu bytes)",
              FORMATS[f], out[0], out[1]);
        CHECK(at[1] < at[0] + 512 * 1024, "--json export format=%s: the peak grows %zu -> %zu "
              "bytes for 4x the rows", FORMATS[f], at[0], at[1]);
        printf("--json %s: peak %zu -> %zu bytes\n", FORMATS[f], at[0], at[1]);
        /* and its bytes are those of the export parsed whole */
        keep = 1, n_kept = 0;
        snprintf(line, sizeof line, "export %ld format=%s", small, FORMATS[f]);
        CHECK(session_run_line(&ses, line) == LM_OK, "%s", line);
        keep = 0;
        char *want = old_lines(session_store(&ses), small, FORMATS[f]);
        CHECK(kept && !strcmp(kept, want), "--json export format=%s: %zu bytes, the parsed "
              "export's %zu", FORMATS[f], n_kept, strlen(want));
        free(want);
    }
    free(kept);
    session_free(&ses);
}

static void test_bounded(void)
{
    char path[128], out[160], err[LM_ERR_LEN];
    db_path(path, sizeof path, "b.db");
    RunStore *s;
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    long small = new_run(s, "small", "msa", "steps=20000", NULL);
    long big = new_run(s, "big", "msa", "steps=80000", NULL);
    runstore_close(s);
    fill(path, small, 20000);
    fill(path, big, 80000);
    CHECK(runstore_open(path, &s, err) == LM_OK, "open again: %s", err);
    static const char *const FORMATS[] = {"csv", "json", "tensorboard"};
    for (int f = 0; f < 3; f++) {
        size_t at[2];
        snprintf(out, sizeof out, "%s/warm.%s", tmpdir, FORMATS[f]);
        export_peak(s, big, FORMATS[f], out);   /* SQLite's page cache filled first */
        for (int k = 0; k < 2; k++) {
            snprintf(out, sizeof out, "%s/out-%d.%s", tmpdir, k, FORMATS[f]);
            at[k] = export_peak(s, k ? big : small, FORMATS[f], out);
        }
        CHECK(at[1] < at[0] + 512 * 1024, "%s: the peak grows %zu -> %zu bytes for 4x the rows",
              FORMATS[f], at[0], at[1]);
        printf("%s: peak %zu -> %zu bytes\n", FORMATS[f], at[0], at[1]);
    }
    snprintf(out, sizeof out, "%s/out-1.csv", tmpdir);   /* and it was all written */
    FILE *fp = fopen(out, "r");
    long lines = 0;
    for (int c; fp && (c = fgetc(fp)) != EOF;) lines += c == '\n';
    if (fp) fclose(fp);
    CHECK(lines > 80000L * 7, "the 4N export is whole: %ld lines", lines);
    runstore_close(s);
    test_json_lines(path, small, big);
}

#endif

int main(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return 77;   /* meson's skip */
#else
    return runstore_test_main("test_export_bounded", test_bounded);
#endif
}
