/* outfile.h — writing a file the user named (export file=, save PATH, checkpoints)
 * without replacing what the path is. What gets written depends on what the path names:
 *   - nothing yet, or a regular file: a temporary file next to it, renamed over it at
 *     commit (readers see the old or the new content, never half); a symbolic link is
 *     followed, so the link stays a link and its target gets the new content;
 *   - "-": standard output, as a stream;
 *   - a FIFO or a character device (/dev/null, /dev/full, a terminal): written in place
 *     as a stream, never replaced by a regular file; a FIFO's reader gets
 *     OUTFILE_FIFO_WAIT_MS to open it before the FIFO is refused as having none;
 *   - anything else (a directory, a socket, a block device, a dangling link): refused
 *     with a message saying what the path is.
 * Not a general file API: one writer, one file, written front to back. */
#ifndef LM_OUTFILE_H
#define LM_OUTFILE_H

#include <stddef.h>

#define OUTFILE_FIFO_WAIT_MS 3000   /* how long a FIFO's reader has to open it */

typedef struct {
    int fd;          /* write here (front to back) */
    int atomic;      /* 1: fd is a temporary file renamed over `target` at commit */
    int is_stdout;   /* 1: fd is a duplicate of standard output */
    char target[4096];  /* the path that receives the content (a link resolved) */
    char tmp[4160];     /* the temporary file while atomic */
} OutFile;

/* Opens path for writing as described above. LM_OK with o ready; LM_EARG for a path
 * that cannot be written as a file (what it is is named), LM_EIO / LM_ENOSPC with the
 * system's reason. On failure nothing is left behind. */
int outfile_open(OutFile *o, const char *path, char *err);

/* Writes n bytes. 0, or the errno of the failure (ENOSPC for a full disk). */
int outfile_write(OutFile *o, const void *p, size_t n);

/* Finishes: flushes to disk, closes and, when atomic, renames over the target and syncs
 * its directory. LM_OK, or LM_ENOSPC / LM_EIO naming `shown` (the name the user gave);
 * on failure the temporary file is removed and the old content is untouched. */
int outfile_commit(OutFile *o, const char *shown, char *err);

/* Gives up: closes and removes the temporary file. The target is untouched. */
void outfile_abort(OutFile *o);

#endif
