/* runfiles.c — writing and parsing run-folder file names from runfiles.def (runfiles.h).
 * Not a directory walker: callers list folders themselves and ask this for each name. */
#include "runfiles.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    RunFileKind kind;
    const char *prefix, *suffix;
    int numbered;
} RunFileSpec;

static const RunFileSpec SPECS[] = {
#define RUNFILE(kind, prefix, numbered, suffix) {kind, prefix, suffix, numbered},
#include "runfiles.def"
#undef RUNFILE
};
enum { N_SPECS = (int)(sizeof SPECS / sizeof SPECS[0]) };

int runfiles_path(char *out, size_t cap, const char *dir, RunFileKind kind, long step)
{
    if (!cap)
        return -1;
    out[0] = 0;
    if ((int)kind < 0 || (int)kind >= N_SPECS)
        return -1;
    const RunFileSpec *s = &SPECS[kind];
    char num[32] = "";
    if (s->numbered)
        snprintf(num, sizeof num, "%08ld", step);
    int has_dir = dir && dir[0];
    int n = snprintf(out, cap, "%s%s%s%s%s", has_dir ? dir : "", has_dir ? "/" : "", s->prefix,
                     num, s->suffix);
    if (n < 0 || (size_t)n >= cap) {
        out[0] = 0;
        return -1;
    }
    return 0;
}

/* 1 when p is "" or ".tmp.DIGITS" (setting *tmp), else 0. */
static int tail_ok(const char *p, int *tmp)
{
    if (!*p)
        return 1;
    if (strncmp(p, ".tmp.", 5) || !isdigit((unsigned char)p[5]))
        return 0;
    for (p += 5; isdigit((unsigned char)*p); p++) {}
    if (*p)
        return 0;
    *tmp = 1;
    return 1;
}

RunFileKind runfiles_parse(const char *name, long *step, int *tmp)
{
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name ? name : "";
    for (int i = 0; i < N_SPECS; i++) {
        const RunFileSpec *s = &SPECS[i];
        size_t pl = strlen(s->prefix), sl = strlen(s->suffix);
        if (strncmp(base, s->prefix, pl))
            continue;
        const char *p = base + pl;
        long v = -1;
        if (s->numbered) {
            if (!isdigit((unsigned char)*p))
                continue;
            char *end;
            v = strtol(p, &end, 10);
            p = end;
        }
        int t = 0;
        if (strncmp(p, s->suffix, sl) || !tail_ok(p + sl, &t))
            continue;
        if (step)
            *step = v;
        if (tmp)
            *tmp = t;
        return s->kind;
    }
    if (step)
        *step = -1;
    if (tmp)
        *tmp = 0;
    return RUNFILE_NONE;
}
