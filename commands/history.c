/* history.c — command history in memory and on disk (see history.h). Entries are
 * escaped one per line; saving is write-to-temporary-then-rename. Not a search index:
 * the line editor walks it by position. */
#include "history.h"

#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void history_init(History *h, int max)
{
    memset(h, 0, sizeof *h);
    h->max = max > 0 ? max : HISTORY_DEFAULT_MAX;
}

void history_free(History *h)
{
    if (!h) return;
    for (int i = 0; i < h->n; i++) free(h->items[i]);
    free(h->items);
    h->items = NULL;
    h->n = h->cap = 0;
}

static int history_blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') return 0;
    return 1;
}

int history_add(History *h, const char *line)
{
    if (history_blank(line)) return LM_OK;
    if (h->n > 0 && strcmp(h->items[h->n - 1], line) == 0) return LM_OK;
    char *copy = strdup(line);
    if (!copy) return LM_ENOMEM;
    if (h->n == h->max) {
        free(h->items[0]);
        memmove(h->items, h->items + 1, (size_t)(h->n - 1) * sizeof *h->items);
        h->n--;
    }
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 16;
        if (cap > h->max) cap = h->max;
        char **ni = realloc(h->items, (size_t)cap * sizeof *ni);
        if (!ni) {
            free(copy);
            return LM_ENOMEM;
        }
        h->items = ni;
        h->cap = cap;
    }
    h->items[h->n++] = copy;
    return LM_OK;
}

const char *history_get(const History *h, int i)
{
    return i >= 0 && i < h->n ? h->items[i] : NULL;
}

/* Undoes the file escapes in place (\\ \n \r; any other backslash stays). */
static void history_unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (*r == '\\' && (r[1] == '\\' || r[1] == 'n' || r[1] == 'r')) {
            r++;
            *w++ = *r == 'n' ? '\n' : *r == 'r' ? '\r' : '\\';
        } else {
            *w++ = *r;
        }
    }
    *w = 0;
}

static const char *history_kind(mode_t m)
{
    return S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

static int history_refuse(History *h, const char *path, mode_t m, char *err)
{
    h->off = 1;
    return err_set(err, LM_EFORMAT, "history file %s is %s, not a regular file: command"
                   " history is off for this session (move it aside to get history back)",
                   path, history_kind(m));
}

int history_load(History *h, const char *path, char *err)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; fstat decides. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return LM_OK;
        struct stat sb;
        if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) return history_refuse(h, path, sb.st_mode, err);
        return err_set(err, LM_EIO, "cannot read history %s: %s", path, strerror(errno));
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return history_refuse(h, path, sb.st_mode, err);
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return err_set(err, LM_ENOMEM, "out of memory loading history %s", path);
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int st = LM_OK;
    while (st == LM_OK && (len = getline(&line, &cap, f)) >= 0) {
        if (len > 0 && line[len - 1] == '\n') line[--len] = 0;
        history_unescape(line);
        st = history_add(h, line);
    }
    if (st == LM_OK && ferror(f))
        st = err_set(err, LM_EIO, "error reading history %s", path);
    else if (st == LM_ENOMEM)
        err_set(err, st, "out of memory loading history %s", path);
    free(line);
    fclose(f);
    return st;
}

static int history_write_entry(FILE *f, const char *s)
{
    for (; *s; s++) {
        const char *e = *s == '\\' ? "\\\\" : *s == '\n' ? "\\n" : *s == '\r' ? "\\r" : NULL;
        if (e ? fputs(e, f) < 0 : putc(*s, f) == EOF) return -1;
    }
    return putc('\n', f) == EOF ? -1 : 0;
}

static int history_save_at(const History *h, const char *path, char *err);

int history_save(History *h, const char *path, char *err)
{
    if (h->off) return LM_OK;
    struct stat sb;
    char *target = NULL;
    if (stat(path, &sb) == 0) {
        if (!S_ISREG(sb.st_mode)) return history_refuse(h, path, sb.st_mode, err);
        target = realpath(path, NULL); /* replace the link's target, not the link */
        if (target) path = target;
    }
    int st = history_save_at(h, path, err);
    free(target);
    return st;
}

static int history_save_at(const History *h, const char *path, char *err)
{
    size_t pl = strlen(path) + 32;
    char *tmp = malloc(pl);
    if (!tmp) return err_set(err, LM_ENOMEM, "out of memory saving history");
    snprintf(tmp, pl, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        int st = err_set(err, LM_EIO, "cannot write history %s: %s", tmp, strerror(errno));
        free(tmp);
        return st;
    }
    int bad = 0;
    for (int i = 0; i < h->n && !bad; i++) bad = history_write_entry(f, h->items[i]) != 0;
    if (fflush(f) != 0 || fsync(fileno(f)) != 0) bad = 1;
    if (fclose(f) != 0) bad = 1;
    if (bad || rename(tmp, path) != 0) {
        int st = err_set(err, LM_EIO, "cannot save history %s: %s", path, strerror(errno));
        remove(tmp);
        free(tmp);
        return st;
    }
    free(tmp);
    return LM_OK;
}
