/* session_util.h — running command lines through a real Session in the command tests
 * (test_commands.c, test_session.c, test_exports.c, test_tokenize.c, test_cmd_model.c)
 * and capturing what they print: install capture with session_set_writer(&s, capture,
 * NULL), then run(&s, line) clears the capture and runs one line; out then holds its
 * output and n_errors the number of error messages. Header-only, like check.h (each test
 * is one file). Not a fake session and no output parsing (JSON helpers stay per test). */
#ifndef LM_SESSION_UTIL_H
#define LM_SESSION_UTIL_H

#include "commands.h"
#include "session.h"

#include <string.h>

/* What was printed since the last reset: each message on its own line, stream pieces
 * (samples as they come) joined as printed. Cut short, silently, at 1 MiB. */
static char out[1 << 20];
static size_t out_len;
static int n_errors;   /* SESSION_OUT_ERROR messages since the last reset */

/* The session writer: appends text to out and counts errors. */
static inline void capture(void *ud, int kind, const char *text)
{
    (void)ud;
    if (kind == SESSION_OUT_ERROR) n_errors++;
    size_t n = strlen(text);
    if (out_len + n + 2 < sizeof out) {
        memcpy(out + out_len, text, n);
        out_len += n;
        if (kind != SESSION_OUT_STREAM) out[out_len++] = '\n';
        out[out_len] = 0;
    }
}

/* Empties out and n_errors (before a command run other than through run()). */
static inline void reset(void)
{
    out_len = 0;
    out[0] = 0;
    n_errors = 0;
}

/* Runs one command line with a fresh capture; session_run_line's status. */
static inline int run(Session *s, const char *line)
{
    reset();
    return session_run_line(s, line);
}

#endif
