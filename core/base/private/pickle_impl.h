/* pickle_impl.h — the restricted unpickler's machine state, shared by pickle.c (the
 * opcode loop) and pickle_apply.c (persistent ids, REDUCE, BUILD). Private to core/base. */
#ifndef LM_PICKLE_IMPL_H
#define LM_PICKLE_IMPL_H

#include "pickle.h"

#include <stddef.h>

struct Pickle {
    PkObj **all;        /* every node allocated, for pickle_free */
    size_t n_all, cap_all;
};

typedef struct {
    Pickle *p;
    const unsigned char *buf;
    size_t n, pos, op_pos;
    PkObj **stack;
    size_t sp, stack_cap;
    size_t *marks;
    size_t n_marks, marks_cap;
    PkObj **memo;
    size_t memo_cap, memo_len;   /* slots allocated; distinct slots filled (MEMOIZE) */
    char *err;
} Unpickler;

/* An LM_EFORMAT message "data.pkl byte N: " + fmt (with %s = what); returns LM_EFORMAT. */
int pickle_fail(Unpickler *u, const char *fmt, const char *what);
/* LM_ENOMEM with a message. */
int pickle_oom(Unpickler *u);
/* A new node owned by the load's arena, or NULL. */
PkObj *pickle_new_obj(Unpickler *u, PkKind kind);
/* Pushes o (LM_ENOMEM when o is NULL or the stack cannot grow). */
int pickle_push(Unpickler *u, PkObj *o);
/* Pushes a new node of kind, also stored in *out when out is not NULL. */
int pickle_push_new(Unpickler *u, PkKind kind, PkObj **out);
/* Pops the top value above the current mark; LM_EFORMAT when there is none. */
int pickle_pop(Unpickler *u, PkObj **o);
/* The stack index of the last mark, or 0. */
size_t pickle_floor_of(const Unpickler *u);

int pickle_op_persid(Unpickler *u);
int pickle_op_reduce(Unpickler *u);
int pickle_op_build(Unpickler *u);

#endif
