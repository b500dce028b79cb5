/* table.c — the table widget: column width allocation (fixed + flexible), header with
 * sort indicator, scrolling that keeps the selection visible, truncation markers.
 * Not a list model: rows arrive as strings already sorted by the caller. */
#include "table.h"

#include <stdio.h>
#include <string.h>

#define TABLE_MAX_COLS 32

/* Text aligned in [x, x+w), truncated with a marker when longer. */
static void text_aligned(Canvas *c, int x, int y, int w, const char *s, int align, int color,
                         int attr, int unicode)
{
    if (w <= 0 || !s)
        return;
    int len = canvas_utf8_width(s), off = 0;
    if (len < w)
        off = align == TABLE_RIGHT ? w - len : align == TABLE_CENTER ? (w - len) / 2 : 0;
    canvas_text_fit(c, x + off, y, w - off, s, color, attr, unicode);
}

/* Widths of the first n columns for `avail` columns; returns n (capped). */
static int layout(const TableData *d, int avail, int *w)
{
    int n = d->n_cols < TABLE_MAX_COLS ? d->n_cols : TABLE_MAX_COLS;
    int fixed = n > 0 ? n - 1 : 0, n_flex = 0;
    for (int j = 0; j < n; j++) {
        if (d->cols[j].width > 0)
            fixed += d->cols[j].width;
        else
            n_flex++;
    }
    int share = n_flex ? (avail - fixed) / n_flex : 0;
    int extra = n_flex ? (avail - fixed) % n_flex : 0;
    if (share < 3) {
        share = 3;   /* flexible columns never vanish; the right side is cut instead */
        extra = 0;
    }
    for (int j = 0, k = 0; j < n; j++) {
        if (d->cols[j].width > 0) {
            w[j] = d->cols[j].width;
        } else {   /* no wider than its widest text: a short name is not 100 columns wide */
            w[j] = share + (++k == n_flex ? extra : 0);
            int need = d->cols[j].title ? canvas_utf8_width(d->cols[j].title) + 2 : 3;
            for (int i = 0; i < d->n_rows; i++) {
                const char *cell = d->cells[(size_t)i * d->n_cols + j];
                int cw = cell ? canvas_utf8_width(cell) : 0;
                need = cw > need ? cw : need;
            }
            if (need < w[j])
                w[j] = need < 3 ? 3 : need;
        }
    }
    return n;
}

/* First visible row: d->scroll clamped, then moved to show the selection. */
static int scroll_for(const TableData *d, int n_vis)
{
    int s = d->scroll, max_s = d->n_rows - n_vis;
    if (max_s < 0)
        max_s = 0;
    s = s < 0 ? 0 : s > max_s ? max_s : s;
    if (d->selected >= 0 && d->selected < d->n_rows) {
        if (d->selected < s)
            s = d->selected;
        else if (d->selected >= s + n_vis)
            s = d->selected - n_vis + 1;
    }
    return s;
}

static void header_draw(Canvas *c, int x, int y, int end, const TableData *d, const int *w,
                        int n, const CanvasCaps *caps)
{
    for (int j = 0; j < n && x < end; j++) {
        int cw = w[j] < end - x ? w[j] : end - x;
        const char *title = d->cols[j].title ? d->cols[j].title : "";
        if (j == d->sort_col && cw >= 3) {
            const char *ind = caps->unicode ? (d->sort_desc ? "▼" : "▲")
                                            : (d->sort_desc ? "v" : "^");
            int tw = canvas_utf8_width(title);
            tw = tw > cw - 2 ? cw - 2 : tw;
            int off = d->cols[j].align == TABLE_RIGHT ? cw - 2 - tw : 0;
            canvas_text_fit(c, x + off, y, cw - 2, title, UI_COLOR_DEFAULT, UI_ATTR_BOLD,
                            caps->unicode);
            canvas_put(c, x + off + tw + 1, y, ind, UI_COLOR_ACCENT, UI_ATTR_BOLD);
        } else {
            text_aligned(c, x, y, cw, title, d->cols[j].align, UI_COLOR_DEFAULT, UI_ATTR_BOLD,
                         caps->unicode);
        }
        x += w[j] + 1;
    }
}

static void row_draw(Canvas *c, Rect r, int y, int row, int mk, const TableData *d,
                     const int *w, int n, const CanvasCaps *caps)
{
    int marked = d->marked && d->marked[row];
    int color = 0, attr = 0;
    if (marked) {
        color = caps->colors ? (d->mark_color > 0 ? d->mark_color : UI_COLOR_ACCENT) : 0;
        attr = caps->colors ? 0 : UI_ATTR_BOLD;
        canvas_put(c, r.x, y, "*", color, attr | UI_ATTR_BOLD);
    }
    int x = r.x + mk, end = r.x + r.w;
    for (int j = 0; j < n && x < end; j++) {
        int cw = w[j] < end - x ? w[j] : end - x;
        const char *s = d->cells ? d->cells[(size_t)row * d->n_cols + j] : NULL;
        text_aligned(c, x, y, cw, s, d->cols[j].align, color, attr, caps->unicode);
        x += w[j] + 1;
    }
    if (row == d->selected)
        canvas_mark(c, (Rect){r.x, y, r.w, 1}, -1, UI_ATTR_REVERSE);
}

int table_draw(Canvas *c, Rect r, const TableData *d, const CanvasCaps *caps)
{
    if (!d)
        return 0;
    if (r.w < 2 || r.h < 2)
        return d->scroll;
    int mk = d->marked ? 2 : 0;
    int w[TABLE_MAX_COLS];
    int n = layout(d, r.w - mk, w);
    header_draw(c, r.x + mk, r.y, r.x + r.w, d, w, n, caps);
    int n_vis = table_page_rows(r);
    int s = scroll_for(d, n_vis);
    for (int i = 0; i < n_vis && s + i < d->n_rows; i++)
        row_draw(c, r, r.y + 1 + i, s + i, mk, d, w, n, caps);
    return s;
}

int table_page_rows(Rect r) { return r.h > 1 ? r.h - 1 : 0; }
