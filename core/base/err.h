/* err.h — status codes and the caller-provided error buffer used by every fallible
 * function in core/. Not a logging facility: nothing here prints. */
#ifndef LM_ERR_H
#define LM_ERR_H

#include <stddef.h>

enum {
    LM_OK = 0,
    LM_EARG,      /* an argument or setting is invalid */
    LM_EIO,       /* a read or write failed (missing file, permission, disk full) */
    LM_EFORMAT,   /* a file is malformed, truncated or of the wrong kind */
    LM_ENOMEM,    /* an allocation failed or would exceed the machine's memory */
    LM_ESTATE,    /* the call is not valid in the current state */
    LM_EDIVERGED, /* NaN or Inf appeared in the loss or the gradients */
    LM_EDB,       /* the run store refused (locked, corrupt, newer schema) */
    LM_ECANCEL,   /* stopped at the caller's request */
    LM_ENOSPC,    /* the disk is full */
    LM_EPENDING,  /* asked another process; it has not answered yet (exit status 3) */
};

#define LM_ERR_LEN 512

/* Writes a printf-style message into err (LM_ERR_LEN bytes) when err is not NULL and
 * returns status, so failures read `return err_set(err, LM_EARG, "...", ...)`. */
int err_set(char *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A short fixed name for a status code ("invalid argument", "I/O error", ...). */
const char *err_name(int status);

#endif
