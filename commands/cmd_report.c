/* cmd_report.c — `report runs=... [sweep=ID] file=report.html|report.md`: one file to hand
 * to a colleague. HTML is self-contained (CSS inline, figures as base64 SVG <img> drawn by
 * plot/ — the code `plot` uses — no script, no network); Markdown gets its figures as SVG
 * files in NAME_files/ beside it. Sections: machine and versions, curves of the best runs,
 * the runs table with the settings that differ, every named series (the best run's as a
 * grid of small charts, series=PATTERN chooses; a table of each series' number per run:
 * the registry's, core/base/series.h), seed groups as mean ± std bands, a sweep's
 * parallel coordinates and parameter importance, the best run's samples, notes, the
 * console tails of the best runs (what was left out said), system metrics. Every stored
 * string is escaped (HTML entities; control characters and invalid UTF-8 shown as \xNN;
 * report_doc.c holds the document's primitives). This file: the command (its arguments,
 * the runs, the target files) and the document's order; the sections are in
 * cmd_report_runs.c, cmd_report_sweep.c and cmd_report_text.c. Not a template engine and
 * not interactive. */
#include "session.h"
#include "cmd_report.h"
#include "report_doc.h"
#include "series.h"
#include "runrecord.h"
#include "runstore_row.h"
#include "sysinfo.h"
#include "outfile.h"

#include "err.h"

#include <errno.h>
#include <math.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int by_best(const void *a, const void *b)
{
    double x = ((const RunRow *)a)->best_val, y = ((const RunRow *)b)->best_val;
    if (isnan(x) != isnan(y)) return isnan(x) ? 1 : -1;
    return x < y ? -1 : x > y ? 1 : 0;
}

static const char CSS[] =
    "<style>body{font:14px/1.45 system-ui,sans-serif;max-width:1100px;margin:2em auto;"
    "padding:0 1em;color:#222}table{border-collapse:collapse;margin:1em 0;font-size:13px}"
    "th,td{border:1px solid #ccc;padding:3px 7px;text-align:left}th{background:#f3f3f3}"
    "tbody tr:nth-child(even){background:#fafafa}img.plot{max-width:100%;border:1px solid #eee}"
    "figure{margin:1em 0}figcaption{color:#555;font-size:12px}pre{white-space:pre-wrap;"
    "background:#f7f7f7;padding:.6em;border-radius:4px}.when{color:#777}"
    "pre.console{font-size:12px}</style>\n";

static void write_doc(Report *r, const char *title, const char *series)
{
    if (r->md) {
        report_puts(&r->b, "# ");
        report_esc(r, title);
        report_puts(&r->b, "\n\n");
    } else {
        report_puts(&r->b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                   "<meta name=\"generator\" content=\"lmlab report\"><title>");
        report_esc(r, title);
        report_puts(&r->b, "</title>\n");
        report_put(&r->b, CSS, sizeof CSS - 1);
        report_puts(&r->b, "</head><body>\n<h1 id=\"title\">");
        report_esc(r, title);
        report_puts(&r->b, "</h1>\n");
    }
    cmd_report_write_runs(r, series);
    cmd_report_write_sweep(r);
    cmd_report_write_text(r);
    if (!r->md) report_puts(&r->b, "</body></html>\n");
}

/* ---- the command ------------------------------------------------------------------------ */

/* Appends rows (taking ownership of their strings; ids already listed are freed). */
static int append_rows(Report *r, RunRow *rows, int n, char *err)
{
    RunRow *q = realloc(r->runs, sizeof *q * (size_t)(r->n + n + 1));
    if (!q) {
        runstore_rows_free(rows, n);
        return err_set(err, LM_ENOMEM, "out of memory");
    }
    r->runs = q;
    for (int i = 0; i < n; i++) {
        int dup = 0;
        for (int j = 0; j < r->n && !dup; j++) dup = r->runs[j].id == rows[i].id;
        if (dup) runstore_row_free(&rows[i]);
        else r->runs[r->n++] = rows[i];
    }
    free(rows);
    return LM_OK;
}

/* runs=1,2,5 (ids) or a filter as `runs` takes; sweep=ID adds its runs. */
static int collect(Report *r, const char *runs, char *err)
{
    int status = LM_OK, n = 0;
    RunRow *rows = NULL;
    if (runs && runs[0] && strspn(runs, "0123456789, ") == strlen(runs)) {
        for (const char *p = runs; *p && !status;) {
            long id = strtol(p, NULL, 10);
            p += strcspn(p, ",");
            p += *p == ',';
            if (id <= 0) continue;
            RunRow *one = calloc(1, sizeof *one);
            if (!one) return err_set(err, LM_ENOMEM, "out of memory");
            if ((status = runstore_get(r->st, id, one, err))) free(one);
            else status = append_rows(r, one, 1, err);
        }
    } else if (runs) {
        char filter[512];
        snprintf(filter, sizeof filter, "%s", runs);
        if (!(status = runstore_list(r->st, filter, "best", 0, &rows, &n, err)))
            status = append_rows(r, rows, n, err);
    }
    if (!status && r->sweep > 0) {
        char filter[64];
        SweepRow sw;
        if ((status = runstore_sweep_get(r->st, r->sweep, &sw, err))) return status;
        free(sw.spec);
        snprintf(filter, sizeof filter, "sweep=%ld", r->sweep);
        if (!(status = runstore_list(r->st, filter, "best", 0, &rows, &n, err)))
            status = append_rows(r, rows, n, err);
    }
    if (!status && r->n == 0)
        status = err_set(err, LM_EARG, "no run matches: `runs` lists them (runs=1,2,3 or"
                         " runs=\"model=msa\" or sweep=ID)");
    if (!status) qsort(r->runs, (size_t)r->n, sizeof *r->runs, by_best);
    return status;
}

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n > k && !strcasecmp(s + n - k, suf);
}

/* Whether path may receive the report (issue 46 item 11): a symbolic link never (a
 * report never writes through one); an existing file or folder only with overwrite=true,
 * *existed set. LM_OK or LM_EARG with what to do. */
static int check_target(const char *path, int folder, int overwrite, int *existed, char *err)
{
    struct stat sb;
    *existed = 0;
    if (lstat(path, &sb)) return LM_OK;
    if (S_ISLNK(sb.st_mode)) {
        char to[512];
        ssize_t k = readlink(path, to, sizeof to - 1);
        to[k > 0 ? k : 0] = 0;
        return err_set(err, LM_EARG, "%s is a symbolic link (to %s): a report never writes"
                       " through a link; name another file, or remove the link", path, to);
    }
    if (folder && !S_ISDIR(sb.st_mode))
        return err_set(err, LM_EARG, "%s exists and is not a folder: the report's images go"
                       " there; move it away", path);
    if (!folder && S_ISDIR(sb.st_mode))
        return err_set(err, LM_EARG, "%s is a folder; name a file", path);
    *existed = S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode);
    if (*existed && !overwrite)
        return err_set(err, LM_EARG, "%s exists; add overwrite=true to replace it (or name"
                       " another file)", path);
    return LM_OK;
}

/* md: NAME_files/ beside the report (created); html: a private temporary folder. */
static int prepare_dirs(Report *r, const char *file, int overwrite, char *err)
{
    if (!r->md) {
        const char *tmp = getenv("TMPDIR");
        snprintf(r->tmpdir, sizeof r->tmpdir, "%s/lmlab-report-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        return mkdtemp(r->tmpdir) ? LM_OK : err_set(err, LM_EIO, "cannot make a temporary folder"
                                                    " in %s", tmp && *tmp ? tmp : "/tmp");
    }
    snprintf(r->files_dir, sizeof r->files_dir, "%.*s_files", (int)(strlen(file) - 3), file);
    const char *base = strrchr(r->files_dir, '/');
    snprintf(r->files_rel, sizeof r->files_rel, "%s", base ? base + 1 : r->files_dir);
    int existed = 0, status = check_target(r->files_dir, 1, overwrite, &existed, err);
    if (status) return status;
    if (mkdir(r->files_dir, 0777) && errno != EEXIST)
        return err_set(err, LM_EIO, "cannot create %s for the report's images: %s", r->files_dir,
                       strerror(errno));
    return LM_OK;
}

int cmd_report(Session *s, int argc, const LexWord *argv)
{
    const char *runs = NULL, *file = NULL, *title = NULL, *series = "*";
    int overwrite = 0, existed = 0;
    Report r = {.s = s};
    for (int i = 1; i < argc; i++) {
        const LexWord *w = &argv[i];
        if (w->key && !strcmp(w->key, "runs")) runs = w->value;
        else if (w->key && !strcmp(w->key, "file")) file = w->value;
        else if (w->key && !strcmp(w->key, "title")) title = w->value;
        else if (w->key && !strcmp(w->key, "overwrite") &&
                 (!strcmp(w->value, "true") || !strcmp(w->value, "false")))
            overwrite = !strcmp(w->value, "true");
        else if (w->key && !strcmp(w->key, "series")) series = w->value;
        else if (w->key && !strcmp(w->key, "sweep") && (r.sweep = session_parse_run_id(w->value)) > 0) {}
        else
            return session_error(s, LM_EARG, "report takes runs=ID,ID,...|\"FILTER\", sweep=ID,"
                                 " title=\"...\", series=PATTERN, file=NAME.html|NAME.md and"
                                 " overwrite=true|false, not '%s'", w->text);
    }
    {
        char perr[LM_ERR_LEN];
        if (series_pattern_check(series, perr))
            return session_error(s, LM_EARG, "series=: %s", perr);
    }
    if (!file || !(ends_with(file, ".html") || ends_with(file, ".htm") || ends_with(file, ".md")))
        return session_error(s, LM_EARG, "report needs file=NAME.html (one self-contained file)"
                             " or file=NAME.md (Markdown with images beside it)");
    if (!runs && r.sweep <= 0)
        return session_error(s, LM_EARG, "report needs runs=ID,ID,... (or runs=\"FILTER\", as"
                             " `runs` takes) or sweep=ID");
    r.md = ends_with(file, ".md");
    if (!(r.st = session_store(s))) return LM_EDB;
    char err[LM_ERR_LEN], deftitle[160];
    double t0 = sysinfo_now();
    int status = check_target(file, 0, overwrite, &existed, err);
    if (!status) status = collect(&r, runs, err);
    if (!status) status = prepare_dirs(&r, file, overwrite, err);
    if (!status) {
        snprintf(deftitle, sizeof deftitle, "lmlab report: %d run%s%s", r.n, r.n == 1 ? "" : "s",
                 r.sweep > 0 ? " of a sweep" : "");
        write_doc(&r, title ? title : deftitle, series);
        if (r.b.oom) status = err_set(err, LM_ENOMEM, "out of memory writing the report");
    }
    OutFile o;
    if (!status && !(status = outfile_open(&o, file, err))) {
        if (outfile_write(&o, r.b.p, r.b.n)) {
            outfile_abort(&o);
            status = err_set(err, LM_EIO, "cannot write %s: %s", file, strerror(errno));
        } else {
            status = outfile_commit(&o, file, err);
        }
    }
    if (r.tmpdir[0]) rmdir(r.tmpdir);
    runstore_rows_free(r.runs, r.n);
    double dt = sysinfo_now() - t0;
    if (!status && s->json)
        session_emit_json(s, json_pack("{s:b s:s s:i s:i s:I s:f s:s}", "ok", 1, "file", file,
                                       "runs", r.n, "figures", r.n_fig, "bytes",
                                       (json_int_t)r.b.n, "seconds", dt, "format",
                                       r.md ? "markdown" : "html"));
    else if (!status)
        session_printf(s, "wrote %s%s: %d run%s, %d figure%s, %.1f KiB in %.2f s%s%s", file,
                       existed ? " (replaced the old one)" : "", r.n, r.n == 1 ? "" : "s",
                       r.n_fig, r.n_fig == 1 ? "" : "s", r.b.n / 1024.0, dt,
                       r.md ? "; images in " : "", r.md ? r.files_dir : "");
    free(r.b.p);
    return status ? session_error(s, status, "%s", err) : LM_OK;
}
