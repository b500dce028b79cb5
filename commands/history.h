/* history.h — the command history: an in-memory list (oldest first) capped at a maximum,
 * skipping empty lines and consecutive duplicates, loaded from and saved to a file with
 * one entry a line. In the file a backslash is written "\\", a newline "\n", a carriage
 * return "\r", so any entry survives a round trip. Saving writes a temporary file in the
 * same directory and renames it over the old one, so a crash never leaves half a file.
 * Not shared between processes: the last one to save wins. */
#ifndef LM_HISTORY_H
#define LM_HISTORY_H

#define HISTORY_DEFAULT_MAX 1000

typedef struct {
    char **items;  /* (n) malloc'd entries, oldest first */
    int n, cap;
    int max;       /* entries kept; older ones are dropped */
    int off;       /* the history file is not a regular file: never read or written */
} History;

/* Empty history keeping at most max entries (max <= 0: HISTORY_DEFAULT_MAX).
 * Caller-owned struct: release with history_free. */
void history_init(History *h, int max);

/* Frees every entry; h may be reused after history_init. NULL is a no-op. */
void history_free(History *h);

/* Appends a copy of line unless it is empty (or only whitespace) or equal to the newest
 * entry; drops the oldest entry beyond max. LM_OK or LM_ENOMEM. */
int history_add(History *h, const char *line);

/* Entry i (0 = oldest, n-1 = newest), or NULL when out of range. Owned by h. */
const char *history_get(const History *h, int i);

/* Appends the entries of a history file (read as by history_add). A missing file is
 * LM_OK with nothing added. A path that is not a regular file (a FIFO, a device, a
 * directory; a symbolic link counts as its target) is never opened for reading in a way
 * that could block: LM_EFORMAT with a message, and h->off is set so history_save leaves
 * it alone. Other failures LM_EIO / LM_ENOMEM with a message. */
int history_load(History *h, const char *path, char *err);

/* Writes all entries to path via path.tmp.<pid> and rename() (at the resolved target
 * when path is a symbolic link). Does nothing (LM_OK) when h->off; refuses (LM_EFORMAT,
 * and sets h->off) when path exists and is not a regular file. LM_OK or LM_EIO. */
int history_save(History *h, const char *path, char *err);

#endif
