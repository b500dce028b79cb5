/* test_safetensors.c — the safetensors reader and writer: the PyTorch fixtures, a
 * round trip of several dtypes and metadata, rejection of damaged files (every
 * truncation of a small file, bad lengths, JSON, offsets, dtypes, paths), and an atomic
 * write that leaves no temporary file behind, and a SafeTensors fed by a source
 * (safetensors_open_source, as torch.save files are read). Not a test of any model. */
#include "check.h"
#include "err.h"
#include "safetensors.h"

#include <dirent.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

static const char *fixture(const char *name)
{
    static char path[1024];
    const char *dir = getenv("LMLAB_FIXTURES");
    snprintf(path, sizeof path, "%s/%s", dir ? dir : "tests/fixtures", name);
    return path;
}

static void test_fixtures(void)
{
    char err[LM_ERR_LEN] = "";
    SafeTensors *st;
    int rc = safetensors_open(fixture("optim.safetensors"), &st, err);
    CHECK(rc == LM_OK, "open optim: %s", err);
    if (rc != LM_OK)
        return;
    CHECK(safetensors_count(st) == 14, "optim has %d tensors", safetensors_count(st));
    const StTensor *t = safetensors_find(st, "adam.p0");
    CHECK(t && t->dtype == ST_F32 && t->ndim == 2 && t->shape[0] == 5 && t->shape[1] == 7,
          "adam.p0 shape");
    const char *m = safetensors_meta(st, "adam");
    CHECK(m && strstr(m, "betas=(0.9,0.98)"), "adam metadata: %s", m ? m : "(null)");
    CHECK(safetensors_meta(st, "nope") == NULL, "absent metadata");
    CHECK(safetensors_find(st, "nope") == NULL, "absent tensor");
    float p[35];
    CHECK(safetensors_read_f32(st, "adam.p0", p, 35, err) == LM_OK, "%s", err);
    CHECK(safetensors_read_f32(st, "adam.p0", p, 34, err) == LM_EFORMAT &&
              strstr(err, "adam.p0") && strstr(err, "(5,7)"),
          "wrong count message: %s", err);
    safetensors_close(st);

    rc = safetensors_open(fixture("dispatcher_lm.safetensors"), &st, err);
    CHECK(rc == LM_OK, "open dispatcher_lm: %s", err);
    if (rc != LM_OK)
        return;
    m = safetensors_meta(st, "bptt");
    CHECK(m && strcmp(m, "32") == 0, "bptt metadata");
    t = safetensors_find(st, "tokens");
    CHECK(t && t->dtype == ST_I64 && t->shape[0] == 32 && t->shape[1] == 4, "tokens shape");
    int tok[128];
    CHECK(safetensors_read_i32(st, "tokens", tok, 128, err) == LM_OK, "%s", err);
    int ok = 1;
    for (int i = 0; i < 128; i++)
        ok &= tok[i] >= 0 && tok[i] < 37;
    CHECK(ok, "tokens in [0, 37)");
    CHECK(safetensors_read_i32(st, "logits", tok, 1, err) == LM_EFORMAT, "i32 of float");
    safetensors_close(st);
}

/* A small valid file with several dtypes; returns its size. */
static long write_small(const char *path, char *err)
{
    static float f32[6] = {1.5f, -2.25f, 3e-8f, 1e30f, 0.f, -0.f};
    static double f64[2] = {3.141592653589793, -1e-300};
    static int64_t i64[3] = {0, -7, 2147483647};
    static int32_t i32[2] = {-5, 99};
    static uint16_t f16[4] = {0x3c00, 0xc000, 0x0001, 0x7bff}; /* 1, -2, 2^-24, 65504 */
    static uint16_t bf16[2] = {0x3f80, 0xc0a0};                 /* 1, -5 */
    static uint8_t u8[3] = {1, 2, 255};
    SafeTensorsWriter *w = safetensors_writer_create();
    long s23[2] = {2, 3}, s2[1] = {2}, s3[1] = {3}, s4[1] = {4};
    int rc = safetensors_writer_add(w, "w.f32", ST_F32, 2, s23, f32);
    rc |= safetensors_writer_add(w, "a.f64", ST_F64, 1, s2, f64);
    rc |= safetensors_writer_add(w, "tok", ST_I64, 1, s3, i64);
    rc |= safetensors_writer_add(w, "i32", ST_I32, 1, s2, i32);
    rc |= safetensors_writer_add(w, "h", ST_F16, 1, s4, f16);
    rc |= safetensors_writer_add(w, "b", ST_BF16, 1, s2, bf16);
    rc |= safetensors_writer_add(w, "u8", ST_U8, 1, s3, u8);
    rc |= safetensors_writer_add(w, "scalar", ST_F32, 0, NULL, f32);
    CHECK(rc == LM_OK, "writer_add");
    CHECK(safetensors_writer_add(w, "tok", ST_F32, 1, s2, f32) == LM_EARG, "duplicate name");
    CHECK(safetensors_writer_meta(w, "note", "say \"hi\" \\ caf\xc3\xa9 \xe2\x9c\x93") == LM_OK,
          "meta");
    CHECK(safetensors_writer_meta(w, "d", "32") == LM_OK, "meta");
    rc = safetensors_writer_write(w, path, err);
    CHECK(rc == LM_OK, "write: %s", err);
    safetensors_writer_destroy(w);
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

static void test_round_trip(void)
{
    char err[LM_ERR_LEN] = "", path[512];
    snprintf(path, sizeof path, "%s/small.safetensors", tmpdir);
    long size = write_small(path, err);
    CHECK(size > 0, "size %ld", size);
    SafeTensors *st;
    int rc = safetensors_open(path, &st, err);
    CHECK(rc == LM_OK, "reopen: %s", err);
    if (rc != LM_OK)
        return;
    CHECK(safetensors_count(st) == 8, "count %d", safetensors_count(st));
    /* sorted name order in the data area */
    const StTensor *a = safetensors_find(st, "a.f64"), *wt = safetensors_find(st, "w.f32");
    CHECK(a && wt && a->begin == 0 && wt->begin > a->begin, "sorted order");
    const char *note = safetensors_meta(st, "note");
    CHECK(note && strcmp(note, "say \"hi\" \\ caf\xc3\xa9 \xe2\x9c\x93") == 0, "unicode meta");
    float f[6];
    CHECK(safetensors_read_f32(st, "w.f32", f, 6, err) == LM_OK && f[0] == 1.5f &&
              f[1] == -2.25f && f[2] == 3e-8f && f[3] == 1e30f, "f32 values");
    CHECK(safetensors_read_f32(st, "a.f64", f, 2, err) == LM_OK && f[0] == 3.14159265f &&
              f[1] == -0.f, "f64 values");
    CHECK(safetensors_read_f32(st, "h", f, 4, err) == LM_OK && f[0] == 1.f && f[1] == -2.f &&
              f[2] == 0x1p-24f && f[3] == 65504.f, "f16 values %g %g %g %g", f[0], f[1], f[2],
          f[3]);
    CHECK(safetensors_read_f32(st, "b", f, 2, err) == LM_OK && f[0] == 1.f && f[1] == -5.f,
          "bf16 values");
    CHECK(safetensors_read_f32(st, "scalar", f, 1, err) == LM_OK && f[0] == 1.5f, "scalar");
    int v[3];
    CHECK(safetensors_read_i32(st, "tok", v, 3, err) == LM_OK && v[0] == 0 && v[1] == -7 &&
              v[2] == 2147483647, "i64 values");
    CHECK(safetensors_read_i32(st, "i32", v, 2, err) == LM_OK && v[0] == -5 && v[1] == 99,
          "i32 values");
    const StTensor *u = safetensors_find(st, "u8");
    const unsigned char *ub = u ? safetensors_data(st, u) : NULL;
    CHECK(ub && ub[2] == 255, "u8 raw");
    CHECK(safetensors_read_f32(st, "missing", f, 1, err) == LM_EFORMAT && strstr(err, "missing"),
          "missing tensor: %s", err);
    safetensors_close(st);
}

static void write_bytes(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(p, 1, n, f);
        fclose(f);
    }
}

/* A file with this header text and `data` bytes of zeros; expects rejection. */
static void expect_bad_header(const char *json, size_t data, const char *what,
                              const char *expect_in_msg)
{
    char path[512], err[LM_ERR_LEN] = "";
    snprintf(path, sizeof path, "%s/bad.safetensors", tmpdir);
    size_t hl = strlen(json);
    unsigned char buf[4096] = {0};
    for (int i = 0; i < 8; i++)
        buf[i] = (unsigned char)((uint64_t)hl >> (8 * i));
    memcpy(buf + 8, json, hl);
    write_bytes(path, buf, 8 + hl + data);
    SafeTensors *st = (SafeTensors *)1;
    int rc = safetensors_open(path, &st, err);
    CHECK(rc == LM_EFORMAT && st == NULL && strstr(err, path) && strstr(err, expect_in_msg),
          "%s: rc %d msg %s", what, rc, err);
    safetensors_close(rc == LM_OK ? st : NULL);
}

static void test_rejection(void)
{
    char err[LM_ERR_LEN] = "", path[512], cut[512];
    snprintf(path, sizeof path, "%s/small.safetensors", tmpdir);
    snprintf(cut, sizeof cut, "%s/cut.safetensors", tmpdir);
    FILE *f = fopen(path, "rb");
    unsigned char buf[4096];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    CHECK(n > 64 && n < sizeof buf, "small file read (%zu bytes)", n);
    CHECK(n > 8 && buf[0] % 8 == 0 && buf[0] > 0, "header padded to a multiple of 8");
    int all_rejected = 1;
    for (size_t k = 0; k < n; k++) {
        write_bytes(cut, buf, k);
        SafeTensors *st;
        int rc = safetensors_open(cut, &st, err);
        if (rc != LM_EFORMAT || st != NULL || !strstr(err, cut)) {
            all_rejected = 0;
            fprintf(stderr, "prefix %zu: rc %d %s\n", k, rc, err);
        }
        safetensors_close(st);
    }
    CHECK(all_rejected, "every truncation rejected with LM_EFORMAT");

    /* header length past EOF, and absurd */
    unsigned char hdr[16] = {0x00, 0x01, 0, 0, 0, 0, 0, 0, '{', '}'};
    write_bytes(cut, hdr, 10);
    SafeTensors *st;
    CHECK(safetensors_open(cut, &st, err) == LM_EFORMAT && strstr(err, "past the end"), "%s",
          err);
    hdr[5] = 0x10;
    write_bytes(cut, hdr, 10);
    CHECK(safetensors_open(cut, &st, err) == LM_EFORMAT && strstr(err, "absurd"), "%s", err);

    expect_bad_header("{\"a\": {\"dtype\": \"F32\", \"shape\": [2], ", 8, "invalid JSON",
                      "invalid JSON");
    expect_bad_header("[1, 2]", 0, "not an object", "not a JSON object");
    expect_bad_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,12]}}", 12,
                      "wrong offsets", "need 8");
    expect_bad_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 8,
                      "past data", "past the data area");
    expect_bad_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                      "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                      8, "overlap", "overlap");
    expect_bad_header("{\"a\":{\"dtype\":\"F8_E4M3\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2,
                      "unknown dtype", "unknown dtype");
    expect_bad_header("{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4, "missing shape",
                      "lacks");
    expect_bad_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4,
                      "negative shape", "invalid shape");
    expect_bad_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4,
                      "reversed offsets", "invalid data_offsets");
    expect_bad_header("{\"__metadata__\":{\"k\":1}}", 0, "non-string metadata", "not a string");

    CHECK(safetensors_open(tmpdir, &st, err) == LM_EARG && st == NULL &&
              strstr(err, "a directory"), "directory: %s", err);
    char missing[512];
    snprintf(missing, sizeof missing, "%s/does-not-exist.safetensors", tmpdir);
    CHECK(safetensors_open(missing, &st, err) == LM_EIO && strstr(err, "does-not-exist"),
          "missing: %s", err);
}

static int count_files(const char *dir, const char *substr)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, substr) != NULL;
    if (d)
        closedir(d);
    return n;
}

static void test_atomic(void)
{
    char err[LM_ERR_LEN] = "", path[512];
    snprintf(path, sizeof path, "%s/small.safetensors", tmpdir);
    write_small(path, err);   /* overwrite an existing file */
    CHECK(count_files(tmpdir, ".tmp.") == 0, "no temp file left after success");
    /* failure: the target directory does not exist; nothing left behind */
    SafeTensorsWriter *w = safetensors_writer_create();
    float x = 1;
    long s1[1] = {1};
    safetensors_writer_add(w, "x", ST_F32, 1, s1, &x);
    char bad[600];
    snprintf(bad, sizeof bad, "%s/nodir/out.safetensors", tmpdir);
    CHECK(safetensors_writer_write(w, bad, err) == LM_EIO && strstr(err, "nodir"), "%s", err);
    /* a directory as the target: refused up front, naming what it is; nothing left */
    char dir[600], inner[700];
    snprintf(dir, sizeof dir, "%s/occupied", tmpdir);
    mkdir(dir, 0755);
    snprintf(inner, sizeof inner, "%s/keep", dir);
    write_bytes(inner, "k", 1);
    CHECK(safetensors_writer_write(w, dir, err) == LM_EARG && strstr(err, "is a directory"),
          "a directory refused: %s", err);
    CHECK(count_files(tmpdir, ".tmp.") == 0, "no temp file left after failure");
    CHECK(access(inner, F_OK) == 0, "existing target untouched");
    safetensors_writer_destroy(w);
    unlink(inner);
    rmdir(dir);
}

/* A source for safetensors_open_source: tensor i's bytes are i+1, i+2, ...; tensor 1
 * fails to load; counts its loads and releases. */
typedef struct {
    int loads, releases;
} FakeSrc;

static int fake_load(void *ctx, int i, unsigned char *out, char *err)
{
    FakeSrc *f = ctx;
    f->loads++;
    if (i == 1)
        return err_set(err, LM_EFORMAT, "tensor 1 is damaged");
    float v[3] = {(float)i + 1, (float)i + 2, (float)i + 3};
    memcpy(out, v, sizeof v);
    return LM_OK;
}

static void fake_release(void *ctx)
{
    ((FakeSrc *)ctx)->releases++;
}

/* A SafeTensors whose bytes come from a source: nothing is loaded until a read whose
 * count matches, a failing load's message comes through, a duplicate name is refused,
 * and the source is released exactly once (also on failure). */
static void test_source(void)
{
    char err[LM_ERR_LEN];
    StTensor t[2] = {{.name = "a", .dtype = ST_F32, .ndim = 1, .shape = {3}, .numel = 3},
                     {.name = "b", .dtype = ST_F32, .ndim = 1, .shape = {3}, .numel = 3}};
    const char *meta[2] = {"k", "v"};
    FakeSrc f = {0};
    StSource src = {fake_load, fake_release, &f};
    SafeTensors *st = NULL;
    CHECK(safetensors_open_source(t, 2, meta, 1, &src, "src", &st, err) == LM_OK, "%s", err);
    float x[4] = {0};
    CHECK(st && f.loads == 0 && !strcmp(safetensors_meta(st, "k"), "v") &&
              safetensors_data(st, safetensors_find(st, "a")) == NULL, "nothing loaded yet");
    CHECK(safetensors_read_f32(st, "a", x, 4, err) == LM_EFORMAT && f.loads == 0,
          "a wrong count is refused before loading: %s", err);
    CHECK(safetensors_read_f32(st, "a", x, 3, err) == LM_OK && x[0] == 1 && x[2] == 3 &&
              f.loads == 1, "read through the source: %s", err);
    CHECK(safetensors_read_f32(st, "b", x, 3, err) == LM_EFORMAT && strstr(err, "damaged"),
          "a failing load: %s", err);
    unsigned char raw[12];
    CHECK(safetensors_read_raw(st, safetensors_find(st, "a"), raw, sizeof raw, err) == LM_OK &&
              !memcmp(raw, (float[]){1, 2, 3}, 12), "raw bytes: %s", err);
    safetensors_close(st);
    CHECK(f.releases == 1, "released once (%d)", f.releases);
    snprintf(t[1].name, sizeof t[1].name, "a");
    FakeSrc g = {0};
    StSource src2 = {fake_load, fake_release, &g};
    CHECK(safetensors_open_source(t, 2, meta, 1, &src2, "src", &st, err) == LM_EFORMAT &&
              !st && strstr(err, "twice") && g.releases == 1, "duplicate: %s", err);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/lmlab_st_test.%ld", (long)getpid());
    mkdir(tmpdir, 0700);
    test_fixtures();
    test_round_trip();
    test_rejection();
    test_atomic();
    test_source();
    char p[600];
    const char *names[] = {"small", "cut", "bad"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s.safetensors", tmpdir, names[i]);
        unlink(p);
    }
    rmdir(tmpdir);
    return check_summary();
}
