/* test_interop.c — weights to and from the reference repositories' PyTorch classes, on
 * the fixtures in tests/fixtures/reference/ (made by those classes: dispatcher,
 * dispatcher-mh, msa of fractalego/dispatcher; word_language_model's LSTM):
 *  - import of both file kinds (safetensors with {"format":"pt"}, torch.save zip), the
 *    configuration inferred from the tensors, and lmlab's outputs against the classes'
 *    (relative 1e-5 of the output's largest magnitude, both T = bptt and T < bptt);
 *  - `save names=reference` round trips: the same tensor names as the reference
 *    state_dict, every parameter bit-exact, pos_encoder.pe (5000, 1, d);
 *  - lmlab's own names round trip bit-exactly;
 *  - refusals: foreign names (the message lists expected and found names), a newer
 *    lmlab format, models the reference classes cannot name.
 * The unpickler and the zip reader on hand-made files are in test_pickle.c. */
#include "check.h"
#include "checkpoint.h"
#include "config.h"
#include "err.h"
#include "model.h"
#include "names_reference.h"
#include "posenc.h"
#include "safetensors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define V_REF 37
#define B_REF 3

static const char *const KINDS[] = {"dispatcher", "dispatcher-mh", "msa", "lstm"};

static const char *fixture(const char *name, char *buf, size_t cap)
{
    const char *dir = getenv("LMLAB_FIXTURES");
    snprintf(buf, cap, "%s/reference/%s", dir ? dir : "tests/fixtures", name);
    return buf;
}

static void tmp_path(const char *name, char *buf, size_t cap)
{
    snprintf(buf, cap, "/tmp/lmlab_interop_%ld_%s", (long)getpid(), name);
}

/* Opens KIND.EXT as `import` does and builds the model its tensors describe (heads=2
 * and bptt=16 from the configuration, as a user would set them). NULL on failure. */
static Model *import_fixture(const char *kind, const char *ext, SafeTensors **st_out)
{
    char name[64], path[512], err[LM_ERR_LEN], note[300];
    snprintf(name, sizeof name, "%s.%s", kind, ext);
    CheckpointInfo info;
    SafeTensors *st = NULL;
    int rc = checkpoint_open(fixture(name, path, sizeof path), &info, &st, err);
    CHECK(rc == LM_OK, "%s: %s", name, err);
    if (rc)
        return NULL;
    CHECK(!info.has_config && !info.tokenizer_json, "%s: foreign metadata was interpreted",
          name);
    checkpoint_info_free(&info);
    Config c;
    config_defaults(&c);
    c.heads = 2;
    c.bptt = 16;
    rc = names_infer_config(st, &c, note, sizeof note, err);
    CHECK(rc == LM_OK, "%s: infer: %s", name, err);
    CHECK(!strcmp(c.model, kind) && c.d == 16 && c.nhid == 24 && c.layers == 2 &&
              c.bptt == 16 && (!strcmp(kind, "lstm") || c.heads == 2),
          "%s: inferred %s", name, note);
    Model *m = rc ? NULL : model_create(&c, V_REF, err);
    CHECK(m != NULL, "%s: model_create: %s", name, err);
    if (m && (model_alloc(m, B_REF, 16, err) || checkpoint_read_weights(m, st, "", err))) {
        CHECK(0, "%s: %s", name, err);
        model_destroy(m);
        m = NULL;
    }
    if (m)
        m->training = 0;
    *st_out = st;
    return m;
}

static void log_softmax_rows(float *x, long rows, int V)
{
    for (long r = 0; r < rows; r++) {
        float *v = x + r * V, mx = v[0];
        for (int i = 1; i < V; i++)
            mx = v[i] > mx ? v[i] : mx;
        double s = 0;
        for (int i = 0; i < V; i++)
            s += exp((double)(v[i] - mx));
        float lse = mx + (float)log(s);
        for (int i = 0; i < V; i++)
            v[i] -= lse;
    }
}

/* lmlab's outputs on input_T<T> against output_T<T> (both (T,B,...), time-major). */
static void parity_at(Model *m, const SafeTensors *io, int T, const char *label)
{
    char nin[32], nout[32], err[LM_ERR_LEN];
    snprintf(nin, sizeof nin, "input_T%d", T);
    snprintf(nout, sizeof nout, "output_T%d", T);
    int N = T * B_REF, *tb = malloc(N * sizeof(int)), *tok = malloc(N * sizeof(int));
    float *ref = malloc((size_t)N * V_REF * sizeof(float));
    float *out = malloc((size_t)N * V_REF * sizeof(float));
    CHECK(!safetensors_read_i32(io, nin, tb, N, err) &&
              !safetensors_read_f32(io, nout, ref, (size_t)N * V_REF, err), "%s", err);
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B_REF; b++)
            tok[b * T + t] = tb[t * B_REF + b];
    if (m->ops->reset_state)
        m->ops->reset_state(m);
    CHECK(model_forward(m, tok, NULL, B_REF, T, NULL, NULL) == LM_OK, "forward");
    const float *lg = m->ops->logits(m);
    for (int t = 0; t < T; t++)   /* back to time-major, as the reference returns them */
        for (int b = 0; b < B_REF; b++)
            memcpy(out + ((size_t)t * B_REF + b) * V_REF, lg + ((size_t)b * T + t) * V_REF,
                   V_REF * sizeof(float));
    if (!strcmp(m->cfg.model, "lstm"))   /* word_language_model returns log_softmax */
        log_softmax_rows(out, N, V_REF);
    double scale = 0;
    for (long i = 0; i < (long)N * V_REF; i++)
        scale = fmax(scale, fabs(ref[i]));
    char what[96];
    snprintf(what, sizeof what, "%s T=%d (|ref| <= %.2f)", label, T, scale);
    CHECK_CLOSE(what, out, ref, (long)N * V_REF, 0.0, 1e-5 * scale);
    free(tb); free(tok); free(ref); free(out);
}

static int same_tensor(const SafeTensors *a, const StTensor *ta, const SafeTensors *b,
                       const StTensor *tb)
{
    if (ta->dtype != tb->dtype || ta->ndim != tb->ndim || ta->end - ta->begin != tb->end - tb->begin)
        return 0;
    for (int k = 0; k < ta->ndim; k++)
        if (ta->shape[k] != tb->shape[k])
            return 0;
    size_t n = ta->end - ta->begin;
    unsigned char *x = malloc(n + 1), *y = malloc(n + 1);
    char err[LM_ERR_LEN];
    int same = x && y && !safetensors_read_raw(a, ta, x, n, err) &&
               !safetensors_read_raw(b, tb, y, n, err) && !memcmp(x, y, n);
    free(x);
    free(y);
    return same;
}

/* Every tensor of `want` is in `got` with the same shape; all but `skip` bit-exact. */
static void same_file(const SafeTensors *want, const SafeTensors *got, const char *skip,
                      const char *label)
{
    CHECK(safetensors_count(want) == safetensors_count(got), "%s: %d tensors, expected %d",
          label, safetensors_count(got), safetensors_count(want));
    int exact = 0;
    for (int i = 0; i < safetensors_count(want); i++) {
        const StTensor *w = safetensors_at(want, i), *g = safetensors_find(got, w->name);
        CHECK(g != NULL, "%s: '%s' missing", label, w->name);
        if (!g || (skip && !strcmp(w->name, skip)))
            continue;
        int same = same_tensor(want, w, got, g);
        exact += same;
        CHECK(same, "%s: '%s' differs", label, w->name);
    }
    printf("  %-40s %d tensors bit-exact\n", label, exact);
}

/* pos_encoder.pe as lmlab writes it against the reference's own buffer. */
static void check_pe(const SafeTensors *ref, const SafeTensors *ours)
{
    const StTensor *a = safetensors_find(ref, NAMES_PE), *b = safetensors_find(ours, NAMES_PE);
    CHECK(a && b && b->ndim == 3 && b->shape[0] == NAMES_PE_ROWS && b->shape[1] == 1 &&
              b->shape[2] == 16, "pos_encoder.pe missing or not (5000, 1, 16)");
    if (!a || !b || a->numel != b->numel)
        return;
    float *x = malloc(a->numel * sizeof(float)), *y = malloc(a->numel * sizeof(float));
    char err[LM_ERR_LEN];
    safetensors_read_f32(ref, NAMES_PE, x, a->numel, err);
    safetensors_read_f32(ours, NAMES_PE, y, b->numel, err);
    CHECK_CLOSE("pos_encoder.pe (5000 rows)", y, x, (long)a->numel, 0.0, 1e-6);
    free(x);
    free(y);
}

static void round_trips(Model *m, const SafeTensors *ref_st, const char *kind)
{
    char path[256], err[LM_ERR_LEN], label[96];
    tmp_path("ref.safetensors", path, sizeof path);
    CHECK(checkpoint_save_names(path, m, NULL, NAMES_REFERENCE, err) == LM_OK, "%s", err);
    SafeTensors *got = NULL;
    CHECK(safetensors_open(path, &got, err) == LM_OK, "%s", err);
    snprintf(label, sizeof label, "%s names=reference", kind);
    if (got) {
        same_file(ref_st, got, NAMES_PE, label);
        if (strcmp(kind, "lstm"))
            check_pe(ref_st, got);
        CHECK(safetensors_meta(got, "names") && !strcmp(safetensors_meta(got, "names"), "reference"),
              "names metadata");
    }
    safetensors_close(got);
    /* lmlab reads its own reference-named file back, configuration included */
    CheckpointInfo info;
    SafeTensors *st = NULL;
    CHECK(checkpoint_open(path, &info, &st, err) == LM_OK && info.has_config, "%s", err);
    Model *m2 = st ? model_create(&info.cfg, V_REF, err) : NULL;
    CHECK(m2 && checkpoint_read_weights(m2, st, "", err) == LM_OK, "reread: %s", err);
    CHECK(m2 && !memcmp(m2->params.data, m->params.data, m->params.total * sizeof(float)),
          "%s: reference-named reread differs", kind);
    model_destroy(m2);
    safetensors_close(st);
    checkpoint_info_free(&info);
    /* lmlab's own names */
    tmp_path("lm.safetensors", path, sizeof path);
    CHECK(checkpoint_save_names(path, m, NULL, NAMES_LMLAB, err) == LM_OK, "%s", err);
    st = NULL;
    CHECK(checkpoint_open(path, &info, &st, err) == LM_OK && info.has_config, "%s", err);
    CHECK(st && names_detect(st) == NAMES_LMLAB && !safetensors_find(st, NAMES_PE),
          "lmlab names expected by default");
    m2 = st ? model_create(&info.cfg, V_REF, err) : NULL;
    CHECK(m2 && checkpoint_read_weights(m2, st, "", err) == LM_OK, "reread: %s", err);
    CHECK(m2 && !memcmp(m2->params.data, m->params.data, m->params.total * sizeof(float)),
          "%s: lmlab-named reread differs", kind);
    printf("  %-40s bit-exact\n", "lmlab names round trip");
    model_destroy(m2);
    safetensors_close(st);
    checkpoint_info_free(&info);
    unlink(path);
    tmp_path("ref.safetensors", path, sizeof path);
    unlink(path);
}

static void test_kind(const char *kind)
{
    char path[512], name[64], err[LM_ERR_LEN];
    snprintf(name, sizeof name, "%s_io.safetensors", kind);
    SafeTensors *io = NULL;
    CHECK(safetensors_open(fixture(name, path, sizeof path), &io, err) == LM_OK, "%s", err);
    SafeTensors *st_s = NULL, *st_p = NULL;
    Model *ms = import_fixture(kind, "safetensors", &st_s);
    Model *mp = import_fixture(kind, "pt", &st_p);
    printf("%s\n", kind);
    if (ms && mp && io) {
        CHECK(!strcmp(kind, "lstm") || names_detect(st_s) == NAMES_REFERENCE, "naming");
        same_file(st_s, st_p, NULL, ".pt tensors == .safetensors tensors");
        parity_at(ms, io, 16, ".safetensors");
        parity_at(ms, io, 11, ".safetensors");
        parity_at(mp, io, 16, ".pt");
        parity_at(mp, io, 11, ".pt");
        round_trips(mp, st_s, kind);
    }
    model_destroy(ms);
    model_destroy(mp);
    safetensors_close(st_s);
    safetensors_close(st_p);
    safetensors_close(io);
}

/* A file under names that fit neither naming; a newer lmlab format. */
static void test_refusals(void)
{
    printf("refusals\n");
    char path[256], err[LM_ERR_LEN];
    tmp_path("foreign.safetensors", path, sizeof path);
    float w[4] = {1, 2, 3, 4};
    long shape[2] = {2, 2};
    SafeTensorsWriter *wr = safetensors_writer_create();
    safetensors_writer_add(wr, "foo.weight", ST_F32, 2, shape, w);
    safetensors_writer_meta(wr, "format", "pt");
    CHECK(safetensors_writer_write(wr, path, err) == LM_OK, "%s", err);
    safetensors_writer_destroy(wr);
    Config c;
    config_defaults(&c);
    config_set(&c, "model", "dispatcher", err);
    c.d = 16; c.heads = 2; c.nhid = 24; c.layers = 2; c.bptt = 16;
    Model *m = model_create(&c, V_REF, err);
    CheckpointInfo info;
    SafeTensors *st = NULL;
    CHECK(checkpoint_open(path, &info, &st, err) == LM_OK, "format pt must open: %s", err);
    int rc = st ? checkpoint_read_weights(m, st, "", err) : LM_OK;
    CHECK(rc == LM_EFORMAT && strstr(err, "encoder.weight") &&
              strstr(err, "blocks.0.mixer.linear_in.weight") &&
              strstr(err, "transformer_encoder.layers.0.self_attn.linear_in.weight") &&
              strstr(err, "foo.weight"), "mismatch message: %s", err);
    printf("  %s\n", err);
    char note[300];
    CHECK(names_infer_config(st, &c, note, sizeof note, err) == LM_EFORMAT, "infer foo");
    safetensors_close(st);
    checkpoint_info_free(&info);

    wr = safetensors_writer_create();
    safetensors_writer_add(wr, "encoder.weight", ST_F32, 2, shape, w);
    safetensors_writer_meta(wr, "format", "lmlab-checkpoint-9");
    CHECK(safetensors_writer_write(wr, path, err) == LM_OK, "%s", err);
    safetensors_writer_destroy(wr);
    CHECK(checkpoint_open(path, &info, &st, err) == LM_EFORMAT && strstr(err, "lmlab-checkpoint-9"),
          "a newer lmlab format must be refused: %s", err);
    unlink(path);

    /* models the reference classes cannot name */
    snprintf(c.norm, sizeof c.norm, "pre");
    CHECK(names_reference_check(&c, err) == LM_EARG && strstr(err, "norm=pre"), "norm=pre");
    snprintf(c.norm, sizeof c.norm, "post");
    config_set(&c, "model", "linear", err);
    CHECK(names_reference_check(&c, err) == LM_EARG, "linear has no reference class");
    NamesKind k;
    CHECK(names_parse("pytorch", &k, err) == LM_EARG && strstr(err, "names=reference"),
          "names= value");
    char out[128];
    names_map("blocks.1.mixer.in_proj_weight", NAMES_REFERENCE, out, sizeof out);
    CHECK(!strcmp(out, "transformer_encoder.layers.1.self_attn.in_proj_weight"), "%s", out);
    names_map("blocks.12.norm2.bias", NAMES_REFERENCE, out, sizeof out);
    CHECK(!strcmp(out, "transformer_encoder.layers.12.norm2.bias"), "%s", out);
    names_map("rnn.weight_ih_l0", NAMES_REFERENCE, out, sizeof out);
    CHECK(!strcmp(out, "rnn.weight_ih_l0"), "%s", out);
    model_destroy(m);
}

int main(void)
{
    for (int i = 0; i < 4; i++)
        test_kind(KINDS[i]);
    test_refusals();
    return check_summary();
}
