/* torchfile.c — torch.save zip files into safetensors (see torchfile.h). libzip does the
 * zip (stored or deflated entries, CRC checks); this file finds data.pkl, unpickles it
 * with the restricted reader, picks the state_dict, and gathers each tensor's elements
 * from its storage through its strides. Sizes are checked before anything is read. */
#include "torchfile.h"

#include "err.h"
#include "pickle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#define TORCHFILE_MAX_PICKLE (256u << 20) /* a state_dict's data.pkl is kilobytes */

int torchfile_is_zip(const unsigned char *buf, size_t n)
{
    return n >= 4 && !memcmp(buf, "PK\003\004", 4);
}

typedef struct {
    zip_t *za;
    const char *label;
    char prefix[256];   /* "ARCHIVE/" before data.pkl */
    char *err;
} TorchZip;

/* Reads entry idx whole into a malloc'd buffer; its size must be exactly want bytes
 * when want >= 0. */
static int read_entry(TorchZip *z, zip_int64_t idx, long long want, size_t cap,
                      unsigned char **out, size_t *size)
{
    zip_stat_t sb;
    zip_stat_init(&sb);
    if (zip_stat_index(z->za, (zip_uint64_t)idx, 0, &sb) || !(sb.valid & ZIP_STAT_SIZE))
        return err_set(z->err, LM_EFORMAT, "%s: cannot read the zip entry %lld", z->label,
                       (long long)idx);
    if (want >= 0 && sb.size != (zip_uint64_t)want)
        return err_set(z->err, LM_EFORMAT, "%s: %.200s holds %llu bytes where its tensor "
                       "needs %lld", z->label, sb.name ? sb.name : "?",
                       (unsigned long long)sb.size, want);
    if (sb.size > cap || ((sb.valid & ZIP_STAT_COMP_SIZE) && sb.size / 1100 > sb.comp_size))
        return err_set(z->err, LM_EFORMAT, "%s: %.200s claims %llu bytes, more than lmlab "
                       "reads (%zu) or than its compressed size allows", z->label,
                       sb.name ? sb.name : "?", (unsigned long long)sb.size, cap);
    unsigned char *b = malloc(sb.size ? (size_t)sb.size : 1);
    if (!b)
        return err_set(z->err, LM_ENOMEM, "%s: out of memory (%llu bytes)", z->label,
                       (unsigned long long)sb.size);
    zip_file_t *f = zip_fopen_index(z->za, (zip_uint64_t)idx, 0);
    zip_int64_t got = f ? zip_fread(f, b, sb.size) : -1;
    int bad = !f || got < 0 || (zip_uint64_t)got != sb.size;
    if (f && zip_fclose(f))   /* a CRC mismatch shows up here */
        bad = 1;
    if (bad) {
        free(b);
        return err_set(z->err, LM_EFORMAT, "%s: the zip entry %.200s is damaged (%s)",
                       z->label, sb.name ? sb.name : "?", zip_strerror(z->za));
    }
    *out = b;
    *size = (size_t)sb.size;
    return LM_OK;
}

/* Finds ARCHIVE/data.pkl (or a top-level data.pkl) and sets z->prefix. */
static zip_int64_t find_pickle(TorchZip *z)
{
    zip_int64_t n = zip_get_num_entries(z->za, 0);
    for (zip_int64_t i = 0; i < n; i++) {
        const char *name = zip_get_name(z->za, (zip_uint64_t)i, 0);
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

/* Copies tensor t's elements, in row-major order, out of its storage bytes. */
static void gather(const PkObj *t, const unsigned char *src, size_t es, unsigned char *dst)
{
    long long idx[PK_MAX_DIM] = {0}, numel = 1;
    int contiguous = 1;
    for (int k = t->ndim - 1; k >= 0; k--) {
        contiguous = contiguous && (t->shape[k] == 1 || t->stride[k] == numel);
        numel *= t->shape[k];
    }
    if (numel == 0)
        return;
    if (contiguous) {   /* the usual case: one copy */
        memcpy(dst, src + (size_t)t->offset * es, (size_t)numel * es);
        return;
    }
    for (long long e = 0; e < numel; e++) {
        long long at = t->offset;
        for (int k = 0; k < t->ndim; k++)
            at += idx[k] * t->stride[k];
        memcpy(dst + (size_t)e * es, src + (size_t)at * es, es);
        for (int k = t->ndim - 1; k >= 0 && ++idx[k] == t->shape[k]; k--)
            idx[k] = 0;
    }
}

/* Adds tensor `name` to w; its contiguous bytes go into *keep (freed by the caller
 * after the writer has copied them). */
static int add_tensor(TorchZip *z, SafeTensorsWriter *w, const char *name, const PkObj *t,
                      unsigned char **keep)
{
    const PkObj *s = t->storage;
    int dtype = st_dtype(s->global);
    if (dtype < 0)
        return LM_OK;
    size_t es = pickle_storage_elem_size(s->global);
    char entry[600];
    snprintf(entry, sizeof entry, "%sdata/%.300s", z->prefix, s->s);
    zip_int64_t idx = zip_name_locate(z->za, entry, 0);
    if (idx < 0)
        return err_set(z->err, LM_EFORMAT, "%s: tensor '%.160s' needs the storage %.300s, "
                       "which the zip does not hold", z->label, name, entry);
    unsigned char *raw;
    size_t size;
    int rc = read_entry(z, idx, s->numel * (long long)es, (size_t)1 << 34, &raw, &size);
    if (rc)
        return rc;
    long numel = 1, shape[ST_MAX_DIM];
    for (int k = 0; k < t->ndim; k++)
        numel *= (long)(shape[k] = (long)t->shape[k]);
    unsigned char *out = malloc(numel ? (size_t)numel * es : 1);
    if (!out) {
        free(raw);
        return err_set(z->err, LM_ENOMEM, "%s: out of memory", z->label);
    }
    gather(t, raw, es, out);
    free(raw);
    *keep = out;
    rc = safetensors_writer_add(w, name, dtype, t->ndim, shape, out);
    if (rc)
        return err_set(z->err, LM_EFORMAT, "%s: tensor name '%.160s' is a duplicate or too "
                       "long (%d bytes at most)", z->label, name, ST_NAME_LEN - 1);
    return LM_OK;
}

static int convert(TorchZip *z, const PkObj *root, SafeTensors **out)
{
    const char *where = NULL;
    const PkObj *sd = find_state_dict(root, &where);
    if (!sd)
        return no_state_dict(z, root);
    SafeTensorsWriter *w = safetensors_writer_create();
    unsigned char **keep = calloc((size_t)sd->n / 2 + 1, sizeof *keep);
    int rc = w && keep ? LM_OK : err_set(z->err, LM_ENOMEM, "%s: out of memory", z->label);
    for (int i = 0; !rc && i + 1 < sd->n; i += 2)
        if (sd->items[i]->kind == PK_STR && sd->items[i + 1]->kind == PK_TENSOR)
            rc = add_tensor(z, w, sd->items[i]->s, sd->items[i + 1], &keep[i / 2]);
    if (!rc && safetensors_writer_meta(w, "torch_state_dict_key", where))
        rc = err_set(z->err, LM_ENOMEM, "%s: out of memory", z->label);
    unsigned char *buf = NULL;
    size_t size = 0;
    if (!rc)
        rc = safetensors_writer_to_memory(w, &buf, &size, z->err);
    for (int i = 0; keep && i < sd->n / 2; i++)
        free(keep[i]);
    free(keep);
    safetensors_writer_destroy(w);
    if (!rc)
        rc = safetensors_open_memory(buf, size, z->label, out, z->err);
    return rc;
}

int torchfile_open_memory(const unsigned char *buf, size_t n, const char *label,
                          SafeTensors **out, char *err)
{
    *out = NULL;
    if (!torchfile_is_zip(buf, n))
        return err_set(err, LM_EFORMAT, "%s: not a torch.save file (not a zip)", label);
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(buf, n, 0, &ze);
    TorchZip z = {.label = label, .err = err};
    if (src && !(z.za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze)))
        zip_source_free(src);
    if (!z.za) {
        int rc = err_set(err, LM_EFORMAT, "%s: not a readable zip: %s", label,
                         zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return rc;
    }
    zip_error_fini(&ze);
    zip_int64_t pk = find_pickle(&z);
    unsigned char *pkl = NULL;
    size_t pkl_n = 0;
    int rc = pk < 0 ? err_set(err, LM_EFORMAT, "%s: a zip without data.pkl: not a torch.save "
                              "file", label)
                    : read_entry(&z, pk, -1, TORCHFILE_MAX_PICKLE, &pkl, &pkl_n);
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
    zip_discard(z.za);
    return rc;
}

int torchfile_open(const char *path, SafeTensors **out, char *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);   /* a FIFO must not block */
    if (fd < 0)
        return err_set(err, LM_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return err_set(err, LM_EIO, "%s: not a regular file", path);
    }
    size_t n = (size_t)sb.st_size, got = 0;
    unsigned char *buf = malloc(n ? n : 1);
    if (!buf) {
        close(fd);
        return err_set(err, LM_ENOMEM, "%s: cannot allocate %zu bytes", path, n);
    }
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    int rc = got == n ? torchfile_open_memory(buf, n, path, out, err)
                      : err_set(err, LM_EIO, "%s: read failed (%zu of %zu bytes)", path, got, n);
    free(buf);
    return rc;
}
