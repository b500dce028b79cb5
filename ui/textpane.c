/* textpane.c — scrollback storage (a ring of lines, each with colour spans), UTF-8
 * reassembly across appends, greedy word wrap, and bottom-anchored drawing with a
 * scroll offset in display rows. Not a terminal emulator (no escape sequences). */
#include "textpane.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int start;                  /* byte offset where this colour starts */
    unsigned char color, attr;
} Span;

typedef struct {
    char *text;                 /* (cap + 1), NUL-terminated */
    int len, cap;
    Span *spans;
    int n_spans, cap_spans;
    int cols;                   /* code points, for tab stops */
} Line;

struct TextPane {
    Line *ring;                 /* (max_lines + 1) */
    int max_lines, head, count; /* count >= 1: the last line is the one being written */
    long first_serial;          /* serial number of ring[head] */
    char pending[4];            /* an incomplete UTF-8 sequence awaiting its tail */
    int n_pending, pending_color, pending_attr;
    int offset;                 /* display rows scrolled back from the bottom */
    int last_w, last_h;         /* size of the last draw */
};

TextPane *textpane_create(int max_lines)
{
    TextPane *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->max_lines = max_lines < 1 ? 1 : max_lines;
    /* one slot more than max_lines: the line being written after the last newline */
    p->ring = calloc((size_t)p->max_lines + 1, sizeof *p->ring);
    if (!p->ring) {
        free(p);
        return NULL;
    }
    p->count = 1;
    return p;
}

void textpane_destroy(TextPane *p)
{
    if (!p)
        return;
    for (int i = 0; i <= p->max_lines; i++) {
        free(p->ring[i].text);
        free(p->ring[i].spans);
    }
    free(p->ring);
    free(p);
}

static Line *line_at(const TextPane *p, int i)
{
    return &p->ring[(p->head + i) % (p->max_lines + 1)];
}
static Line *current(const TextPane *p) { return line_at(p, p->count - 1); }

static void line_reset(Line *l)
{
    l->len = l->n_spans = l->cols = 0;
    if (l->text)
        l->text[0] = '\0';
}

void textpane_clear(TextPane *p)
{
    for (int i = 0; i <= p->max_lines; i++)
        line_reset(&p->ring[i]);
    p->head = 0;
    p->count = 1;
    p->first_serial = 0;
    p->n_pending = 0;
    p->offset = 0;
}

static void new_line(TextPane *p)
{
    if (p->count == p->max_lines + 1) {
        line_reset(line_at(p, 0));
        p->head = (p->head + 1) % (p->max_lines + 1);
        p->first_serial++;
        p->count--;
    }
    p->count++;
    line_reset(current(p));
}

/* Appends n bytes holding one code point (or ' ', '?') to the current line. */
static int emit(TextPane *p, const char *s, int n, int color, int attr)
{
    Line *l = current(p);
    if (l->len + n > l->cap) {
        int cap = l->cap ? l->cap * 2 : 64;
        while (cap < l->len + n)
            cap *= 2;
        char *t = realloc(l->text, (size_t)cap + 1);
        if (!t)
            return -1;
        l->text = t;
        l->cap = cap;
    }
    if (!l->n_spans || l->spans[l->n_spans - 1].color != color ||
        l->spans[l->n_spans - 1].attr != attr) {
        if (l->n_spans == l->cap_spans) {
            int cap = l->cap_spans ? l->cap_spans * 2 : 4;
            Span *s2 = realloc(l->spans, (size_t)cap * sizeof *s2);
            if (!s2)
                return -1;
            l->spans = s2;
            l->cap_spans = cap;
        }
        l->spans[l->n_spans++] = (Span){l->len, (unsigned char)color, (unsigned char)attr};
    }
    memcpy(l->text + l->len, s, (size_t)n);
    l->len += n;
    l->text[l->len] = '\0';
    l->cols++;
    return 0;
}

/* Expected length of a UTF-8 sequence from its lead byte, 0 if not a lead byte. */
static int lead_len(unsigned char b)
{
    return b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
}

/* Feeds one non-ASCII byte through the pending sequence. */
static int feed_multibyte(TextPane *p, unsigned char b, int color, int attr)
{
    if (p->n_pending > 0 && (b & 0xC0) != 0x80) {
        p->n_pending = 0;    /* the sequence broke off: show it as one '?' */
        if (emit(p, "?", 1, p->pending_color, p->pending_attr))
            return -1;
    }
    if (p->n_pending == 0) {
        if (!lead_len(b))
            return emit(p, "?", 1, color, attr);
        p->pending_color = color;
        p->pending_attr = attr;
    }
    p->pending[p->n_pending++] = (char)b;
    int need = lead_len((unsigned char)p->pending[0]);
    if (p->n_pending < need)
        return 0;
    int ok = canvas_utf8_len(p->pending, (size_t)need) == need;
    p->n_pending = 0;
    return ok ? emit(p, p->pending, need, p->pending_color, p->pending_attr)
              : emit(p, "?", 1, p->pending_color, p->pending_attr);
}

static int feed_byte(TextPane *p, unsigned char b, int color, int attr)
{
    if (b >= 0x80 || p->n_pending > 0) {
        if (b >= 0x80)
            return feed_multibyte(p, b, color, attr);
        p->n_pending = 0;    /* ASCII after an unfinished sequence */
        if (emit(p, "?", 1, p->pending_color, p->pending_attr))
            return -1;
    }
    if (b == '\n') {
        new_line(p);
        return 0;
    }
    if (b == '\t') {
        do {
            if (emit(p, " ", 1, color, attr))
                return -1;
        } while (current(p)->cols % 4);
        return 0;
    }
    if (b < 0x20 || b == 0x7F)
        return 0;
    char ch = (char)b;
    return emit(p, &ch, 1, color, attr);
}

/* Rows of text line l wrapped at width w; see wrap_row. */
static int wrap_row(const Line *l, int start, int w, int *end);

static int line_rows(const Line *l, int w)
{
    int rows = 0, start = 0, end;
    do {
        start = wrap_row(l, start, w, &end);
        rows++;
    } while (start < l->len);
    return rows;
}

int textpane_append(TextPane *p, const char *text, long n, int color, int attr)
{
    if (!text)
        return 0;
    if (n < 0)
        n = (long)strlen(text);
    long serial = p->first_serial + p->count - 1;
    const Line *cur = current(p);
    int before = p->offset > 0 && p->last_w > 0 && cur->len > 0 ? line_rows(cur, p->last_w) : 0;
    int rc = 0;
    for (long i = 0; i < n && rc == 0; i++)
        rc = feed_byte(p, (unsigned char)text[i], color, attr);
    if (p->offset > 0 && p->last_w > 0 && serial >= p->first_serial) {
        int after = 0;
        for (int i = (int)(serial - p->first_serial); i < p->count; i++) {
            const Line *l = line_at(p, i);
            if (i == p->count - 1 && l->len == 0)
                break;   /* the fresh empty line takes no row */
            after += line_rows(l, p->last_w);
        }
        p->offset += after - before;
        if (p->offset < 0)
            p->offset = 0;
    }
    return rc;
}

int textpane_newline_if_needed(TextPane *p)
{
    if (current(p)->len == 0 && p->n_pending == 0)
        return 0;
    return textpane_append(p, "\n", 1, 0, 0);
}

int textpane_line_count(const TextPane *p)
{
    return p->count - (current(p)->len == 0 ? 1 : 0);
}

const char *textpane_line(const TextPane *p, int i)
{
    if (i < 0 || i >= textpane_line_count(p))
        return NULL;
    const Line *l = line_at(p, i);
    return l->text ? l->text : "";
}

void textpane_scroll(TextPane *p, int delta)
{
    p->offset += delta;
    if (p->offset < 0)
        p->offset = 0;
}

void textpane_page(TextPane *p, int pages)
{
    int h = p->last_h > 1 ? p->last_h - 1 : 1;
    textpane_scroll(p, pages * h);
}

void textpane_scroll_end(TextPane *p) { p->offset = 0; }
int textpane_offset(const TextPane *p) { return p->offset; }

/* One display row of l from byte `start`, at most w columns, breaking after the
 * last space when a word would be cut. Sets *end (exclusive) and returns where the
 * next row starts (spaces at the break are swallowed). */
static int wrap_row(const Line *l, int start, int w, int *end)
{
    const char *s = l->text;
    int len = l->len, i = start, cols = 0, brk = -1;
    if (w < 1)
        w = 1;
    while (i < len && cols < w) {
        int n = canvas_utf8_len(s + i, (size_t)(len - i));
        int gw = canvas_glyph_width(s + i, n);   /* display width: CJK and emoji take 2 */
        if (cols + gw > w && cols > 0)
            break;
        if (s[i] == ' ')
            brk = i;
        i += n ? n : 1;
        cols += gw;
    }
    if (i >= len) {
        *end = len;
        return len;
    }
    int next = i;
    if (s[i] == ' ') {
        *end = i;
    } else if (brk > start) {
        *end = brk;
        next = brk;
    } else {
        *end = i;
        return i;   /* a word longer than the row: cut it */
    }
    while (next < len && s[next] == ' ')
        next++;
    return next;
}

static void row_draw(Canvas *c, int x, int y, const Line *l, int start, int end,
                     const CanvasCaps *caps)
{
    int sp = 0;
    for (int i = start; i < end;) {
        while (sp + 1 < l->n_spans && l->spans[sp + 1].start <= i)
            sp++;
        int color = l->n_spans && caps->colors ? l->spans[sp].color : 0;
        int attr = l->n_spans ? l->spans[sp].attr : 0;
        x += canvas_put(c, x, y, l->text + i, color, attr);
        int n = canvas_utf8_len(l->text + i, (size_t)(l->len - i));
        i += n ? n : 1;
    }
}

/* Draws the rows of line l whose bottom indices (0 = bottom row of the whole text)
 * fall in the view; acc is the bottom index of the line's last row. */
static void line_draw(Canvas *c, Rect r, const Line *l, int acc, int nr, int offset,
                      const CanvasCaps *caps)
{
    int start = 0, end;
    for (int k = 0; k < nr; k++) {
        int next = wrap_row(l, start, r.w, &end);
        int b = acc + nr - 1 - k;
        if (b >= offset && b < offset + r.h)
            row_draw(c, r.x, r.y + r.h - 1 - (b - offset), l, start, end, caps);
        start = next;
    }
}

void textpane_draw(Canvas *c, Rect r, TextPane *p, const CanvasCaps *caps)
{
    if (r.w < 1 || r.h < 1)
        return;
    p->last_w = r.w;
    p->last_h = r.h;
    int n = textpane_line_count(p), acc = 0;
    for (int i = n - 1; i >= 0 && acc < p->offset + r.h; i--) {
        const Line *l = line_at(p, i);
        int nr = line_rows(l, r.w);
        if (acc + nr > p->offset)
            line_draw(c, r, l, acc, nr, p->offset, caps);
        acc += nr;
    }
    if (acc < p->offset + r.h && p->offset > 0) {
        /* scrolled past the oldest text: clamp and redraw at the top */
        p->offset = acc > r.h ? acc - r.h : 0;
        canvas_fill(c, r, " ", 0, 0);
        textpane_draw(c, r, p, caps);
        return;
    }
    if (p->offset > 0)
        canvas_put(c, r.x + r.w - 1, r.y + r.h - 1, caps->unicode ? "↓" : "v",
                   UI_COLOR_ACCENT, UI_ATTR_BOLD);
}
