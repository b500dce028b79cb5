/* test_pickle.c — the restricted unpickler (pickle.c) and the torch.save zip reader
 * (torchfile.c) on hand-made files: a state_dict with a non-contiguous tensor, stored and
 * deflated zip entries, a dict holding the state_dict under model_state_dict, and the
 * refusals (a foreign global such as os.system, an opcode torch.save never writes,
 * every truncation of a valid pickle, a tensor past its storage, a missing or mis-sized
 * storage, no data.pkl, not a zip, no state_dict inside). Also the fixtures' own
 * data.pkl (written by torch.save) parsed into the expected tree. */
#include "check.h"
#include "err.h"
#include "pickle.h"
#include "safetensors.h"
#include "torchfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zip.h>

typedef struct {
    unsigned char b[8192];
    size_t n;
} Buf;

static void put(Buf *p, const void *d, size_t n)
{
    memcpy(p->b + p->n, d, n);
    p->n += n;
}

static void op(Buf *p, int c)
{
    p->b[p->n++] = (unsigned char)c;
}

static void str(Buf *p, const char *s)
{
    unsigned n = (unsigned)strlen(s);
    op(p, 'X');
    for (int i = 0; i < 4; i++)
        op(p, (int)(n >> (8 * i)) & 0xff);
    put(p, s, n);
}

static void glob(Buf *p, const char *mod, const char *name)
{
    op(p, 'c');
    put(p, mod, strlen(mod));
    op(p, '\n');
    put(p, name, strlen(name));
    op(p, '\n');
}

static void int1(Buf *p, int v)
{
    op(p, 'K');
    op(p, v);
}

/* A torch.save tensor: FloatStorage `key` of numel floats, viewed at offset with
 * shape/stride (2-D). */
static void tensor(Buf *p, const char *key, int numel, int offset, const int *shape,
                   const int *stride)
{
    glob(p, "torch._utils", "_rebuild_tensor_v2");
    op(p, '(');
    op(p, '(');
    str(p, "storage");
    glob(p, "torch", "FloatStorage");
    str(p, key);
    str(p, "cpu");
    int1(p, numel);
    op(p, 't');
    op(p, 'Q');
    int1(p, offset);
    int1(p, shape[0]); int1(p, shape[1]); op(p, 0x86);
    int1(p, stride[0]); int1(p, stride[1]); op(p, 0x86);
    op(p, 0x89);
    glob(p, "collections", "OrderedDict");
    op(p, ')');
    op(p, 'R');
    op(p, 't');
    op(p, 'R');
}

/* OrderedDict {"w": (2,3) view with strides (1,2) of storage "0", "b": (1,2) of "1"};
 * wrapped in {"epoch": 3, "model_state_dict": ...} when wrap. */
static void state_dict(Buf *p, int wrap, int w_numel)
{
    op(p, 0x80); op(p, 2);
    if (wrap) {
        op(p, '}');
        op(p, '(');
        str(p, "epoch");
        int1(p, 3);
        str(p, "model_state_dict");
    }
    glob(p, "collections", "OrderedDict");
    op(p, ')');
    op(p, 'R');
    op(p, 'q'); op(p, 0);        /* BINPUT 0 */
    op(p, '(');
    str(p, "w");
    tensor(p, "0", w_numel, 0, (int[]){2, 3}, (int[]){1, 2});
    str(p, "b");
    tensor(p, "1", 2, 0, (int[]){1, 2}, (int[]){2, 1});
    op(p, 'u');
    if (wrap)
        op(p, 'u');
    op(p, '.');
}

static int load(const Buf *p, char *err)
{
    Pickle *pk = NULL;
    const PkObj *root = NULL;
    int rc = pickle_load(p->b, p->n, &pk, &root, err);
    pickle_free(pk);
    return rc;
}

static void test_pickle_refusals(void)
{
    printf("unpickler\n");
    char err[LM_ERR_LEN];
    Buf p = {.n = 0};
    state_dict(&p, 1, 6);
    Pickle *pk = NULL;
    const PkObj *root = NULL;
    CHECK(pickle_load(p.b, p.n, &pk, &root, err) == LM_OK, "%s", err);
    const PkObj *sd = pickle_dict_get(root, "model_state_dict");
    const PkObj *w = pickle_dict_get(sd, "w"), *ep = pickle_dict_get(root, "epoch");
    CHECK(ep && ep->kind == PK_INT && ep->i == 3, "epoch");
    CHECK(w && w->kind == PK_TENSOR && w->ndim == 2 && w->shape[1] == 3 && w->stride[1] == 2 &&
              w->storage->numel == 6 && !strcmp(w->storage->s, "0"), "tensor w");
    pickle_free(pk);

    int truncated_ok = 0;   /* every proper prefix must be refused */
    for (size_t n = 0; n < p.n; n++) {
        Buf q = p;
        q.n = n;
        truncated_ok += load(&q, err) == LM_EFORMAT;
    }
    CHECK(truncated_ok == (int)p.n, "%d of %zu truncations refused", truncated_ok, p.n);

    Buf evil = {.n = 0};   /* the classic: os.system("echo pwned") */
    op(&evil, 0x80); op(&evil, 2);
    glob(&evil, "os", "system");
    str(&evil, "echo pwned");
    op(&evil, 0x85);
    op(&evil, 'R');
    op(&evil, '.');
    CHECK(load(&evil, err) == LM_EFORMAT && strstr(err, "'os.system'") &&
              strstr(err, "never runs code"), "os.system: %s", err);
    printf("  %s\n", err);

    Buf inst = {.n = 0};   /* INST ('i'): protocol 0 object creation, never written */
    op(&inst, 0x80); op(&inst, 2); op(&inst, '('); op(&inst, 'i');
    put(&inst, "os\nsystem\n", 10);
    op(&inst, '.');
    CHECK(load(&inst, err) == LM_EFORMAT && strstr(err, "0x69"), "INST: %s", err);

    Buf call = {.n = 0};   /* calling a storage type is not something torch.save does */
    op(&call, 0x80); op(&call, 2);
    glob(&call, "torch", "FloatStorage");
    op(&call, ')'); op(&call, 'R'); op(&call, '.');
    CHECK(load(&call, err) == LM_EFORMAT && strstr(err, "torch.FloatStorage"), "%s", err);

    Buf past = {.n = 0};   /* (2,3) with stride (1,2) needs 6 elements; storage has 5 */
    state_dict(&past, 0, 5);
    CHECK(load(&past, err) == LM_EFORMAT && strstr(err, "past the end"), "%s", err);

    Buf memo = {.n = 0};
    op(&memo, 0x80); op(&memo, 2); op(&memo, 'h'); op(&memo, 7); op(&memo, '.');
    CHECK(load(&memo, err) == LM_EFORMAT && strstr(err, "never PUT"), "%s", err);

    Buf two = {.n = 0};    /* STOP with two values */
    op(&two, 'N'); op(&two, 'N'); op(&two, '.');
    CHECK(load(&two, err) == LM_EFORMAT, "two values at STOP");

    Buf self = {.n = 0};   /* a list appended to itself: no recursion anywhere */
    op(&self, ']'); op(&self, 'q'); op(&self, 0); op(&self, 'h'); op(&self, 0);
    op(&self, 'a'); op(&self, '.');
    CHECK(load(&self, err) == LM_OK, "self-referencing list: %s", err);
}

/* Writes a zip at path with the given entries (name, data, len); deflate when asked. */
static int write_zip(const char *path, int n, const char *const *names,
                     const void *const *data, const size_t *len, int deflate)
{
    int zerr;
    zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    if (!z)
        return -1;
    for (int i = 0; i < n; i++) {
        zip_source_t *s = zip_source_buffer(z, data[i], len[i], 0);
        zip_int64_t idx = s ? zip_file_add(z, names[i], s, ZIP_FL_OVERWRITE) : -1;
        if (idx < 0 || zip_set_file_compression(z, (zip_uint64_t)idx,
                                                deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0))
            return -1;
    }
    return zip_close(z);
}

static void test_torchfile(void)
{
    printf("torch.save zip\n");
    char path[128], err[LM_ERR_LEN];
    snprintf(path, sizeof path, "/tmp/lmlab_pickle_%ld.pt", (long)getpid());
    Buf p = {.n = 0};
    state_dict(&p, 1, 6);
    float w[6] = {0, 1, 2, 3, 4, 5}, b[2] = {7, 8};
    const char *names[] = {"archive/data.pkl", "archive/data/0", "archive/data/1",
                           "archive/version"};
    const void *data[] = {p.b, w, b, "3\n"};
    size_t len[] = {p.n, sizeof w, sizeof b, 2};
    for (int deflate = 0; deflate < 2; deflate++) {
        CHECK(write_zip(path, 4, names, data, len, deflate) == 0, "zip");
        SafeTensors *st = NULL;
        CHECK(torchfile_open(path, &st, err) == LM_OK, "%s", err);
        float got[6] = {0}, want[6] = {0, 2, 4, 1, 3, 5};   /* w[i][j] = storage[i + 2j] */
        CHECK(st && safetensors_read_f32(st, "w", got, 6, err) == LM_OK, "%s", err);
        CHECK(!memcmp(got, want, sizeof want), "strided gather (deflate=%d)", deflate);
        CHECK(st && !strcmp(safetensors_meta(st, "torch_state_dict_key"), "model_state_dict"),
              "where");
        safetensors_close(st);
    }
    SafeTensors *st = NULL;
    /* a storage of the wrong size, a missing storage, no data.pkl */
    size_t short_len[] = {p.n, sizeof w - 4, sizeof b, 2};
    write_zip(path, 4, names, data, short_len, 0);
    CHECK(torchfile_open(path, &st, err) == LM_EFORMAT && strstr(err, "holds 20 bytes"),
          "%s", err);
    write_zip(path, 2, names, data, len, 0);
    CHECK(torchfile_open(path, &st, err) == LM_EFORMAT && strstr(err, "does not hold"),
          "%s", err);
    write_zip(path, 2, names + 1, data + 1, len + 1, 0);
    CHECK(torchfile_open(path, &st, err) == LM_EFORMAT && strstr(err, "without data.pkl"),
          "%s", err);
    /* no state_dict inside: {'epoch': 3} */
    Buf e = {.n = 0};
    op(&e, 0x80); op(&e, 2); op(&e, '}'); str(&e, "epoch"); int1(&e, 3); op(&e, 's');
    op(&e, '.');
    data[0] = e.b;
    len[0] = e.n;
    write_zip(path, 1, names, data, len, 0);
    CHECK(torchfile_open(path, &st, err) == LM_EFORMAT && strstr(err, "'epoch'") &&
              strstr(err, "model_state_dict"), "%s", err);
    printf("  %s\n", err);
    /* a pickled module: its class is a refused global, with advice */
    Buf mod = {.n = 0};
    op(&mod, 0x80); op(&mod, 2); glob(&mod, "model", "DispatcherModel"); op(&mod, ')');
    op(&mod, 0x81); op(&mod, '.');
    data[0] = mod.b;
    len[0] = mod.n;
    write_zip(path, 1, names, data, len, 0);
    CHECK(torchfile_open(path, &st, err) == LM_EFORMAT && strstr(err, "model.DispatcherModel") &&
              strstr(err, "state_dict()"), "%s", err);
    printf("  %s\n", err);
    unlink(path);
    CHECK(torchfile_open_memory((const unsigned char *)"\x80\x02}.", 4, "x", &st, err) ==
              LM_EFORMAT && strstr(err, "not a torch.save zip"), "%s", err);
    CHECK(torchfile_open_memory((const unsigned char *)"GGUF", 4, "x", &st, err) ==
              LM_EFORMAT && strstr(err, "not a zip"), "%s", err);
    CHECK(torchfile_open_memory((const unsigned char *)"PK\3\4garbage", 11, "x", &st, err) ==
              LM_EFORMAT, "garbage zip");
}

/* The fixture's data.pkl, as torch.save wrote it. */
static void test_fixture_pickle(void)
{
    printf("fixture data.pkl\n");
    const char *dir = getenv("LMLAB_FIXTURES");
    char path[512], err[LM_ERR_LEN];
    snprintf(path, sizeof path, "%s/reference/dispatcher.pt", dir ? dir : "tests/fixtures");
    int zerr;
    zip_t *z = zip_open(path, ZIP_RDONLY, &zerr);
    CHECK(z != NULL, "open %s", path);
    if (!z)
        return;
    zip_stat_t sb;
    zip_stat(z, "dispatcher/data.pkl", 0, &sb);
    unsigned char *buf = malloc(sb.size);
    zip_file_t *f = zip_fopen(z, "dispatcher/data.pkl", 0);
    CHECK(f && zip_fread(f, buf, sb.size) == (zip_int64_t)sb.size, "read data.pkl");
    zip_fclose(f);
    zip_close(z);
    Pickle *pk = NULL;
    const PkObj *root = NULL;
    CHECK(pickle_load(buf, sb.size, &pk, &root, err) == LM_OK, "%s", err);
    const PkObj *sd = pickle_dict_get(root, "model_state_dict");
    const PkObj *pe = pickle_dict_get(sd, "pos_encoder.pe");
    CHECK(sd && sd->n == 2 * 26, "26 tensors in the state_dict (%d)", sd ? sd->n / 2 : -1);
    CHECK(pe && pe->kind == PK_TENSOR && pe->ndim == 3 && pe->shape[0] == 5000 &&
              pe->stride[0] == 16, "pos_encoder.pe (5000, 1, 16)");
    CHECK(pickle_dict_get(root, "epoch") && pickle_dict_get(root, "epoch")->i == 3, "epoch");
    pickle_free(pk);
    free(buf);
}

/* Files torch.save itself wrote (tests/fixtures/torchsave/README.md). */
static void test_torch_written(void)
{
    printf("torch.save-written files\n");
    const char *dir = getenv("LMLAB_FIXTURES");
    char path[512], err[LM_ERR_LEN];
    SafeTensors *st = NULL;
    snprintf(path, sizeof path, "%s/torchsave/strided.pt", dir ? dir : "tests/fixtures");
    CHECK(torchfile_open(path, &st, err) == LM_OK, "%s", err);
    float w[6], v[3], h[6], d[6];
    int l[3];
    const float want_w[6] = {0, 3, 1, 4, 2, 5}, want_v[3] = {3, 4, 5}, want_h[6] = {0, 1, 2, 3, 4, 5};
    CHECK(st && !safetensors_read_f32(st, "w", w, 6, err) && !memcmp(w, want_w, sizeof w),
          "transposed view: %s", err);
    CHECK(st && !safetensors_read_f32(st, "v", v, 3, err) && !memcmp(v, want_v, sizeof v),
          "view at an offset: %s", err);
    CHECK(st && !safetensors_read_f32(st, "h", h, 6, err) && !memcmp(h, want_h, sizeof h),
          "half: %s", err);
    CHECK(st && !safetensors_read_f32(st, "d", d, 6, err) && !memcmp(d, want_h, sizeof d),
          "double: %s", err);
    CHECK(st && !safetensors_read_i32(st, "l", l, 3, err) && l[0] == 0 && l[2] == 2,
          "int64: %s", err);
    CHECK(st && safetensors_find(st, "w")->shape[0] == 3 && safetensors_find(st, "w")->shape[1] == 2,
          "shape of the transposed view");
    safetensors_close(st);
    const char *files[] = {"param.pt", "proto4.pt", "wrapped.pt"};
    const char *where[] = {"model", "state_dict", "model_state_dict"};
    const char *tensor[] = {"p", "weight", "bias"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/torchsave/%s", dir ? dir : "tests/fixtures", files[i]);
        st = NULL;
        CHECK(torchfile_open(path, &st, err) == LM_OK, "%s", err);
        CHECK(st && !strcmp(safetensors_meta(st, "torch_state_dict_key"), where[i]) &&
                  safetensors_find(st, tensor[i]), "%s: state_dict under '%s'", files[i],
              where[i]);
        safetensors_close(st);
    }
}

/* Any non-negative integer: BININT1 when it fits a byte, else LONG1 of 8 bytes. */
static void intv(Buf *p, long long v)
{
    if (v >= 0 && v < 256) {
        int1(p, (int)v);
        return;
    }
    op(p, 0x8a); op(p, 8);
    for (int i = 0; i < 8; i++)
        op(p, (int)((unsigned long long)v >> (8 * i)) & 0xff);
}

/* A FloatStorage tensor of any rank and size: storage `key` declaring numel floats,
 * viewed at offset with shape/stride (ndim <= 3). */
static void tensor_n(Buf *p, const char *key, long long numel, long long offset, int ndim,
                     const long long *shape, const long long *stride)
{
    glob(p, "torch._utils", "_rebuild_tensor_v2");
    op(p, '(');
    op(p, '('); str(p, "storage"); glob(p, "torch", "FloatStorage"); str(p, key);
    str(p, "cpu"); intv(p, numel); op(p, 't');
    op(p, 'Q');
    intv(p, offset);
    op(p, '(');
    for (int k = 0; k < ndim; k++) intv(p, shape[k]);
    op(p, 't');
    op(p, '(');
    for (int k = 0; k < ndim; k++) intv(p, stride[k]);
    op(p, 't');
    op(p, 0x89);
    glob(p, "collections", "OrderedDict"); op(p, ')'); op(p, 'R');
    op(p, 't');
    op(p, 'R');
}

/* A bare state_dict pickle of n tensors named names[i], each a tensor_n. */
typedef struct {
    const char *name, *key;
    long long numel, offset;
    int ndim;
    long long shape[3], stride[3];
} TSpec;

static void state_dict_n(Buf *p, int n, const TSpec *t)
{
    op(p, 0x80); op(p, 2);
    glob(p, "collections", "OrderedDict"); op(p, ')'); op(p, 'R');
    op(p, '(');
    for (int i = 0; i < n; i++) {
        str(p, t[i].name);
        tensor_n(p, t[i].key, t[i].numel, t[i].offset, t[i].ndim, t[i].shape, t[i].stride);
    }
    op(p, 'u');
    op(p, '.');
}

/* Issue 25's three crafted inputs (tests/fuzz/make_hostile_pt.py writes the same, and
 * they are in the fuzz corpus): each must be refused with a message, never read. */
static void test_hostile_sizes(void)
{
    printf("crafted sizes\n");
    char path[128], err[LM_ERR_LEN];
    snprintf(path, sizeof path, "/tmp/lmlab_pickle_h_%ld.pt", (long)getpid());
    const char *names[] = {"archive/data.pkl", "archive/data/0"};
    unsigned char eight[8] = {0};
    /* 2^62+2 floats in 8 bytes: numel*4 wraps to 8; then at offset 2^40 */
    const long long offsets[] = {0, 1LL << 40};
    for (int i = 0; i < 2; i++) {
        Buf p = {.n = 0};
        TSpec t = {"decoder.bias", "0", (1LL << 62) + 2, offsets[i], 1, {37}, {1}};
        state_dict_n(&p, 1, &t);
        const void *data[] = {p.b, eight};
        size_t len[] = {p.n, sizeof eight};
        CHECK(write_zip(path, 2, names, data, len, 0) == 0, "zip");
        SafeTensors *st = NULL;
        CHECK(torchfile_open(path, &st, err) == LM_EFORMAT && !st &&
                  strstr(err, "storage declares"), "numel wrap (offset %lld): %s", offsets[i],
              err);
        safetensors_close(st);
    }
    /* shape (2^24+1,) stride (2^40,): (shape-1)*stride = 2^64 wraps to 0 */
    Buf p = {.n = 0};
    TSpec t = {"w", "0", 1, 0, 1, {(1LL << 24) + 1}, {1LL << 40}};
    state_dict_n(&p, 1, &t);
    CHECK(load(&p, err) == LM_EFORMAT && strstr(err, "absurd"), "stride wrap: %s", err);
    const void *data[] = {p.b, eight};
    size_t len[] = {p.n, 4};
    write_zip(path, 2, names, data, len, 0);
    SafeTensors *st = NULL;
    CHECK(torchfile_open(path, &st, err) == LM_EFORMAT && !st, "stride wrap: %s", err);
    /* a view spread thin over a big storage is refused, not gathered */
    Buf q = {.n = 0};
    TSpec sp = {"w", "0", 1 << 22, 0, 2, {2, 2}, {1 << 21, 1}};
    state_dict_n(&q, 1, &sp);
    float *big = calloc(1 << 22, sizeof(float));
    const void *d2[] = {q.b, big};
    size_t l2[] = {q.n, (size_t)4 << 22};
    write_zip(path, 2, names, d2, l2, 0);
    CHECK(torchfile_open(path, &st, err) == LM_EFORMAT && strstr(err, "sparse view"), "%s", err);
    free(big);
    unlink(path);
}

static long peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Writes the memory test's file in a child, so this process's peak stays low: "w" (2
 * floats) beside a 4-byte storage viewed as 16384x16384 with stride 0 and 8 tensors
 * viewing one 64 MiB storage of zeros deflated to ~64 KiB. */
static void write_big_claims(const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        Buf p = {.n = 0};
        TSpec t[10] = {{"w", "0", 2, 0, 1, {2}, {1}},
                       {"junk", "1", 1, 0, 2, {16384, 16384}, {0, 0}}};
        char nm[8][8];
        for (int i = 0; i < 8; i++) {
            snprintf(nm[i], sizeof nm[i], "z%d", i);
            t[2 + i] = (TSpec){nm[i], "2", 4096 * 4096, 0, 2, {4096, 4096}, {4096, 1}};
        }
        state_dict_n(&p, 10, t);
        float w[2] = {1.5f, -2.5f}, one = 3;
        float *zeros = calloc(4096 * 4096, sizeof(float));
        int zerr;
        zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
        const char *names[] = {"a/data.pkl", "a/data/0", "a/data/1", "a/data/2"};
        const void *data[] = {p.b, w, &one, zeros};
        size_t len[] = {p.n, sizeof w, sizeof one, (size_t)4096 * 4096 * 4};
        for (int i = 0; z && zeros && i < 4; i++) {
            zip_int64_t idx = zip_file_add(z, names[i], zip_source_buffer(z, data[i], len[i], 0),
                                           0);
            zip_set_file_compression(z, (zip_uint64_t)idx, ZIP_CM_DEFLATE, 9);
        }
        _exit(z && zeros && zip_close(z) == 0 ? 0 : 1);
    }
    int status = 1;
    waitpid(pid, &status, 0);
    CHECK(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "writing %s", path);
}

/* A file's claims never decide the allocation: opening it and reading the tensor a
 * model asks for takes memory for that tensor only. Measured in a child as the growth
 * of its peak resident set (ru_maxrss), which the old reader pushed past 1 GiB. */
static void test_claims_bound_memory(void)
{
    printf("memory bounded by what is read\n");
    char path[128];
    snprintf(path, sizeof path, "/tmp/lmlab_pickle_m_%ld.pt", (long)getpid());
    write_big_claims(path);
    pid_t pid = fork();
    if (pid == 0) {
        char err[LM_ERR_LEN];
        long before = peak_rss_kb();
        SafeTensors *st = NULL;
        float w[2] = {0}, junk[2];
        int ok = torchfile_open(path, &st, err) == LM_OK && safetensors_count(st) == 10 &&
                 !safetensors_read_f32(st, "w", w, 2, err) && w[0] == 1.5f && w[1] == -2.5f &&
                 safetensors_read_f32(st, "junk", junk, 2, err) == LM_EFORMAT &&
                 safetensors_read_f32(st, "z3", junk, 2, err) == LM_EFORMAT;
        safetensors_close(st);
        long grew = peak_rss_kb() - before;
        fprintf(stderr, "  open + reads: ok=%d, peak RSS grew %ld KiB (%s)\n", ok, grew, err);
        _exit(ok && grew < 48 * 1024 ? 0 : 1);
    }
    int status = 1;
    waitpid(pid, &status, 0);
    CHECK(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "opening claims of 1 GiB and 8 x 64 MiB must stay under 48 MiB (see the line above)");
    unlink(path);
}

int main(void)
{
    test_torch_written();
    test_pickle_refusals();
    test_torchfile();
    test_fixture_pickle();
    test_hostile_sizes();
    test_claims_bound_memory();
    return check_summary();
}
