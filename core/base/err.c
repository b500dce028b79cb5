/* err.c — status names and the error-buffer helper (see err.h). */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>

int err_set(char *err, int status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, LM_ERR_LEN, fmt, ap);
        va_end(ap);
    }
    return status;
}

const char *err_name(int status)
{
    switch (status) {
    case LM_OK: return "ok";
    case LM_EARG: return "invalid argument";
    case LM_EIO: return "I/O error";
    case LM_EFORMAT: return "malformed file";
    case LM_ENOMEM: return "out of memory";
    case LM_ESTATE: return "invalid state";
    case LM_EDIVERGED: return "diverged";
    case LM_EDB: return "run store error";
    case LM_ECANCEL: return "cancelled";
    case LM_ENOSPC: return "disk full";
    case LM_EPENDING: return "not answered yet";
    default: return "unknown error";
    }
}
