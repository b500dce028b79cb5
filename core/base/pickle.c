/* pickle.c — the restricted unpickler (see pickle.h). A stack machine over the opcodes
 * torch.save emits; values are plain PkObj nodes owned by one arena (a list of every
 * node), so freeing never recurses and a self-referencing list cannot loop. Every read
 * is bounds-checked against the buffer; the stack, the memo and the mark stack grow
 * only with the number of opcodes read, so memory stays proportional to the input.
 * Globals are given meaning only in pickle_apply.c (BINPERSID, REDUCE, BUILD). */
#include "pickle.h"

#include "err.h"
#include "private/pickle_impl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const global_names[PKG_N][2] = {
    {"collections", "OrderedDict"},  {"torch._utils", "_rebuild_tensor_v2"},
    {"torch._utils", "_rebuild_parameter"},
    {"torch", "FloatStorage"},       {"torch", "DoubleStorage"},
    {"torch", "HalfStorage"},        {"torch", "BFloat16Storage"},
    {"torch", "LongStorage"},        {"torch", "IntStorage"},
    {"torch", "ShortStorage"},       {"torch", "CharStorage"},
    {"torch", "ByteStorage"},        {"torch", "BoolStorage"},
};
static const size_t storage_sizes[PKG_N] = {0, 0, 0, 4, 8, 2, 2, 8, 4, 2, 1, 1, 1};

const char *pickle_global_name(PkGlobal g)
{
    static const char *const full[PKG_N] = {
        "collections.OrderedDict", "torch._utils._rebuild_tensor_v2",
        "torch._utils._rebuild_parameter", "torch.FloatStorage", "torch.DoubleStorage",
        "torch.HalfStorage", "torch.BFloat16Storage", "torch.LongStorage", "torch.IntStorage",
        "torch.ShortStorage", "torch.CharStorage", "torch.ByteStorage", "torch.BoolStorage"};
    return (int)g >= 0 && g < PKG_N ? full[g] : "?";
}

const char *pickle_kind_name(PkKind k)
{
    static const char *const n[] = {"None", "bool", "int", "float", "str", "tuple", "list",
                                    "dict", "global", "storage", "tensor"};
    return (int)k >= 0 && k <= PK_TENSOR ? n[k] : "?";
}

size_t pickle_storage_elem_size(PkGlobal g)
{
    return (int)g >= 0 && g < PKG_N ? storage_sizes[g] : 0;
}

void pickle_free(Pickle *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_all; i++) {
        free(p->all[i]->s);
        free(p->all[i]->items);
        free(p->all[i]);
    }
    free(p->all);
    free(p);
}

const PkObj *pickle_dict_get(const PkObj *d, const char *key)
{
    if (!d || d->kind != PK_DICT)
        return NULL;
    for (int i = d->n - 2; i >= 0; i -= 2) /* the last assignment wins, as in Python */
        if (d->items[i]->kind == PK_STR && !strcmp(d->items[i]->s, key))
            return d->items[i + 1];
    return NULL;
}

/* ---- the machine ---- */

int pickle_fail(Unpickler *u, const char *fmt, const char *what)
{
    char msg[LM_ERR_LEN];
    snprintf(msg, sizeof msg, fmt, what);
    err_set(u->err, LM_EFORMAT, "data.pkl byte %zu: %.440s", u->op_pos, msg);
    return LM_EFORMAT;
}

int pickle_oom(Unpickler *u)
{
    return err_set(u->err, LM_ENOMEM, "out of memory reading data.pkl");
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *a = realloc(*arr, c * elem);
    if (!a)
        return -1;
    *arr = a;
    *cap = c;
    return 0;
}

PkObj *pickle_new_obj(Unpickler *u, PkKind kind)
{
    Pickle *p = u->p;
    if (grow((void **)&p->all, &p->cap_all, p->n_all + 1, sizeof *p->all))
        return NULL;
    PkObj *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->kind = kind;
    p->all[p->n_all++] = o;
    return o;
}

int pickle_push(Unpickler *u, PkObj *o)
{
    if (!o || grow((void **)&u->stack, &u->stack_cap, u->sp + 1, sizeof *u->stack))
        return pickle_oom(u);
    u->stack[u->sp++] = o;
    return LM_OK;
}

int pickle_push_new(Unpickler *u, PkKind kind, PkObj **out)
{
    PkObj *o = pickle_new_obj(u, kind);
    if (out)
        *out = o;
    return pickle_push(u, o);
}

static int add_item(Unpickler *u, PkObj *c, PkObj *item)
{
    if (c->n == 1 << 30)
        return pickle_oom(u);
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 8;
        PkObj **it = realloc(c->items, (size_t)cap * sizeof *it);
        if (!it)
            return pickle_oom(u);
        c->items = it;
        c->cap = cap;
    }
    c->items[c->n++] = item;
    return LM_OK;
}

/* The stack floor for the current operation: the last mark, or 0. */
size_t pickle_floor_of(const Unpickler *u)
{
    return u->n_marks ? u->marks[u->n_marks - 1] : 0;
}

int pickle_pop(Unpickler *u, PkObj **o)
{
    *o = NULL;
    if (u->sp <= pickle_floor_of(u))
        return pickle_fail(u, "%s", "the stack is empty where a value was expected");
    *o = u->stack[--u->sp];
    return LM_OK;
}

static int pop_mark(Unpickler *u, size_t *mark)
{
    *mark = 0;
    if (!u->n_marks)
        return pickle_fail(u, "%s", "no MARK before an opcode that needs one");
    *mark = u->marks[--u->n_marks];
    return LM_OK;
}

static int need(Unpickler *u, size_t k, const unsigned char **at)
{
    *at = u->buf;
    if (u->n - u->pos < k)
        return pickle_fail(u, "%s", "truncated (the pickle ends inside an opcode's argument)");
    *at = u->buf + u->pos;
    u->pos += k;
    return LM_OK;
}

static unsigned long long le(const unsigned char *b, int k)
{
    unsigned long long v = 0;
    for (int i = k - 1; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

static int op_string(Unpickler *u, int len_bytes)
{
    const unsigned char *b;
    int rc = need(u, (size_t)len_bytes, &b);
    if (rc)
        return rc;
    unsigned long long len = le(b, len_bytes);
    if (len > u->n - u->pos)
        return pickle_fail(u, "%s", "truncated (a string runs past the end)");
    PkObj *o = pickle_new_obj(u, PK_STR);
    if (!o || !(o->s = malloc((size_t)len + 1)))
        return pickle_oom(u);
    memcpy(o->s, u->buf + u->pos, (size_t)len);
    o->s[len] = 0;
    o->len = (size_t)len;
    u->pos += (size_t)len;
    return pickle_push(u, o);
}

static int op_int(Unpickler *u, int k, int is_signed)
{
    const unsigned char *b;
    int rc = need(u, (size_t)k, &b);
    if (rc)
        return rc;
    unsigned long long v = le(b, k);
    PkObj *o;
    if ((rc = pickle_push_new(u, PK_INT, &o)))
        return rc;
    o->i = is_signed ? (long long)(int32_t)(uint32_t)v : (long long)v;
    return LM_OK;
}

static int op_long1(Unpickler *u)
{
    const unsigned char *b;
    int rc = need(u, 1, &b);
    if (rc)
        return rc;
    int k = b[0];
    if (k > 8)
        return pickle_fail(u, "%s", "an integer wider than 64 bits");
    if ((rc = need(u, (size_t)k, &b)))
        return rc;
    unsigned long long v = k ? le(b, k) : 0;
    if (k && k < 8 && (b[k - 1] & 0x80))    /* sign-extend two's complement */
        v |= ~0ULL << (8 * k);
    PkObj *o;
    if ((rc = pickle_push_new(u, PK_INT, &o)))
        return rc;
    o->i = (long long)v;
    return LM_OK;
}

static int op_float(Unpickler *u)
{
    const unsigned char *b;
    int rc = need(u, 8, &b);
    if (rc)
        return rc;
    uint64_t bits = 0;
    for (int i = 0; i < 8; i++)
        bits = bits << 8 | b[i];   /* big-endian */
    PkObj *o;
    if ((rc = pickle_push_new(u, PK_FLOAT, &o)))
        return rc;
    memcpy(&o->f, &bits, 8);
    return LM_OK;
}

static int resolve_global(Unpickler *u, const char *mod, size_t ml, const char *name,
                          size_t nl)
{
    for (int g = 0; g < PKG_N; g++)
        if (strlen(global_names[g][0]) == ml && !memcmp(global_names[g][0], mod, ml) &&
            strlen(global_names[g][1]) == nl && !memcmp(global_names[g][1], name, nl)) {
            PkObj *o;
            int rc = pickle_push_new(u, PK_GLOBAL, &o);
            if (!rc)
                o->global = (PkGlobal)g;
            return rc;
        }
    char what[200];
    snprintf(what, sizeof what, "%.*s.%.*s", (int)(ml > 80 ? 80 : ml), mod,
             (int)(nl > 80 ? 80 : nl), name);
    return pickle_fail(u, "refused the global '%s': a torch.save file of weights only uses "
                "collections.OrderedDict, torch._utils._rebuild_tensor_v2 and torch storage "
                "types, and lmlab never runs code from a file", what);
}

static int op_global(Unpickler *u)
{
    const char *s = (const char *)u->buf + u->pos;
    size_t left = u->n - u->pos;
    const char *nl1 = memchr(s, '\n', left);
    const char *nl2 = nl1 ? memchr(nl1 + 1, '\n', left - (size_t)(nl1 + 1 - s)) : NULL;
    if (!nl2)
        return pickle_fail(u, "%s", "truncated GLOBAL (module and name need two lines)");
    u->pos += (size_t)(nl2 + 1 - s);
    return resolve_global(u, s, (size_t)(nl1 - s), nl1 + 1, (size_t)(nl2 - nl1 - 1));
}

static int op_stack_global(Unpickler *u)
{
    PkObj *name, *mod;
    int rc = pickle_pop(u, &name);
    if (!rc)
        rc = pickle_pop(u, &mod);
    if (rc)
        return rc;
    if (name->kind != PK_STR || mod->kind != PK_STR)
        return pickle_fail(u, "%s", "STACK_GLOBAL needs two strings");
    return resolve_global(u, mod->s, mod->len, name->s, name->len);
}

/* ---- containers ---- */

static int op_tuple_n(Unpickler *u, int k)
{
    PkObj *t = pickle_new_obj(u, PK_TUPLE);
    if (!t)
        return pickle_oom(u);
    if (u->sp < pickle_floor_of(u) + (size_t)k)
        return pickle_fail(u, "%s", "a TUPLE opcode finds too few values on the stack");
    for (int i = k; i > 0; i--)
        if (add_item(u, t, u->stack[u->sp - (size_t)i]))
            return LM_ENOMEM;
    u->sp -= (size_t)k;
    return pickle_push(u, t);
}

static int op_tuple_mark(Unpickler *u)
{
    size_t mark;
    int rc = pop_mark(u, &mark);
    if (rc)
        return rc;
    PkObj *t = pickle_new_obj(u, PK_TUPLE);
    if (!t)
        return pickle_oom(u);
    for (size_t i = mark; i < u->sp; i++)
        if (add_item(u, t, u->stack[i]))
            return LM_ENOMEM;
    u->sp = mark;
    return pickle_push(u, t);
}

/* SETITEM(S) and APPEND(S): values from `from` to the top go into the container below. */
static int fill_container(Unpickler *u, size_t from, PkKind want, const char *opname)
{
    if (from == 0 || from > u->sp || from - 1 < pickle_floor_of(u))
        return pickle_fail(u, "%s needs a container below its values", opname);
    PkObj *c = u->stack[from - 1];
    if (c->kind != want)
        return pickle_fail(u, "%s applied to something that is not the right container", opname);
    if (want == PK_DICT && (u->sp - from) % 2)
        return pickle_fail(u, "%s", "SETITEMS with a key and no value");
    for (size_t i = from; i < u->sp; i++)
        if (add_item(u, c, u->stack[i]))
            return LM_ENOMEM;
    u->sp = from;
    return LM_OK;
}

static int op_fill_mark(Unpickler *u, PkKind want, const char *opname)
{
    size_t mark;
    int rc = pop_mark(u, &mark);
    return rc ? rc : fill_container(u, mark, want, opname);
}

static int memo_put(Unpickler *u, unsigned long long idx)
{
    if (u->sp <= pickle_floor_of(u))
        return pickle_fail(u, "%s", "a memo PUT with an empty stack");
    if (idx > u->n)   /* a valid pickle never has more memo slots than bytes */
        return pickle_fail(u, "%s", "a memo index beyond anything this pickle could hold");
    size_t old = u->memo_cap;
    if (grow((void **)&u->memo, &u->memo_cap, (size_t)idx + 1, sizeof *u->memo))
        return pickle_oom(u);
    memset(u->memo + old, 0, (u->memo_cap - old) * sizeof *u->memo);
    u->memo_len += !u->memo[idx];
    u->memo[idx] = u->stack[u->sp - 1];
    return LM_OK;
}

static int memo_get(Unpickler *u, unsigned long long idx)
{
    if (idx >= u->memo_cap || !u->memo[idx])
        return pickle_fail(u, "%s", "a memo GET of a slot never PUT");
    return pickle_push(u, u->memo[idx]);
}

static int step(Unpickler *u, int op)
{
    const unsigned char *b;
    int rc;
    switch (op) {
    case 0x80: return need(u, 1, &b);                          /* PROTO */
    case 0x95: return need(u, 8, &b);                          /* FRAME (protocol 4) */
    case '(':
        if (grow((void **)&u->marks, &u->marks_cap, u->n_marks + 1, sizeof *u->marks))
            return pickle_oom(u);
        u->marks[u->n_marks++] = u->sp;
        return LM_OK;
    case '}': return pickle_push_new(u, PK_DICT, NULL);
    case ']': return pickle_push_new(u, PK_LIST, NULL);
    case ')': return pickle_push_new(u, PK_TUPLE, NULL);
    case 'N': return pickle_push_new(u, PK_NONE, NULL);
    case 0x88: case 0x89: {                                    /* NEWTRUE, NEWFALSE */
        PkObj *o;
        if (!(rc = pickle_push_new(u, PK_BOOL, &o)))
            o->i = op == 0x88;
        return rc;
    }
    case 't': return op_tuple_mark(u);
    case 0x85: return op_tuple_n(u, 1);
    case 0x86: return op_tuple_n(u, 2);
    case 0x87: return op_tuple_n(u, 3);
    case 'q': return (rc = need(u, 1, &b)) ? rc : memo_put(u, b[0]);
    case 'r': return (rc = need(u, 4, &b)) ? rc : memo_put(u, le(b, 4));
    case 0x94: return memo_put(u, u->memo_len);                /* MEMOIZE: len(memo) */
    case 'h': return (rc = need(u, 1, &b)) ? rc : memo_get(u, b[0]);
    case 'j': return (rc = need(u, 4, &b)) ? rc : memo_get(u, le(b, 4));
    case 'X': return op_string(u, 4);
    case 0x8c: return op_string(u, 1);
    case 'J': return op_int(u, 4, 1);
    case 'K': return op_int(u, 1, 0);
    case 'M': return op_int(u, 2, 0);
    case 0x8a: return op_long1(u);
    case 'G': return op_float(u);
    case 'c': return op_global(u);
    case 0x93: return op_stack_global(u);
    case 'Q': return pickle_op_persid(u);
    case 'R': return pickle_op_reduce(u);
    case 'b': return pickle_op_build(u);
    case 's': return u->sp < 2 ? pickle_fail(u, "%s", "SETITEM with too few values")
                               : fill_container(u, u->sp - 2, PK_DICT, "SETITEM");
    case 'u': return op_fill_mark(u, PK_DICT, "SETITEMS");
    case 'a': return u->sp < 1 ? pickle_fail(u, "%s", "APPEND with nothing to append")
                               : fill_container(u, u->sp - 1, PK_LIST, "APPEND");
    case 'e': return op_fill_mark(u, PK_LIST, "APPENDS");
    default: {
        char what[16];
        snprintf(what, sizeof what, "0x%02x", op);
        return pickle_fail(u, "opcode %s is not one torch.save writes for weights; lmlab reads only "
                    "tensors, dicts, lists, tuples, numbers and strings and never runs code "
                    "from a file", what);
    }
    }
}

int pickle_load(const unsigned char *buf, size_t n, Pickle **out, const PkObj **root,
                char *err)
{
    *out = NULL;
    *root = NULL;
    Unpickler u = {.buf = buf, .n = n, .err = err};
    if (!(u.p = calloc(1, sizeof *u.p)))
        return err_set(err, LM_ENOMEM, "out of memory reading data.pkl");
    int rc = LM_OK, stopped = 0;
    while (!rc && !stopped) {
        u.op_pos = u.pos;
        if (u.pos >= n) {
            rc = err_set(err, LM_EFORMAT, "data.pkl: truncated (%zu bytes, no STOP opcode)", n);
            break;
        }
        int op = buf[u.pos++];
        if (op == '.') {
            if (u.sp != 1 || u.n_marks)
                rc = pickle_fail(&u, "%s", "STOP with a stack that does not hold exactly one value");
            stopped = 1;
        } else {
            rc = step(&u, op);
        }
    }
    if (!rc)
        *root = u.stack[0];
    free(u.stack);
    free(u.marks);
    free(u.memo);
    if (rc) {
        pickle_free(u.p);
        *root = NULL;
        return rc;
    }
    *out = u.p;
    return LM_OK;
}
