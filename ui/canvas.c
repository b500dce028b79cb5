/* canvas.c — the off-screen cell grid, its text drawing with UTF-8 decoding, frames,
 * the text dump used by tests, and the single copy to curses (canvas_blit).
 * Not a widget and not a curses wrapper: nothing else in ui/ includes curses. */
#include "canvas.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

typedef struct {
    char g[5];             /* one code point, NUL-terminated; "" = the right half of the
                            * double-width glyph in the cell to the left */
    unsigned char color;
    unsigned char attr;
} Cell;

struct Canvas {
    int w, h;
    Cell *cells;           /* (h, w) */
};

static const Cell blank_cell = {" ", 0, 0};

Canvas *canvas_create(int w, int h)
{
    Canvas *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (canvas_resize(c, w, h) != 0) {
        free(c);
        return NULL;
    }
    return c;
}

void canvas_destroy(Canvas *c)
{
    if (!c)
        return;
    free(c->cells);
    free(c);
}

int canvas_resize(Canvas *c, int w, int h)
{
    if (w < 0)
        w = 0;
    if (h < 0)
        h = 0;
    size_t n = (size_t)w * (size_t)h;
    Cell *cells = malloc((n ? n : 1) * sizeof *cells);
    if (!cells)
        return -1;
    free(c->cells);
    c->cells = cells;
    c->w = w;
    c->h = h;
    canvas_clear(c);
    return 0;
}

int canvas_width(const Canvas *c) { return c->w; }
int canvas_height(const Canvas *c) { return c->h; }

void canvas_clear(Canvas *c)
{
    size_t n = (size_t)c->w * (size_t)c->h;
    for (size_t i = 0; i < n; i++)
        c->cells[i] = blank_cell;
}

int canvas_utf8_len(const char *s, size_t avail)
{
    const unsigned char *u = (const unsigned char *)s;
    if (avail == 0)
        return 0;
    if (u[0] < 0x80)
        return 1;
    int n;
    unsigned cp;
    if (u[0] >= 0xC2 && u[0] <= 0xDF) {
        n = 2;
        cp = u[0] & 0x1F;
    } else if (u[0] >= 0xE0 && u[0] <= 0xEF) {
        n = 3;
        cp = u[0] & 0x0F;
    } else if (u[0] >= 0xF0 && u[0] <= 0xF4) {
        n = 4;
        cp = u[0] & 0x07;
    } else {
        return 0;
    }
    if ((size_t)n > avail)
        return 0;
    for (int i = 1; i < n; i++) {
        if ((u[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (u[i] & 0x3F);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;   /* overlong, surrogate or out of range */
    return n;
}

int canvas_glyph_width(const char *s, int n)
{
    const unsigned char *u = (const unsigned char *)s;
    if (n < 2)
        return 1;
    unsigned cp = u[0] & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
    for (int i = 1; i < n; i++)
        cp = (cp << 6) | (u[i] & 0x3F);
    return wcwidth((wchar_t)cp) == 2 ? 2 : 1;   /* combining and unknown: one column */
}

int canvas_utf8_width(const char *utf8)
{
    if (!utf8)
        return 0;
    size_t left = strlen(utf8);
    int cols = 0;
    while (left > 0) {
        int n = canvas_utf8_len(utf8, left);
        cols += canvas_glyph_width(utf8, n);
        if (n == 0)
            n = 1;
        utf8 += n;
        left -= (size_t)n;
    }
    return cols;
}

/* Stores up to n bytes of one code point into the cell, mapping controls to ' '. */
static void cell_set(Cell *cell, const char *s, int n, int color, int attr)
{
    if (n <= 0) {
        cell->g[0] = '?';
        n = 1;
    } else if (n == 1 && ((unsigned char)s[0] < 0x20 || s[0] == 0x7F)) {
        cell->g[0] = ' ';
    } else {
        memcpy(cell->g, s, (size_t)n);
    }
    cell->g[n] = '\0';
    cell->color = (unsigned char)(color < 0 ? 0 : color);
    cell->attr = (unsigned char)(attr < 0 ? 0 : attr);
}

/* Sets cell (x, y) (inside the canvas) to s (n bytes, cell_set's rules) of width w: a
 * double-width glyph takes the next cell too (its right half, ""), or becomes ' ' at the
 * right edge; a glyph written over either half of a double-width one blanks the other. */
static void cell_store(Canvas *c, int x, int y, const char *s, int n, int w, int color,
                       int attr)
{
    Cell *row = &c->cells[(size_t)y * c->w];
    if (!row[x].g[0] && x > 0)
        cell_set(&row[x - 1], " ", 1, row[x - 1].color, row[x - 1].attr);
    if (x + 1 < c->w && !row[x + 1].g[0])
        cell_set(&row[x + 1], " ", 1, row[x + 1].color, row[x + 1].attr);
    if (w == 2 && x + 1 >= c->w) {
        cell_set(&row[x], " ", 1, color, attr);
        return;
    }
    cell_set(&row[x], s, n, color, attr);
    if (w == 2) {
        if (x + 2 < c->w && !row[x + 2].g[0])
            cell_set(&row[x + 2], " ", 1, row[x + 2].color, row[x + 2].attr);
        row[x + 1].g[0] = '\0';
        row[x + 1].color = row[x].color;
        row[x + 1].attr = row[x].attr;
    }
}

int canvas_put(Canvas *c, int x, int y, const char *utf8_glyph, int color, int attr)
{
    if (!utf8_glyph || !utf8_glyph[0])
        utf8_glyph = " ";
    size_t avail = strnlen(utf8_glyph, 4);
    int n = canvas_utf8_len(utf8_glyph, avail);
    if (n == 1 && ((unsigned char)utf8_glyph[0] < 0x20 || utf8_glyph[0] == 0x7F))
        n = 0;      /* a control character as a glyph is a caller error: show '?' */
    int w = canvas_glyph_width(utf8_glyph, n);
    if (x >= 0 && y >= 0 && x < c->w && y < c->h)
        cell_store(c, x, y, utf8_glyph, n, w, color, attr);
    return w;
}

int canvas_text(Canvas *c, int x, int y, int max_w, const char *utf8, int color, int attr)
{
    if (!utf8 || max_w <= 0)
        return 0;
    size_t left = strlen(utf8);
    int cols = 0;
    int row_ok = y >= 0 && y < c->h;
    while (left > 0 && cols < max_w && *utf8 != '\n') {
        int n = canvas_utf8_len(utf8, left);
        int step = n ? n : 1, w = canvas_glyph_width(utf8, n);
        if (cols + w > max_w)
            break;   /* a double-width glyph that does not fit in the last column */
        int cx = x + cols;
        if (row_ok && cx >= 0 && cx < c->w)
            cell_store(c, cx, y, utf8, n, w, color, attr);
        utf8 += step;
        left -= (size_t)step;
        cols += w;
    }
    return cols;
}

int canvas_text_fit(Canvas *c, int x, int y, int max_w, const char *utf8, int color,
                    int attr, int unicode)
{
    if (!utf8 || max_w <= 0)
        return 0;
    if (canvas_utf8_width(utf8) <= max_w)
        return canvas_text(c, x, y, max_w, utf8, color, attr);
    int cols = canvas_text(c, x, y, max_w - 1, utf8, color, attr);
    canvas_put(c, x + cols, y, unicode ? "\xE2\x80\xA6" : "~", color, attr);
    return cols + 1;
}

/* r clipped to the canvas; w or h may come out <= 0. */
static Rect clip_rect(const Canvas *c, Rect r)
{
    int x0 = r.x < 0 ? 0 : r.x, y0 = r.y < 0 ? 0 : r.y;
    int x1 = r.x + r.w > c->w ? c->w : r.x + r.w;
    int y1 = r.y + r.h > c->h ? c->h : r.y + r.h;
    return (Rect){x0, y0, x1 - x0, y1 - y0};
}

void canvas_fill(Canvas *c, Rect r, const char *utf8_glyph, int color, int attr)
{
    r = clip_rect(c, r);
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++)
            canvas_put(c, x, y, utf8_glyph, color, attr);
}

void canvas_mark(Canvas *c, Rect r, int color, int attr)
{
    r = clip_rect(c, r);
    for (int y = r.y; y < r.y + r.h; y++) {
        for (int x = r.x; x < r.x + r.w; x++) {
            Cell *cell = &c->cells[(size_t)y * c->w + x];
            cell->attr |= (unsigned char)attr;
            if (color >= 0)
                cell->color = (unsigned char)color;
        }
    }
}

const char *canvas_glyph(const Canvas *c, int x, int y)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h)
        return "";
    return c->cells[(size_t)y * c->w + x].g;
}

int canvas_color(const Canvas *c, int x, int y)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h)
        return -1;
    return c->cells[(size_t)y * c->w + x].color;
}

int canvas_attr(const Canvas *c, int x, int y)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h)
        return -1;
    return c->cells[(size_t)y * c->w + x].attr;
}

char *canvas_dump(const Canvas *c)
{
    size_t n = 1;
    for (size_t i = 0; i < (size_t)c->w * (size_t)c->h; i++)
        n += strlen(c->cells[i].g);
    n += (size_t)c->h;
    char *out = malloc(n);
    if (!out)
        return NULL;
    char *p = out;
    for (int y = 0; y < c->h; y++) {
        for (int x = 0; x < c->w; x++) {
            const char *g = c->cells[(size_t)y * c->w + x].g;
            size_t len = strlen(g);
            memcpy(p, g, len);
            p += len;
        }
        *p++ = '\n';
    }
    *p = '\0';
    return out;
}

Rect canvas_rect_inner(Rect r)
{
    Rect in = {r.x + 1, r.y + 1, r.w - 2, r.h - 2};
    if (in.w < 0)
        in.w = 0;
    if (in.h < 0)
        in.h = 0;
    return in;
}

void canvas_box(Canvas *c, Rect r, const char *title, int focused, int unicode)
{
    if (r.w < 2 || r.h < 2)
        return;
    /* unicode: light lines, heavy when focused */
    const char *u_light[6] = {"─", "│", "┌", "┐", "└", "┘"};
    const char *u_heavy[6] = {"━", "┃", "┏", "┓", "┗", "┛"};
    const char *ascii[6] = {"-", "|", "+", "+", "+", "+"};
    const char **g = !unicode ? ascii : focused ? u_heavy : u_light;
    int color = focused ? UI_COLOR_ACCENT : UI_COLOR_DIM;
    int attr = focused ? UI_ATTR_BOLD : 0;
    int x1 = r.x + r.w - 1, y1 = r.y + r.h - 1;
    for (int x = r.x + 1; x < x1; x++) {
        canvas_put(c, x, r.y, g[0], color, attr);
        canvas_put(c, x, y1, g[0], color, attr);
    }
    for (int y = r.y + 1; y < y1; y++) {
        canvas_put(c, r.x, y, g[1], color, attr);
        canvas_put(c, x1, y, g[1], color, attr);
    }
    canvas_put(c, r.x, r.y, g[2], color, attr);
    canvas_put(c, x1, r.y, g[3], color, attr);
    canvas_put(c, r.x, y1, g[4], color, attr);
    canvas_put(c, x1, y1, g[5], color, attr);
    if (title && title[0] && r.w >= 5) {
        int tx = r.x + 1;
        canvas_put(c, tx, r.y, " ", color, attr);
        int cols = canvas_text_fit(c, tx + 1, r.y, r.w - 4, title,
                                   focused ? UI_COLOR_ACCENT : UI_COLOR_DEFAULT,
                                   UI_ATTR_BOLD, unicode);
        canvas_put(c, tx + 1 + cols, r.y, " ", color, attr);
    }
}

/* ---- curses ---- */

static attr_t curses_attr(int attr)
{
    attr_t a = A_NORMAL;
    if (attr & UI_ATTR_BOLD)
        a |= A_BOLD;
    if (attr & UI_ATTR_REVERSE)
        a |= A_REVERSE;
    if (attr & UI_ATTR_DIM)
        a |= A_DIM;
    if (attr & UI_ATTR_UNDERLINE)
        a |= A_UNDERLINE;
    return a;
}

/* Writes cells [x0, x1) of row y, which share colour and attributes, in one call. */
static void blit_run(const Canvas *c, WINDOW *win, int y, int x0, int x1, int unicode,
                     int colors)
{
    char buf[4 * 256 + 1];
    const Cell *row = &c->cells[(size_t)y * c->w];
    while (x0 < x1) {
        size_t n = 0;
        int x = x0;
        for (; x < x1 && n + 4 < sizeof buf; x++) {
            const char *g = row[x].g;
            if (!unicode && (unsigned char)g[0] >= 0x80)
                g = "?";
            else if (!unicode && !g[0])
                g = " ";   /* the right half of a wide glyph written as one '?' */
            size_t len = strlen(g);
            memcpy(buf + n, g, len);
            n += len;
        }
        buf[n] = '\0';
        attr_t a = curses_attr(row[x0].attr);
        short pair = colors ? (short)row[x0].color : 0;
        wattr_set(win, a, pair, NULL);
        mvwaddstr(win, y, x0, buf);
        x0 = x;
    }
}

void canvas_blit(const Canvas *c, void *curses_window, const CanvasCaps *caps)
{
    WINDOW *win = curses_window;
    if (!win)
        return;
    int wh, ww;
    getmaxyx(win, wh, ww);
    int h = c->h < wh ? c->h : wh, w = c->w < ww ? c->w : ww;
    int colors = caps->colors && has_colors(), unicode = caps->unicode;
    for (int y = 0; y < h; y++) {
        const Cell *row = &c->cells[(size_t)y * c->w];
        int x0 = 0;
        while (x0 < w) {
            int x1 = x0 + 1;
            while (x1 < w && row[x1].color == row[x0].color && row[x1].attr == row[x0].attr)
                x1++;
            blit_run(c, win, y, x0, x1, unicode, colors);
            x0 = x1;
        }
    }
    wattr_set(win, A_NORMAL, 0, NULL);
}

void canvas_init_colors(void)
{
    if (!has_colors())
        return;
    short bg = COLOR_BLACK;
    if (use_default_colors() == OK)
        bg = -1;
    int rich = COLORS >= 256;
    short series[UI_N_SERIES_COLORS] = {COLOR_CYAN, COLOR_YELLOW, COLOR_GREEN, COLOR_MAGENTA,
                                        COLOR_BLUE, COLOR_RED, COLOR_WHITE,
                                        (short)(rich ? 208 : COLOR_WHITE)};
    /* heat ramp, dark to bright (a viridis-like ramp with 256 colours) */
    short heat8[UI_N_HEAT_COLORS] = {COLOR_BLUE, COLOR_CYAN, COLOR_GREEN, COLOR_YELLOW,
                                     COLOR_RED};
    short heat256[UI_N_HEAT_COLORS] = {54, 25, 30, 71, 184};
    for (int i = 0; i < UI_N_SERIES_COLORS; i++)
        init_pair((short)(UI_COLOR_SERIES1 + i), series[i], bg);
    init_pair(UI_COLOR_ACCENT, COLOR_CYAN, bg);
    init_pair(UI_COLOR_OK, COLOR_GREEN, bg);
    init_pair(UI_COLOR_WARN, COLOR_YELLOW, bg);
    init_pair(UI_COLOR_ERROR, COLOR_RED, bg);
    init_pair(UI_COLOR_DIM, (short)(rich ? 245 : COLOR_WHITE), bg);
    for (int i = 0; i < UI_N_HEAT_COLORS; i++)
        init_pair((short)(UI_COLOR_HEAT0 + i), rich ? heat256[i] : heat8[i], bg);
}
