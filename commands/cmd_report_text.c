/* cmd_report_text.c — the report's sections of stored text: the best run's newest
 * samples, the notes on the runs and the sweep, and the console tails of the best runs
 * (what the store cut and what the report leaves out said). Every stored string escaped
 * by report_doc.c. Not here: figures and tables (cmd_report_runs.c, cmd_report_sweep.c). */
#include "cmd_report.h"
#include "report_doc.h"
#include "cmd_log.h"
#include "runrecord.h"
#include "runstore_notes.h"

#include "err.h"

#include <stdio.h>
#include <stdlib.h>

#define REPORT_CONSOLE_RUNS 3     /* consoles shown: the best runs' */
#define REPORT_CONSOLE_TAIL 40    /* newest lines of each */

static void section_samples(Report *r)
{
    if (!r->n) return;
    SampleRow *sm = NULL;
    int n = 0;
    char err[LM_ERR_LEN], t[160];
    if (runstore_samples(r->st, r->runs[0].id, &sm, &n, err) || !n) return;
    snprintf(t, sizeof t, "Samples of the best run (#%ld)", r->runs[0].id);
    report_heading(r, 2, t, "samples");
    for (int i = n > 3 ? n - 3 : 0; i < n; i++) {
        snprintf(t, sizeof t, "step %ld", sm[i].step);
        report_puts(&r->b, r->md ? "**" : "<div class=\"sample\"><b>");
        report_esc(r, t);
        report_puts(&r->b, r->md ? "**\n\n> " : "</b><pre>");
        report_esc(r, sm[i].text);
        report_puts(&r->b, r->md ? "\n\n" : "</pre></div>\n");
    }
    runstore_samples_free(sm, n);
}

static void section_notes(Report *r)
{
    NoteRow *nt = NULL;
    int n = 0, shown = 0;
    char err[LM_ERR_LEN], t[32], who[64];
    if (runstore_notes(r->st, 0, 0, &nt, &n, err)) return;
    report_heading(r, 2, "Notes", "notes");
    if (!r->md) report_puts(&r->b, "<ul class=\"notes\">\n");
    for (int i = 0; i < n; i++) {
        int in = nt[i].sweep_id && nt[i].sweep_id == r->sweep;
        for (int j = 0; j < r->n && !in; j++) in = r->runs[j].id == nt[i].run_id;
        if (!in) continue;
        shown++;
        cmd_log_fmt_time(t, sizeof t, nt[i].t, 1);
        snprintf(who, sizeof who, "%s %ld", nt[i].run_id ? "run" : "sweep",
                 nt[i].run_id ? nt[i].run_id : nt[i].sweep_id);
        report_puts(&r->b, r->md ? "- **" : "<li><b>");
        report_esc(r, who);
        report_puts(&r->b, r->md ? "** " : "</b> <span class=\"when\">");
        report_esc(r, t);
        report_puts(&r->b, r->md ? ": " : "</span>: ");
        report_esc(r, nt[i].text);
        report_puts(&r->b, r->md ? "\n" : "</li>\n");
    }
    if (!r->md) report_puts(&r->b, "</ul>\n");
    if (!shown) report_para(r, "none");
    runstore_notes_free(nt, n);
}

/* What the console of run has that the tail l[0..] leaves out, said in one paragraph:
 * lines the store cut (its cap) and older lines this report does not show. */
static void console_cut_note(Report *r, long run, const ConsoleLine *l, long cut)
{
    char t[400];
    int o = 0;
    if (cut < 0) {   /* numbers with a gap: count nothing that is not there */
        snprintf(t, sizeof t, "This console's line numbers have a gap (a line was numbered"
                 " out of order in the store), so whether lines were cut is not known; this"
                 " report shows its newest %d lines, `lmlab log %ld` prints every kept line.",
                 REPORT_CONSOLE_TAIL, run);
        report_para(r, t);
        return;
    }
    if (cut > 0)
        o += snprintf(t + o, sizeof t - (size_t)o, "The store cut the first %ld line%s of"
                      " this console (it keeps the newest %d lines of a run). ", cut,
                      cut == 1 ? "" : "s", RUNSTORE_CONSOLE_MAX_LINES);
    if (l[0].seq - 1 > cut)
        snprintf(t + o, sizeof t - (size_t)o, "Lines %ld to %ld are left out of this report"
                 " (it shows the newest %d): `lmlab log %ld` prints them.", cut + 1,
                 l[0].seq - 1, REPORT_CONSOLE_TAIL, run);
    if (cut > 0 || l[0].seq - 1 > cut) report_para(r, t);
}

/* The newest REPORT_CONSOLE_TAIL console lines of each of the best REPORT_CONSOLE_RUNS runs
 * (r->runs is sorted by best), stored text escaped; what is left out is said. */
static void section_console(Report *r)
{
    if (!r->n) return;
    int k_max = r->n < REPORT_CONSOLE_RUNS ? r->n : REPORT_CONSOLE_RUNS;
    char err[LM_ERR_LEN], t[160], id[32], when[32];
    report_heading(r, 2, k_max > 1 ? "Console of the best runs" : "Console", "console");
    for (int k = 0; k < k_max; k++) {
        const RunRow *run = &r->runs[k];
        ConsoleLine *l = NULL;
        int n = 0;
        long cut = 0;
        snprintf(t, sizeof t, "run #%ld %s", run->id, run->name);
        snprintf(id, sizeof id, "console-%ld", run->id);
        report_heading(r, 3, t, id);
        if (runstore_console_read(r->st, run->id, 0, REPORT_CONSOLE_TAIL, &l, &n, &cut, err)) {
            report_para(r, err);
            continue;
        }
        if (!n) report_para(r, "empty (runs recorded before lmlab kept consoles have none)");
        else console_cut_note(r, run->id, l, cut);
        if (n && !r->md) report_puts(&r->b, "<pre class=\"console\">");
        for (int i = 0; i < n; i++) {
            cmd_log_fmt_time(when, sizeof when, l[i].t, 0);
            snprintf(t, sizeof t, "%s %-8s ", when, l[i].kind);
            report_puts(&r->b, r->md ? "- `" : "<span class=\"when\">");
            if (r->md) report_puts(&r->b, when), report_puts(&r->b, "` ");
            report_esc(r, r->md ? l[i].kind : t);   /* kind: stored text */
            report_puts(&r->b, r->md ? ": " : "</span>");
            report_esc(r, l[i].text);
            report_puts(&r->b, "\n");
        }
        if (n && !r->md) report_puts(&r->b, "</pre>\n");
        else if (n) report_puts(&r->b, "\n");
        runstore_console_free(l, n);
    }
    if (r->n > k_max) {
        snprintf(t, sizeof t, "The consoles of the other %d runs are not in this report:"
                 " `lmlab log ID` prints one.", r->n - k_max);
        report_para(r, t);
    }
}

void cmd_report_write_text(Report *r)
{
    section_samples(r);
    section_notes(r);
    section_console(r);
}
