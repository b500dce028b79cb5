/* editor.h — a key-driven line editor independent of any terminal library: the caller
 * feeds key codes to editor_key and draws what editor_render gives. The same editor
 * runs inside the ncurses dashboard (which maps its KEY_* codes to EDITOR_KEY_*) and in
 * plain line mode (editor_readline: raw termios, escape sequences decoded here).
 * Emacs-style keys as in readline; one kill-ring entry; history navigation that keeps
 * the line being typed. Columns are counted one per code point (no East Asian wide
 * characters). Not a multi-line editor, not a full readline: no undo, no search, no
 * vi mode. The editor never allocates; a line holds at most EDITOR_MAX_LINE-1 bytes
 * (further input is dropped and the line marked cut: it is refused on Enter). */
#ifndef LM_EDITOR_H
#define LM_EDITOR_H

#include "history.h"

#include <stddef.h>

#define EDITOR_MAX_LINE 4096

/* What editor_key asks the caller to do. */
enum {
    EDIT_NONE = 0,  /* the line or cursor may have changed: redraw */
    EDIT_SUBMIT,    /* Enter: e->buf holds the line (the caller adds it to the history
                     * and calls editor_reset) */
    EDIT_COMPLETE,  /* Tab: run completion on (e->buf, e->cursor), then
                     * editor_complete_apply */
    EDIT_EOF,       /* Ctrl-D on an empty line */
    EDIT_INTERRUPT, /* Ctrl-C: the line is left as is; the caller decides */
    EDIT_CLEAR,     /* Ctrl-L: the caller clears the screen and redraws */
    EDIT_SUSPEND,   /* Ctrl-Z: the caller restores the terminal and stops the process */
};

/* Key codes: printable Unicode code points stand for themselves; control keys are their
 * ASCII codes (what curses and a raw tty deliver); the rest lie above Unicode. */
enum {
    EDITOR_KEY_CTRL_A = 1, EDITOR_KEY_CTRL_B = 2, EDITOR_KEY_CTRL_C = 3,
    EDITOR_KEY_CTRL_D = 4, EDITOR_KEY_CTRL_E = 5, EDITOR_KEY_CTRL_F = 6,
    EDITOR_KEY_CTRL_H = 8, /* backspace on some terminals */
    EDITOR_KEY_TAB = 9,
    EDITOR_KEY_CTRL_J = 10, /* newline: same as Enter */
    EDITOR_KEY_CTRL_K = 11, EDITOR_KEY_CTRL_L = 12,
    EDITOR_KEY_ENTER = 13,
    EDITOR_KEY_CTRL_N = 14, /* same as Down */
    EDITOR_KEY_CTRL_P = 16, /* same as Up */
    EDITOR_KEY_CTRL_U = 21, EDITOR_KEY_CTRL_W = 23, EDITOR_KEY_CTRL_Y = 25,
    EDITOR_KEY_CTRL_Z = 26, /* suspend (the terminal's own job control) */
    EDITOR_KEY_ESC = 27,    /* ignored */
    EDITOR_KEY_BACKSPACE = 127,
    EDITOR_KEY_LEFT = 0x110000, EDITOR_KEY_RIGHT, EDITOR_KEY_UP, EDITOR_KEY_DOWN,
    EDITOR_KEY_HOME, EDITOR_KEY_END, EDITOR_KEY_DELETE,
    EDITOR_KEY_ALT_B,        /* back one word */
    EDITOR_KEY_ALT_F,        /* forward one word */
    EDITOR_KEY_ALT_D,        /* kill to the end of the word */
    EDITOR_KEY_ALT_BACKSPACE /* kill to the start of the word */
};

typedef struct {
    char buf[EDITOR_MAX_LINE];   /* the line, UTF-8, NUL-terminated */
    int len;                     /* bytes in buf */
    int cursor;                  /* byte offset in [0, len], on a code point boundary */
    char kill[EDITOR_MAX_LINE];  /* the kill ring's one entry (C-k, C-u, C-w, M-d) */
    History *history;            /* walked by Up/Down; NULL: none. Not owned. */
    int hist_pos;                /* history entry shown; history->n = the typed line */
    char saved[EDITOR_MAX_LINE]; /* the typed line while browsing the history */
    int scroll;                  /* editor_render: first visible byte */
    int selected;                /* the whole line is selected (editor_select_all): the next
                                    typed character replaces it, Backspace/Delete empty it,
                                    any other key just drops the selection */
    int cut;                     /* input was dropped (no room): the line is not what was
                                    typed, and a submit must not run it (EDITOR_CUT_TEXT) */
} LineEditor;

/* What the callers say instead of running a line that was cut (one %d: the limit). */
#define EDITOR_CUT_TEXT "the line is longer than %d bytes: its end was dropped, so it was " \
    "not run; give long text from a script (`lmlab -c`, or a file of commands)"

/* Completion callback for editor_readline: candidates for the word that starts at byte
 * *word_start and ends at cursor (malloc'd array of malloc'd strings, or NULL).
 * Returns LM_OK or a status. cmdtable_completer (cmdtable.h) is one. */
typedef int (*EditorCompleteFn)(void *ud, const char *line, int cursor, char ***cands,
                                int *ncand, int *word_start);

/* Empty line, cursor 0, empty kill ring; history may be NULL. Caller-owned, nothing to
 * free. */
void editor_init(LineEditor *e, History *history);

/* Empties the line and returns history navigation to the typed line; keeps the kill
 * ring. */
void editor_reset(LineEditor *e);

/* Replaces the line with text (truncated at a code point to fit), cursor at the end. */
void editor_set_line(LineEditor *e, const char *text);

/* Applies one key and says what the caller should do (EDIT_*). Keys: printable code
 * points insert; Left/C-b, Right/C-f, Home/C-a, End/C-e move; M-b / M-f move by words
 * (letters, digits, '_', non-ASCII); Backspace/C-h and Delete delete a code point;
 * C-d deletes forward or, on an empty line, is EDIT_EOF; C-k kills to the end, C-u to
 * the start, C-w the whitespace-delimited word before the cursor, M-d the word after,
 * M-Backspace the word before; C-y yanks; Up/C-p and Down/C-n walk the history (the
 * typed line is kept and comes back below the newest entry; edits to a recalled entry
 * are dropped when moving away); Tab, Enter, C-c, C-l return their actions. Unknown
 * keys and non-printable code points do nothing. */
int editor_key(LineEditor *e, int key);

/* Selects the whole line, cursor at its end (a pre-filled value the user may keep, edit
 * or replace by typing, as a text field with its text selected). */
void editor_select_all(LineEditor *e);

/* After EDIT_COMPLETE: replaces the bytes [word_start, cursor) by the single candidate
 * (followed by a space unless it ends in '=' or '/' or a space already follows), or by
 * the candidates' longest common prefix when that is longer than what was typed.
 * Returns 1 when there are several candidates (the caller should list them), else 0. */
int editor_complete_apply(LineEditor *e, int word_start, char *const *cands, int n);

/* The visible part of the line for a field `width` columns wide, scrolled horizontally
 * so the cursor is always visible (at most width-1 columns right of the field start).
 * Writes whole code points of at most width columns into out (cap bytes with the NUL;
 * 4*width+1 always suffices); control characters show as spaces. *cursor_col receives
 * the cursor's column in the field. Returns the bytes written. Updates e->scroll. */
int editor_render(LineEditor *e, int width, char *out, size_t cap, int *cursor_col);

/* Decodes one key from the bytes a terminal sent: UTF-8 code points, control codes,
 * and escape sequences (arrows, Home/End in their CSI and SS3 forms, Delete,
 * Ctrl/Alt-arrows as word moves, ESC b/f/d and ESC Backspace as Alt keys). Returns the
 * bytes used with *key set (-1 for a malformed or unknown sequence, to be ignored), or
 * 0 when s holds only the start of a sequence (read more, or after a short wait treat
 * a lone ESC as EDITOR_KEY_ESC). */
int editor_decode_key(const unsigned char *s, int n, int *key);

/* Reads one line from standard input. On a terminal: raw mode with the prompt, editing,
 * history (e->history, if any; the line is added to it) and completion through
 * complete (may be NULL); the terminal is restored before returning and when a signal
 * (SIGTERM, SIGHUP, SIGQUIT, SIGINT) arrives. Otherwise: a plain line read, no prompt.
 * Returns LM_OK with *line malloc'd (caller frees) or NULL at end of input; LM_ECANCEL
 * for Ctrl-C or a signal; LM_EIO / LM_ENOMEM with a message. */
int editor_readline(LineEditor *e, const char *prompt, EditorCompleteFn complete, void *ud,
                    char **line, char *err);

#endif
