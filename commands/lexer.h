/* lexer.h — splits one command line into commands (separated by ';') and each command
 * into words: bare words, "quoted words", and key=value pairs whose value may be quoted
 * (`prompt="To be, or"`). Every word keeps its byte span in the original line so errors
 * can point at it (lexer_caret). Rules, shell-like but smaller:
 *   - whitespace separates words; ';' outside quotes ends a command (empty ones vanish);
 *   - '#' outside quotes starts a comment that runs to the end of the line;
 *   - '...' is literal; "..." knows the escapes \" \\ \n \t (any other \x stays as is);
 *     quoted and bare parts of one word are joined (`a"b c"` is the word `ab c`);
 *   - the first '=' outside quotes makes the word key=value; the key must not be empty;
 *   - a backslash outside quotes is an ordinary character (Windows-free paths stay easy).
 * Not a shell: no variables, globbing, pipes or redirections. Nothing here prints. */
#ifndef LM_LEXER_H
#define LM_LEXER_H

#include <stddef.h>

/* LexWord.flags */
enum {
    LEXW_QUOTED = 1,  /* some part of the word was quoted */
    LEXW_OPEN = 2,    /* LEXER_PARTIAL only: the word ends inside an unclosed quote */
    LEXW_KEYVAL = 4,  /* the word is key=value (key and value are set) */
};

/* lexer_split flags */
enum {
    LEXER_PARTIAL = 1, /* for completion: an unclosed quote or an empty key is accepted */
};

typedef struct {
    const char *text;  /* the word after quote removal and escapes, NUL-terminated */
    const char *key;   /* key=value: the key; otherwise NULL */
    const char *value; /* key=value: the value (may be ""); otherwise the same as text */
    int offset, len;   /* byte span of the raw word in the original line */
    int value_offset;  /* key=value: offset of the first raw byte after '='; else offset */
    int flags;         /* LEXW_* */
} LexWord;

typedef struct {
    const LexWord *argv; /* (argc) points into LexLine.words; argv[0] is the command name */
    int argc;
    int offset, len;     /* byte span from the first word's start to the last word's end */
} LexCommand;

typedef struct {
    LexWord *words;      /* (n_words) every word of every command, in line order */
    int n_words;
    LexCommand *cmds;    /* (n_cmds) non-empty commands in line order */
    int n_cmds;
    int err_offset, err_len; /* after a failed split: the byte span the error points at */
    char *arena_;        /* private: storage for the words' texts */
} LexLine;

/* Splits line into commands and words. Returns LM_OK; LM_EARG for an unterminated quote
 * or an empty key (`=5`), with a message naming the column (1-based, in bytes) in err
 * and the span in out->err_offset/err_len; LM_ENOMEM. out is always initialised and
 * must be released with lexer_free, also after a failure (it is then empty). */
int lexer_split(LexLine *out, const char *line, int flags, char *err);

/* Releases what lexer_split allocated and empties l. NULL is a no-op. */
void lexer_free(LexLine *l);

/* Formats two lines pointing at a span of line:
 *     "  train lrr=1\n        ^^^\n"
 * Carets are aligned by code points (tabs are copied so they align too); a span of
 * length 0 gets one caret; newlines in line are shown as spaces. Writes at most cap
 * bytes including the NUL (truncating) and returns the length it wanted, like snprintf. */
int lexer_caret(const char *line, int offset, int len, char *buf, size_t cap);

#endif
