/* The directories a corpus walk has entered, by identity (device, inode): a directory
 * reached again through a symlink (a loop, or two links to one folder) is seen once. */
#ifndef LMLAB_DIRSET_H
#define LMLAB_DIRSET_H

#include <stddef.h>
#include <sys/stat.h>

typedef struct {
    struct DirId { dev_t dev; ino_t ino; int used; } *id;   /* open addressing */
    size_t n, cap;                                          /* cap: a power of two */
} DirSet;

/* 1 when st's directory was added before, 0 when added now, -1 out of memory. */
int dirset_add(DirSet *s, const struct stat *st);
void dirset_free(DirSet *s);

#endif
