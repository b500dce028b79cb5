/* report_doc.h — the document `report` builds (commands/cmd_report.c): a growing buffer,
 * stored text escaped for HTML or Markdown (entities or backslashes; control characters and
 * bytes that are not UTF-8 as a visible \xNN), headings, paragraphs, table cells and
 * figures (a file plot/ drew, embedded as a base64 SVG data URI in HTML or linked from
 * NAME_files/ in Markdown). Not the sections (cmd_report.c). */
#ifndef LM_REPORT_DOC_H
#define LM_REPORT_DOC_H

#include "session.h"

#include <stddef.h>

typedef struct {
    char *p;
    size_t n, cap;
    int oom;
} Buf;

typedef struct {
    Session *s;
    RunStore *st;
    int md;
    Buf b;
    char tmpdir[256];      /* html: figures drawn here, then embedded */
    char files_dir[1100];  /* md: NAME_files/ beside the report */
    char files_rel[1100];
    int n_fig;
    RunRow *runs;
    int n;
    long sweep;
} Report;

/* Appends n bytes / a string / printf-style text (at most 2 KiB) to b; out of memory
 * sets b->oom and drops the rest. */
void report_put(Buf *b, const char *s, size_t n);
void report_puts(Buf *b, const char *s);
void report_putf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Stored text t (NULL: ""), escaped for r's format. */
void report_esc(Report *r, const char *t);
/* A heading (HTML: with its id), a paragraph, a table cell, each of escaped text. */
void report_heading(Report *r, int level, const char *text, const char *id);
void report_para(Report *r, const char *text);
void report_cell(Report *r, const char *text);

/* Where the next figure is drawn: r->tmpdir (HTML) or r->files_dir (Markdown), figN.svg. */
void report_fig_path(Report *r, char *path, size_t cap);
/* Puts the figure drawn at path with its caption into the report (HTML: inline, and the
 * temporary file removed) and counts it. */
void report_fig_embed(Report *r, const char *path, const char *caption);

#endif
