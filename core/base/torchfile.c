/* torchfile.c — torch.save zip files as a SafeTensors (see torchfile.h). libzip does the
 * zip (stored or deflated entries, CRC checks); this file finds data.pkl, unpickles it
 * with the restricted reader, picks the state_dict and describes each tensor: its
 * storage's zip entry and the strided view into it, every size checked with
 * overflow-checked arithmetic (checked.h) against what the zip entry holds. No storage
 * is decompressed here: a tensor's elements are gathered only when a caller reads it
 * (safetensors_read_f32 after checking the count it wants), and only the part of its
 * storage the view reaches is kept in memory. Not here: the pickle opcodes (pickle.c)
 * or which model the tensors make (names_reference.c). */
#include "torchfile.h"

#include "checked.h"
#include "err.h"
#include "pickle.h"
#include "regfile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#define TORCHFILE_MAX_PICKLE (256u << 20) /* a state_dict's data.pkl is kilobytes */
#define TORCHFILE_MAX_RATIO 1100          /* deflate never packs more than ~1032:1 */
#define TORCHFILE_SLACK (1u << 18)        /* elements a view may skip beyond 4 x numel */
#define TORCHFILE_CHUNK (64u << 10)

/* torch.save's legacy (pre-1.6) files start with a pickled magic number (LONG1 of
 * 0x1950a86a20f9469cfc6c, torch/serialization.py MAGIC_NUMBER); the oldest are tars. */
static const unsigned char LEGACY_MAGIC[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c,
                                             0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};

int torchfile_is_zip(const unsigned char *buf, size_t n)
{
    return n >= 4 && !memcmp(buf, "PK\003\004", 4);
}

int torchfile_sniff(const unsigned char *buf, size_t n)
{
    if (torchfile_is_zip(buf, n))
        return TORCHFILE_ZIP;
    if ((n >= sizeof LEGACY_MAGIC && !memcmp(buf, LEGACY_MAGIC, sizeof LEGACY_MAGIC)) ||
        (n >= 262 && !memcmp(buf + 257, "ustar", 5)))
        return TORCHFILE_LEGACY;
    if (n >= 2 && buf[0] == 0x80 && buf[1] >= 2 && buf[1] <= 5)
        return TORCHFILE_PICKLE;
    return TORCHFILE_OTHER;
}

/* Where tensor i's elements are: its storage's zip entry and the view into it. */
typedef struct {
    zip_uint64_t entry;
    size_t es;              /* bytes per element */
    size_t offset, window;  /* first element addressed; elements from it to the last + 1 */
    int ndim;
    long long shape[PK_MAX_DIM], stride[PK_MAX_DIM];
    char name[ST_NAME_LEN];
} TfView;

typedef struct {
    unsigned char *file;       /* the whole file, owned: libzip reads from it */
    zip_t *za;
    TfView *v;
    unsigned char *verified;   /* per zip entry: read to its end once, CRC checked */
    char label[256];
} TorchLazy;

typedef struct {
    TorchLazy *lz;
    const char *label;
    char prefix[256];   /* "ARCHIVE/" before data.pkl */
    char *err;
} TorchZip;

static void lazy_release(void *ctx)
{
    TorchLazy *lz = ctx;
    if (!lz)
        return;
    if (lz->za)
        zip_discard(lz->za);
    free(lz->v);
    free(lz->verified);
    free(lz->file);
    free(lz);
}

/* Reads data.pkl (entry idx) whole: at most cap bytes, and no more than its compressed
 * size allows. */
static int read_pickle(TorchZip *z, zip_int64_t idx, size_t cap, unsigned char **out,
                       size_t *size)
{
    zip_stat_t sb;
    zip_stat_init(&sb);
    if (zip_stat_index(z->lz->za, (zip_uint64_t)idx, 0, &sb) || !(sb.valid & ZIP_STAT_SIZE))
        return err_set(z->err, LM_EFORMAT, "%s: cannot read the zip entry %lld", z->label,
                       (long long)idx);
    if (sb.size > cap ||
        ((sb.valid & ZIP_STAT_COMP_SIZE) && sb.size / TORCHFILE_MAX_RATIO > sb.comp_size))
        return err_set(z->err, LM_EFORMAT, "%s: %.200s claims %llu bytes, more than lmlab "
                       "reads (%zu) or than its compressed size allows", z->label,
                       sb.name ? sb.name : "?", (unsigned long long)sb.size, cap);
    unsigned char *b = malloc(sb.size ? (size_t)sb.size : 1);
    if (!b)
        return err_set(z->err, LM_ENOMEM, "%s: out of memory (%llu bytes)", z->label,
                       (unsigned long long)sb.size);
    zip_file_t *f = zip_fopen_index(z->lz->za, (zip_uint64_t)idx, 0);
    zip_int64_t got = f ? zip_fread(f, b, sb.size) : -1;
    int bad = !f || got < 0 || (zip_uint64_t)got != sb.size;
    if (f && zip_fclose(f))   /* a CRC mismatch shows up here */
        bad = 1;
    if (bad) {
        free(b);
        return err_set(z->err, LM_EFORMAT, "%s: the zip entry %.200s is damaged (%s)",
                       z->label, sb.name ? sb.name : "?", zip_strerror(z->lz->za));
    }
    *out = b;
    *size = (size_t)sb.size;
    return LM_OK;
}

/* Finds ARCHIVE/data.pkl (or a top-level data.pkl) and sets z->prefix. */
static zip_int64_t find_pickle(TorchZip *z)
{
    zip_int64_t n = zip_get_num_entries(z->lz->za, 0);
    for (zip_int64_t i = 0; i < n; i++) {
        const char *name = zip_get_name(z->lz->za, (zip_uint64_t)i, 0);
        size_t len = name ? strlen(name) : 0;
        if (len < 8 || strcmp(name + len - 8, "data.pkl"))
            continue;
        size_t pre = len - 8;
        if (pre >= sizeof z->prefix || (pre && name[pre - 1] != '/') ||
            memchr(name, '/', pre ? pre - 1 : 0))
            continue;
        memcpy(z->prefix, name, pre);
        z->prefix[pre] = 0;
        return i;
    }
    return -1;
}

/* The state_dict inside the saved object, and where it was found. */
static const PkObj *find_state_dict(const PkObj *root, const char **where)
{
    static const char *const keys[] = {"model_state_dict", "state_dict", "model"};
    if (root->kind != PK_DICT)
        return NULL;
    for (int i = 0; i < 3; i++) {
        const PkObj *v = pickle_dict_get(root, keys[i]);
        if (v && v->kind == PK_DICT) {
            *where = keys[i];
            return v;
        }
    }
    for (int i = 1; i < root->n; i += 2)
        if (root->items[i]->kind == PK_TENSOR) {
            *where = "";
            return root;
        }
    return NULL;
}

static int no_state_dict(TorchZip *z, const PkObj *root)
{
    if (root->kind != PK_DICT)
        return err_set(z->err, LM_EFORMAT, "%s: the file holds a %s, not a state_dict; save "
                       "model.state_dict() (or a dict with it under 'model_state_dict')",
                       z->label, pickle_kind_name(root->kind));
    char keys[256] = "";
    size_t o = 0;
    for (int i = 0; i < root->n && o < sizeof keys - 40; i += 2)
        o += (size_t)snprintf(keys + o, sizeof keys - o, "%s'%.30s'", i ? ", " : "",
                              root->items[i]->kind == PK_STR ? root->items[i]->s : "?");
    return err_set(z->err, LM_EFORMAT, "%s: no state_dict inside: its top-level keys are %s; "
                   "lmlab reads a bare state_dict or a dict holding one under "
                   "'model_state_dict', 'state_dict' or 'model'", z->label,
                   root->n ? keys : "(none)");
}

static int st_dtype(PkGlobal g)
{
    switch (g) {
    case PKG_STORAGE_FLOAT: return ST_F32;
    case PKG_STORAGE_DOUBLE: return ST_F64;
    case PKG_STORAGE_HALF: return ST_F16;
    case PKG_STORAGE_BFLOAT16: return ST_BF16;
    case PKG_STORAGE_LONG: return ST_I64;
    case PKG_STORAGE_INT: return ST_I32;
    case PKG_STORAGE_BYTE: return ST_U8;
    default: return -1;
    }
}

/* The zip entry of tensor `name`'s storage, checked to hold exactly the bytes the
 * storage declares (overflow-checked) and no more than its compressed size allows. */
static int locate_storage(TorchZip *z, const char *name, const PkObj *s, size_t es,
                          zip_uint64_t *entry, size_t *bytes)
{
    char path[600];
    snprintf(path, sizeof path, "%sdata/%.300s", z->prefix, s->s);
    zip_int64_t idx = zip_name_locate(z->lz->za, path, 0);
    if (idx < 0)
        return err_set(z->err, LM_EFORMAT, "%s: tensor '%.160s' needs the storage %.300s, "
                       "which the zip does not hold", z->label, name, path);
    zip_stat_t sb;
    zip_stat_init(&sb);
    if (zip_stat_index(z->lz->za, (zip_uint64_t)idx, 0, &sb) || !(sb.valid & ZIP_STAT_SIZE))
        return err_set(z->err, LM_EFORMAT, "%s: cannot read the zip entry %.300s", z->label,
                       path);
    if (s->numel < 0 || checked_mul((size_t)s->numel, es, bytes))
        return err_set(z->err, LM_EFORMAT, "%s: tensor '%.160s': its storage declares %lld "
                       "elements, more than any file holds", z->label, name, s->numel);
    if (sb.size != (zip_uint64_t)*bytes)
        return err_set(z->err, LM_EFORMAT, "%s: %.300s holds %llu bytes where its tensor "
                       "needs %zu", z->label, path, (unsigned long long)sb.size, *bytes);
    if ((sb.valid & ZIP_STAT_COMP_SIZE) && sb.size / TORCHFILE_MAX_RATIO > sb.comp_size)
        return err_set(z->err, LM_EFORMAT, "%s: %.300s claims %llu bytes, more than its "
                       "compressed size (%llu) allows", z->label, path,
                       (unsigned long long)sb.size, (unsigned long long)sb.comp_size);
    *entry = (zip_uint64_t)idx;
    return LM_OK;
}

/* Describes tensor `name` (t) into *out and *v: nothing is read yet. */
static int describe(TorchZip *z, const char *name, const PkObj *t, StTensor *out, TfView *v)
{
    const PkObj *s = t->storage;
    size_t es = pickle_storage_elem_size(s->global), bytes = 0, numel, end;
    if (strlen(name) >= ST_NAME_LEN)
        return err_set(z->err, LM_EFORMAT, "%s: tensor name '%.60s...' is longer than %d "
                       "bytes", z->label, name, ST_NAME_LEN - 1);
    int rc = locate_storage(z, name, s, es, &v->entry, &bytes);
    if (rc)
        return rc;
    size_t end_bytes = 0;
    if (checked_view_extent(t->ndim, t->shape, t->stride, t->offset, &numel, &end) ||
        checked_mul(end, es, &end_bytes) || end_bytes > bytes)
        return err_set(z->err, LM_EFORMAT, "%s: tensor '%.160s' reaches past the end of its "
                       "storage (or its size overflows)", z->label, name);
    v->es = es;
    v->offset = numel ? (size_t)t->offset : 0;
    v->window = numel ? end - v->offset : 0;
    if (v->window / 4 > numel + TORCHFILE_SLACK)
        return err_set(z->err, LM_EFORMAT, "%s: tensor '%.160s' is a sparse view: its %zu "
                       "values are spread over %zu elements of its storage; save it with "
                       "t.contiguous()", z->label, name, numel, v->window);
    v->ndim = t->ndim;
    snprintf(v->name, sizeof v->name, "%s", name);
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name);
    out->dtype = st_dtype(s->global);
    out->ndim = t->ndim;
    out->numel = numel;
    for (int k = 0; k < t->ndim; k++) {
        out->shape[k] = (long)t->shape[k];
        v->shape[k] = t->shape[k];
        v->stride[k] = t->stride[k];
    }
    return LM_OK;
}

/* Copies view v's elements, in row-major order, out of win (window elements of its
 * storage, starting at the view's first) into dst (numel elements). Refuses, touching
 * nothing, a view that would reach outside win. */
static int gather(const TfView *v, const unsigned char *win, size_t window,
                  unsigned char *dst, size_t numel)
{
    size_t n, end;
    if (checked_view_extent(v->ndim, v->shape, v->stride, 0, &n, &end) || n != numel ||
        end > window)
        return -1;
    long long idx[PK_MAX_DIM] = {0};
    size_t es = v->es;
    for (size_t e = 0; e < numel; e++) {
        size_t at = 0;
        for (int k = 0; k < v->ndim; k++)
            at += (size_t)idx[k] * (size_t)v->stride[k];
        memcpy(dst + e * es, win + at * es, es);
        for (int k = v->ndim - 1; k >= 0 && ++idx[k] == v->shape[k]; k--)
            idx[k] = 0;
    }
    return 0;
}

static int contiguous(const TfView *v)
{
    long long run = 1;
    for (int k = v->ndim - 1; k >= 0; k--) {
        if (v->shape[k] != 1 && v->stride[k] != run)
            return 0;
        run *= v->shape[k];
    }
    return 1;
}

/* Reads n bytes of f into dst, or discards them through chunk when dst is NULL. */
static int read_span(zip_file_t *f, unsigned char *dst, size_t n, unsigned char *chunk)
{
    while (n) {
        size_t want = dst ? n : n < TORCHFILE_CHUNK ? n : TORCHFILE_CHUNK;
        zip_int64_t got = zip_fread(f, dst ? dst : chunk, want);
        if (got <= 0)
            return -1;
        n -= (size_t)got;
        if (dst)
            dst += got;
    }
    return 0;
}

/* StSource.load: tensor i's elements, from the part of its storage its view reaches.
 * A storage is read to its end (so libzip checks its CRC) the first time only. */
static int lazy_load(void *ctx, int i, unsigned char *out, char *err)
{
    TorchLazy *lz = ctx;
    const TfView *v = &lz->v[i];
    size_t numel = 1;
    for (int k = 0; k < v->ndim; k++)
        numel *= (size_t)v->shape[k];   /* checked by describe() */
    if (!numel)
        return LM_OK;
    int direct = contiguous(v) && v->window == numel;
    unsigned char *chunk = malloc(TORCHFILE_CHUNK);
    unsigned char *win = direct ? out : malloc(v->window * v->es);
    zip_file_t *f = chunk && win ? zip_fopen_index(lz->za, v->entry, 0) : NULL;
    int bad = !f || read_span(f, NULL, v->offset * v->es, chunk) ||
              read_span(f, win, v->window * v->es, chunk);
    if (!bad && !lz->verified[v->entry]) {
        while (zip_fread(f, chunk, TORCHFILE_CHUNK) > 0)
            ;
        bad = zip_fclose(f) != 0;   /* a CRC mismatch shows up here */
        f = NULL;
        lz->verified[v->entry] = !bad;
    }
    if (f)
        zip_fclose(f);
    if (!bad && !direct && gather(v, win, v->window, out, numel))
        bad = 1;
    int oom = !chunk || !win;
    free(chunk);
    if (!direct)
        free(win);
    if (bad)
        return err_set(err, oom ? LM_ENOMEM : LM_EFORMAT, "%s: tensor '%s': its storage is "
                       "%s (%s)", lz->label, v->name, oom ? "too large for the memory left"
                       : "damaged or unreadable", zip_strerror(lz->za));
    return LM_OK;
}

typedef struct {
    StTensor t;
    TfView v;
} TfPair;

static int cmp_pair(const void *a, const void *b)
{
    return strcmp(((const TfPair *)a)->t.name, ((const TfPair *)b)->t.name);
}

/* Describes the state_dict's tensors (in name order, as safetensors files list them)
 * and hands them, with z->lz, to a lazy SafeTensors. */
static int convert(TorchZip *z, const PkObj *root, SafeTensors **out)
{
    const char *where = NULL;
    const PkObj *sd = find_state_dict(root, &where);
    if (!sd)
        return no_state_dict(z, root);
    zip_int64_t n_entries = zip_get_num_entries(z->lz->za, 0);
    TfPair *p = calloc((size_t)sd->n / 2 + 1, sizeof *p);
    z->lz->verified = calloc((size_t)(n_entries > 0 ? n_entries : 0) + 1, 1);
    if (!p || !z->lz->verified) {
        free(p);
        return err_set(z->err, LM_ENOMEM, "%s: out of memory", z->label);
    }
    int n = 0, rc = LM_OK;
    for (int i = 0; !rc && i + 1 < sd->n; i += 2) {
        const PkObj *k = sd->items[i], *t = sd->items[i + 1];
        if (k->kind == PK_STR && t->kind == PK_TENSOR && st_dtype(t->storage->global) >= 0 &&
            !(rc = describe(z, k->s, t, &p[n].t, &p[n].v)))
            n++;
    }
    StTensor *ts = rc ? NULL : calloc((size_t)n + 1, sizeof *ts);
    if (!rc && !ts)
        rc = err_set(z->err, LM_ENOMEM, "%s: out of memory", z->label);
    if (!rc && !(z->lz->v = calloc((size_t)n + 1, sizeof *z->lz->v)))
        rc = err_set(z->err, LM_ENOMEM, "%s: out of memory", z->label);
    if (!rc) {
        if (n > 1)
            qsort(p, (size_t)n, sizeof *p, cmp_pair);
        for (int i = 0; i < n; i++) {
            ts[i] = p[i].t;
            z->lz->v[i] = p[i].v;
        }
        const char *meta[2] = {"torch_state_dict_key", where};
        StSource src = {.load = lazy_load, .release = lazy_release, .ctx = z->lz};
        z->lz = NULL;   /* the SafeTensors owns it now, also on failure */
        rc = safetensors_open_source(ts, n, meta, 1, &src, z->label, out, z->err);
    }
    free(ts);
    free(p);
    return rc;
}

static int not_a_zip(const unsigned char *buf, size_t n, const char *label, char *err)
{
    switch (torchfile_sniff(buf, n)) {
    case TORCHFILE_LEGACY:
        return err_set(err, LM_EFORMAT, "%s: a legacy torch.save file (before PyTorch 1.6), "
                       "which lmlab does not read: re-save it with torch.save(obj, path, "
                       "_use_new_zipfile_serialization=True) or as safetensors", label);
    case TORCHFILE_PICKLE:
        return err_set(err, LM_EFORMAT, "%s: a bare Python pickle, not a torch.save zip: "
                       "save the state_dict with torch.save (PyTorch 1.6 or later) or as "
                       "safetensors", label);
    default:
        return err_set(err, LM_EFORMAT, "%s: not a torch.save file (not a zip)", label);
    }
}

/* Opens the zip over buf (taken over: freed on every path). */
static int open_owned(unsigned char *buf, size_t n, const char *label, SafeTensors **out,
                      char *err)
{
    *out = NULL;
    if (!torchfile_is_zip(buf, n)) {
        int rc = not_a_zip(buf, n, label, err);
        free(buf);
        return rc;
    }
    TorchZip z = {.label = label, .err = err, .lz = calloc(1, sizeof *z.lz)};
    if (!z.lz) {
        free(buf);
        return err_set(err, LM_ENOMEM, "%s: out of memory", label);
    }
    z.lz->file = buf;
    snprintf(z.lz->label, sizeof z.lz->label, "%s", label);
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(buf, n, 0, &ze);
    if (src && !(z.lz->za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze)))
        zip_source_free(src);
    if (!z.lz->za) {
        int rc = err_set(err, LM_EFORMAT, "%s: not a readable zip: %s", label,
                         zip_error_strerror(&ze));
        zip_error_fini(&ze);
        lazy_release(z.lz);
        return rc;
    }
    zip_error_fini(&ze);
    zip_int64_t pk = find_pickle(&z);
    unsigned char *pkl = NULL;
    size_t pkl_n = 0;
    int rc = pk < 0 ? err_set(err, LM_EFORMAT, "%s: a zip without data.pkl: not a torch.save "
                              "file", label)
                    : read_pickle(&z, pk, TORCHFILE_MAX_PICKLE, &pkl, &pkl_n);
    Pickle *p = NULL;
    const PkObj *root = NULL;
    char perr[LM_ERR_LEN];
    if (!rc && (rc = pickle_load(pkl, pkl_n, &p, &root, perr)))
        err_set(err, rc, "%s: %s%s", label, perr, strstr(perr, "refused the global")
                ? " (torch.save(model) pickles the module's class: save model.state_dict() "
                  "instead)" : "");
    if (!rc)
        rc = convert(&z, root, out);
    pickle_free(p);
    free(pkl);
    lazy_release(z.lz);   /* NULL once the SafeTensors took it */
    return rc;
}

int torchfile_open_memory(const unsigned char *buf, size_t n, const char *label,
                          SafeTensors **out, char *err)
{
    *out = NULL;
    unsigned char *copy = malloc(n ? n : 1);
    if (!copy)
        return err_set(err, LM_ENOMEM, "%s: out of memory (%zu bytes)", label, n);
    if (n)
        memcpy(copy, buf, n);
    return open_owned(copy, n, label, out, err);
}

int torchfile_open(const char *path, SafeTensors **out, char *err)
{
    *out = NULL;
    unsigned char *buf;
    size_t n;
    int rc = regfile_read(path, SIZE_MAX - 1, &buf, &n, err);
    return rc ? rc : open_owned(buf, n, path, out, err);
}
