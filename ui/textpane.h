/* textpane.h — a scrollback buffer for streamed text (samples token by token, command
 * output, logs) and its word-wrapped drawing. Appends may split lines and UTF-8
 * sequences anywhere; each append carries its own colour and attributes. Keeps at
 * most max_lines finished lines plus the one being written (oldest dropped).
 * Not an editor and not a terminal emulator: tabs become spaces (stops every 4
 * columns); '\r', other control characters and ESC bytes are dropped. */
#ifndef LM_UI_TEXTPANE_H
#define LM_UI_TEXTPANE_H

#include <stddef.h>

#include "canvas.h"

typedef struct TextPane TextPane;

/* An empty pane keeping at most max_lines finished lines (< 1 means 1). NULL when out of
 * memory. The caller owns it: textpane_destroy (NULL is a no-op). */
TextPane *textpane_create(int max_lines);
void textpane_destroy(TextPane *p);

/* Appends text (n bytes; n < 0 means up to the NUL) drawn with color and attr. A
 * trailing incomplete UTF-8 sequence is held until the next append completes it;
 * invalid bytes become '?'. While the view is scrolled back, it stays on the same
 * text (the offset grows with the new rows). 0, or -1 when out of memory (the text
 * appended so far stays). */
int textpane_append(TextPane *p, const char *text, long n, int color, int attr);
/* Ends the current line if it is not empty (so the next append starts a new line). */
int textpane_newline_if_needed(TextPane *p);
/* Forgets all text and resets the view to the bottom. */
void textpane_clear(TextPane *p);

/* Lines held (the unfinished last line counts when it is not empty). */
int textpane_line_count(const TextPane *p);
/* Line i (0 = oldest held) as UTF-8 without the newline, or NULL when out of range.
 * The pointer lives until the next append or clear. */
const char *textpane_line(const TextPane *p, int i);

/* Scrolls the view by delta display rows (positive = back to older text); clamped
 * by the next draw. textpane_page scrolls by pages (positive = back) of the last
 * drawn height; textpane_scroll_end follows the newest text again. */
void textpane_scroll(TextPane *p, int delta);
void textpane_page(TextPane *p, int pages);
void textpane_scroll_end(TextPane *p);
/* Display rows the view is scrolled back from the newest text (0 = following). */
int textpane_offset(const TextPane *p);

/* Draws the text word-wrapped into r (long words are cut), the newest line at the
 * bottom unless scrolled back; then remembers r's size for paging and clamps the
 * offset. When scrolled back, the last column of the bottom row shows '↓' ('v'). */
void textpane_draw(Canvas *c, Rect r, TextPane *p, const CanvasCaps *caps);

#endif
