/* report_doc.c — the report's document primitives (see report_doc.h). */
#include "report_doc.h"
#include "textcheck.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void report_put(Buf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 65536;
        while (c < b->n + n + 1) c *= 2;
        char *q = realloc(b->p, c);
        if (!q) { b->oom = 1; return; }
        b->p = q, b->cap = c;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

void report_puts(Buf *b, const char *s) { report_put(b, s, strlen(s)); }

static void report_putf(Buf *b, const char *fmt, ...)
{
    char tmp[2048];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    report_put(b, tmp, k < 0 ? 0 : (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
}

/* Stored text, escaped for the report's format: HTML entities (or Markdown's specials
 * backslashed, newlines as spaces in tables), control characters and bytes that are not
 * UTF-8 as a visible \xNN. */
void report_esc(Report *r, const char *t)
{
    const unsigned char *p = (const unsigned char *)(t ? t : "");
    size_t n = strlen((const char *)p);
    while (n) {
        unsigned cp = 0;
        int k = textcheck_utf8_char(p, n, &cp);
        char tmp[16];
        if (k == 0 || (cp < 0x20 && cp != '\n' && cp != '\t') || cp == 0x7f ||
            (cp >= 0x80 && cp < 0xa0) || textcheck_is_bidi(cp)) {
            snprintf(tmp, sizeof tmp, textcheck_is_bidi(cp) && k ? "\\u%04x" : "\\x%02x",
                     k ? cp : *p);
            report_put(&r->b, tmp, strlen(tmp));
            p += k ? (size_t)k : 1, n -= k ? (size_t)k : 1;
            continue;
        }
        const char *e = NULL;
        if (!r->md) e = cp == '<' ? "&lt;" : cp == '>' ? "&gt;" : cp == '&' ? "&amp;"
                      : cp == '"' ? "&quot;" : cp == '\'' ? "&#39;" : NULL;
        else if (cp == '<') e = "&lt;";
        else if (cp == '>') e = "&gt;";
        else if (cp == '&') e = "&amp;";
        else if (cp == '\n') e = "<br>";
        else if (cp < 128 && strchr("\\`*_[]|#", (int)cp)) {   /* ASCII only: strchr takes a char */
            snprintf(tmp, sizeof tmp, "\\%c", (char)cp);
            e = tmp;
        }
        if (e) report_put(&r->b, e, strlen(e));
        else report_put(&r->b, (const char *)p, (size_t)k);
        p += k, n -= (size_t)k;
    }
}

void report_heading(Report *r, int level, const char *text, const char *id)
{
    if (r->md) {
        report_putf(&r->b, "\n%.*s ", level, "######");
        report_esc(r, text);
        report_puts(&r->b, "\n\n");
    } else {
        report_putf(&r->b, "<h%d id=\"%s\">", level, id);
        report_esc(r, text);
        report_putf(&r->b, "</h%d>\n", level);
    }
}

void report_para(Report *r, const char *text)
{
    report_puts(&r->b, r->md ? "" : "<p>");
    report_esc(r, text);
    report_puts(&r->b, r->md ? "\n\n" : "</p>\n");
}

/* ---- figures -------------------------------------------------------------------------- */

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void report_put_base64(Buf *b, const unsigned char *d, size_t n)
{
    char q[4];
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0) |
                     (i + 2 < n ? d[i + 2] : 0);
        q[0] = B64[v >> 18 & 63], q[1] = B64[v >> 12 & 63];
        q[2] = i + 1 < n ? B64[v >> 6 & 63] : '=';
        q[3] = i + 2 < n ? B64[v & 63] : '=';
        report_put(b, q, 4);
    }
}

/* Where figure k goes: a temporary file (html) or NAME_files/figK.svg (md). */
void report_fig_path(Report *r, char *path, size_t cap)
{
    snprintf(path, cap, "%s/fig%d.svg", r->md ? r->files_dir : r->tmpdir, r->n_fig + 1);
    unlink(path);   /* an old figure, or a link planted there, is replaced, never followed */
}

/* Puts the figure just drawn at path into the report with its caption. */
void report_fig_embed(Report *r, const char *path, const char *caption)
{
    r->n_fig++;
    if (r->md) {
        report_puts(&r->b, "![");
        report_esc(r, caption);
        report_putf(&r->b, "](%s/fig%d.svg)\n\n", r->files_rel, r->n_fig);
        return;
    }
    FILE *f = fopen(path, "rb");
    if (!f) return;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *d = n > 0 ? malloc((size_t)n) : NULL;
    if (d && fread(d, 1, (size_t)n, f) == (size_t)n) {
        report_puts(&r->b, "<figure><img class=\"plot\" alt=\"");
        report_esc(r, caption);
        report_puts(&r->b, "\" src=\"data:image/svg+xml;base64,");
        report_put_base64(&r->b, d, (size_t)n);
        report_puts(&r->b, "\"><figcaption>");
        report_esc(r, caption);
        report_puts(&r->b, "</figcaption></figure>\n");
    }
    free(d);
    fclose(f);
    unlink(path);
}

void report_cell(Report *r, const char *text)
{
    report_puts(&r->b, r->md ? " " : "<td>");
    report_esc(r, text);
    report_puts(&r->b, r->md ? " |" : "</td>");
}
