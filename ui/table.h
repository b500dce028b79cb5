/* table.h — a scrolling table of strings (runs, checkpoints, sweep trials): column
 * titles with a sort indicator, a selected row in reverse video, marked rows with a
 * '*' and a colour, cells truncated with '…' ('~' in ASCII). Stateless: the caller
 * keeps the selection and the scroll position and passes them in every frame.
 * Not a data model: it neither sorts nor filters. */
#ifndef LM_UI_TABLE_H
#define LM_UI_TABLE_H

#include "canvas.h"

enum { TABLE_LEFT = 0, TABLE_RIGHT = 1, TABLE_CENTER = 2 };

typedef struct {
    const char *title;
    int width;               /* > 0: fixed columns; 0: shares the remaining width */
    int align;               /* TABLE_LEFT, TABLE_RIGHT, TABLE_CENTER */
} TableColumn;

typedef struct {
    const TableColumn *cols;     /* (n_cols) */
    int n_cols;
    const char *const *cells;    /* (n_rows, n_cols) row-major; NULL cells are empty */
    int n_rows;
    int selected;                /* selected row, -1 for none */
    const unsigned char *marked; /* (n_rows) nonzero = marked, or NULL: no marker column */
    int mark_color;              /* UI_COLOR_* for marked rows, 0 = UI_COLOR_ACCENT */
    int sort_col;                /* column showing the sort indicator, -1 for none */
    int sort_desc;               /* 1: descending (▼ / v), 0: ascending (▲ / ^) */
    int scroll;                  /* first visible row as last drawn (0 at first) */
} TableData;

/* Draws a header line and as many rows as fit, starting near d->scroll but moved
 * just enough to keep the selected row visible. Returns the first visible row
 * actually used: store it and pass it back as d->scroll next frame. Columns are
 * separated by one space; fixed widths that do not fit are cut at the right edge.
 * Draws nothing (returns d->scroll) when r.w or r.h < 2. */
int table_draw(Canvas *c, Rect r, const TableData *d, const CanvasCaps *caps);

/* Rows visible under the header in a rect of height h (for PgUp/PgDn). */
int table_page_rows(Rect r);

#endif
