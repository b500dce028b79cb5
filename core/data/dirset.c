/* A hash set of directory identities for the corpus walk (private/dirset.h). */
#include "private/dirset.h"

#include <stdlib.h>

static size_t slot(const struct DirId *id, size_t cap, dev_t dev, ino_t ino)
{
    unsigned long long h = ((unsigned long long)ino ^ (unsigned long long)dev << 40) *
                           0xff51afd7ed558ccdULL;
    size_t i = (size_t)(h >> 17) & (cap - 1);
    while (id[i].used && (id[i].dev != dev || id[i].ino != ino)) i = (i + 1) & (cap - 1);
    return i;
}

static int grow(DirSet *s)
{
    size_t cap = s->cap ? 2 * s->cap : 64;
    struct DirId *id = calloc(cap, sizeof *id);
    if (!id) return -1;
    for (size_t i = 0; i < s->cap; i++)
        if (s->id[i].used) id[slot(id, cap, s->id[i].dev, s->id[i].ino)] = s->id[i];
    free(s->id);
    s->id = id;
    s->cap = cap;
    return 0;
}

int dirset_add(DirSet *s, const struct stat *st)
{
    if (2 * (s->n + 1) > s->cap && grow(s)) return -1;
    size_t i = slot(s->id, s->cap, st->st_dev, st->st_ino);
    if (s->id[i].used) return 1;
    s->id[i] = (struct DirId){ st->st_dev, st->st_ino, 1 };
    s->n++;
    return 0;
}

void dirset_free(DirSet *s)
{
    free(s->id);
    s->id = NULL;
    s->n = s->cap = 0;
}
