/* canvas.h — an off-screen grid of cells (one UTF-8 glyph, a colour pair, attributes)
 * that every widget draws into, plus the one function that copies it to curses.
 * Widgets never touch curses, so they are testable without a terminal (canvas_dump).
 * Not a layout engine and not a terminal abstraction: one glyph = one column (wide
 * East Asian characters and emoji are counted as one column too, which a terminal
 * renders two columns wide; the dashboard's text is expected to be narrow). */
#ifndef LM_UI_CANVAS_H
#define LM_UI_CANVAS_H

#include <stddef.h>

typedef struct Canvas Canvas;

typedef struct {
    int x, y, w, h;
} Rect;

/* What the terminal can show: unicode = 0 means ASCII glyphs only (a non-UTF-8
 * locale); colors = 0 means monochrome (widgets use attributes and glyph shapes). */
typedef struct {
    int unicode;
    int colors;
} CanvasCaps;

/* The fixed palette of colour pairs (pair numbers for curses; 0 = terminal default). */
enum {
    UI_COLOR_DEFAULT = 0,
    UI_COLOR_SERIES1, UI_COLOR_SERIES2, UI_COLOR_SERIES3, UI_COLOR_SERIES4,
    UI_COLOR_SERIES5, UI_COLOR_SERIES6, UI_COLOR_SERIES7, UI_COLOR_SERIES8,
    UI_COLOR_ACCENT,   /* titles, focused frames, "finished" */
    UI_COLOR_OK,       /* green: training */
    UI_COLOR_WARN,     /* yellow: paused, warnings */
    UI_COLOR_ERROR,    /* red: diverged, failed, error text */
    UI_COLOR_DIM,      /* secondary text: axes, labels */
    UI_COLOR_HEAT0, UI_COLOR_HEAT1, UI_COLOR_HEAT2, UI_COLOR_HEAT3, UI_COLOR_HEAT4,
    UI_COLOR_COUNT
};
#define UI_N_SERIES_COLORS 8
#define UI_N_HEAT_COLORS 5

/* Cell attributes, OR-able. */
enum {
    UI_ATTR_BOLD = 1,
    UI_ATTR_REVERSE = 2,
    UI_ATTR_DIM = 4,
    UI_ATTR_UNDERLINE = 8,
};

/* A w x h canvas of blank cells; NULL when out of memory. w, h < 0 count as 0.
 * The caller owns it: canvas_destroy (NULL is a no-op). */
Canvas *canvas_create(int w, int h);
void canvas_destroy(Canvas *c);
/* Changes the size and blanks every cell. 0, or -1 (canvas unchanged) when out of
 * memory. */
int canvas_resize(Canvas *c, int w, int h);
int canvas_width(const Canvas *c);
int canvas_height(const Canvas *c);

/* Blanks every cell (space, default colour, no attribute). */
void canvas_clear(Canvas *c);
/* Sets the cell (x, y) to the first code point of utf8_glyph (NULL or "" = space;
 * an invalid or control byte becomes '?'). A double-width glyph (wcwidth 2: CJK, most
 * emoji) also takes cell (x + 1), or is drawn as a space in the last column. Cells
 * outside the canvas are ignored. Returns the columns the glyph takes (1 or 2). */
int canvas_put(Canvas *c, int x, int y, const char *utf8_glyph, int color, int attr);
/* Draws a string from (x, y), by display width (double-width glyphs take two columns,
 * one that does not fit is not drawn), at most max_w columns; stops
 * at a newline; control characters are drawn as spaces and invalid bytes as '?'.
 * Returns the columns the text occupies (<= max_w), counting any cut off by the
 * canvas edge, so callers can advance x. */
int canvas_text(Canvas *c, int x, int y, int max_w, const char *utf8, int color, int attr);
/* Like canvas_text, but a string longer than max_w ends in a truncation marker ('…',
 * or '~' when !unicode) in the last column. Returns the columns occupied. */
int canvas_text_fit(Canvas *c, int x, int y, int max_w, const char *utf8, int color,
                    int attr, int unicode);
/* Fills a rectangle with one glyph (clipped). */
void canvas_fill(Canvas *c, Rect r, const char *utf8_glyph, int color, int attr);
/* ORs attr into (and, when color >= 0, sets the colour of) the cells of r, keeping
 * their glyphs: selection bars, cursors. */
void canvas_mark(Canvas *c, Rect r, int color, int attr);

/* The cell's glyph (a space for blank cells; "" only for the right half of a
 * double-width glyph), colour and attributes; for a
 * cell outside the canvas: "", -1, -1. The glyph pointer lives until the next change. */
const char *canvas_glyph(const Canvas *c, int x, int y);
int canvas_color(const Canvas *c, int x, int y);
int canvas_attr(const Canvas *c, int x, int y);

/* The screen as UTF-8 text: h lines of w glyphs, each ending in '\n'. Caller frees
 * with free(); NULL when out of memory. */
char *canvas_dump(const Canvas *c);

/* A frame around r with the title on the top edge (clipped), ASCII "+-|" when
 * !unicode; focused frames are drawn bold in the accent colour. Needs w, h >= 2. */
void canvas_box(Canvas *c, Rect r, const char *title, int focused, int unicode);
/* The inside of a frame drawn by canvas_box (r shrunk by one cell each side). */
Rect canvas_rect_inner(Rect r);

/* UTF-8 helpers shared by the widgets. canvas_utf8_len: the byte length (1..4) of the
 * well-formed code point starting at s within avail bytes, 0 if invalid or
 * incomplete. canvas_utf8_width: the columns a string takes on the terminal (wcwidth:
 * 2 for double-width glyphs, 1 for others; invalid bytes count one each; needs an
 * LC_CTYPE UTF-8 locale, else every glyph counts one). canvas_glyph_width: the columns of
 * the n-byte code point at s (n from canvas_utf8_len; 0 = an invalid byte, one column). */
int canvas_utf8_len(const char *s, size_t avail);
int canvas_utf8_width(const char *utf8);
int canvas_glyph_width(const char *s, int n);

/* Copies the canvas to a curses WINDOW* from its top-left corner (clipped to the
 * window), with the attributes and, when caps->colors (and the terminal has colours),
 * the colour pairs of canvas_init_colors; without, no colour at all (NO_COLOR). With
 * !caps->unicode, non-ASCII glyphs are written as '?'. Does not refresh the window. */
void canvas_blit(const Canvas *c, void *curses_window, const CanvasCaps *caps);
/* Declares the palette's colour pairs; call after start_color(). No-op without
 * colours. Uses the terminal's default background when it allows. */
void canvas_init_colors(void);

#endif
