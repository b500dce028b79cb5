/* checkpoint.c — reading and writing checkpoints (see checkpoint.h). */
#include "checkpoint.h"

#include "err.h"
#include "sysinfo.h"
#include "names_reference.h"
#include "regfile.h"
#include "runfiles.h"
#include "tokenizer.h"
#include "torchfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHECKPOINT_FORMAT "lmlab-checkpoint-1"

/* "<stem>.optim.safetensors" for a checkpoint path. */
static void checkpoint_optim_path(const char *path, char *out, size_t cap)
{
    size_t n = strlen(path);
    const char *ext = ".safetensors";
    size_t e = strlen(ext);
    if (n > e && !strcmp(path + n - e, ext))
        snprintf(out, cap, "%.*s.optim%s", (int)(n - e), path, ext);
    else
        snprintf(out, cap, "%s.optim", path);
}

static char *state_to_json(const TrainState *ts)
{
    json_t *o = json_pack("{sI sI sf sf sI}", "step", (json_int_t)ts->step, "tokens",
                          (json_int_t)ts->tokens, "epoch", ts->epoch, "elapsed", ts->elapsed,
                          "run_id", (json_int_t)ts->run_id);
    if (!o)
        return NULL;
    char buf[64];
    /* 64-bit values as decimal strings: JSON numbers lose them above 2^53 */
    snprintf(buf, sizeof buf, "%.17g", ts->best_val);
    json_object_set_new(o, "best_val", json_string(buf));
#define U64(key, v) (snprintf(buf, sizeof buf, "%llu", (unsigned long long)(v)), \
                     json_object_set_new(o, key, json_string(buf)))
    U64("model_rng_state", ts->model_rng.state);
    U64("model_rng_inc", ts->model_rng.inc);
    U64("data_rng_state", ts->data_rng.state);
    U64("data_rng_inc", ts->data_rng.inc);
    for (int i = 0; i < 4; i++) {
        char key[16];
        snprintf(key, sizeof key, "batcher%d", i);
        U64(key, ts->batcher[i]);
    }
#undef U64
    const Schedule *s = &ts->sched;
    snprintf(buf, sizeof buf, "%.17g", s->best);
    json_object_set_new(o, "sched_best", json_string(buf));
    json_object_set_new(o, "sched_bad_evals", json_integer(s->bad_evals));
    json_object_set_new(o, "sched_scale", json_real(s->plateau_scale));
    if (ts->window_steps > 0) {
        snprintf(buf, sizeof buf, "%.17g", ts->window_loss);
        json_object_set_new(o, "window_loss", json_string(buf));
        json_object_set_new(o, "window_steps", json_integer(ts->window_steps));
    }
    if (ts->store_id[0])
        json_object_set_new(o, "store_id", json_string(ts->store_id));
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return text;
}

static unsigned long long get_u64(json_t *o, const char *key, int *bad)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v)) {
        *bad = 1;
        return 0;
    }
    return strtoull(json_string_value(v), NULL, 10);
}

static int state_from_json(const char *text, TrainState *ts)
{
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    if (!json_is_object(o)) {
        json_decref(o);
        return -1;
    }
    int bad = 0;
    json_int_t step = 0, tokens = 0, run = 0;
    double epoch = 0, elapsed = 0;
    if (json_unpack(o, "{sI sI sF sF sI}", "step", &step, "tokens", &tokens, "epoch", &epoch,
                    "elapsed", &elapsed, "run_id", &run))
        bad = 1;
    ts->step = (long)step;
    ts->tokens = (long)tokens;
    ts->epoch = epoch;
    ts->elapsed = elapsed;
    ts->run_id = (long)run;
    json_t *sid = json_object_get(o, "store_id");
    snprintf(ts->store_id, sizeof ts->store_id, "%s",
             json_is_string(sid) ? json_string_value(sid) : "");
    json_t *bv = json_object_get(o, "best_val");
    ts->best_val = json_is_string(bv) ? strtod(json_string_value(bv), NULL) : NAN;
    ts->model_rng.state = get_u64(o, "model_rng_state", &bad);
    ts->model_rng.inc = get_u64(o, "model_rng_inc", &bad);
    ts->data_rng.state = get_u64(o, "data_rng_state", &bad);
    ts->data_rng.inc = get_u64(o, "data_rng_inc", &bad);
    for (int i = 0; i < 4; i++) {
        char key[16];
        snprintf(key, sizeof key, "batcher%d", i);
        ts->batcher[i] = get_u64(o, key, &bad);
    }
    json_t *sb = json_object_get(o, "sched_best");
    ts->sched.best = json_is_string(sb) ? strtod(json_string_value(sb), NULL) : INFINITY;
    ts->sched.bad_evals = (int)json_integer_value(json_object_get(o, "sched_bad_evals"));
    json_t *sc = json_object_get(o, "sched_scale");
    ts->sched.plateau_scale = sc ? (float)json_number_value(sc) : 1.0f;
    json_t *wl = json_object_get(o, "window_loss");
    json_t *wn = json_object_get(o, "window_steps");
    ts->window_loss = json_is_string(wl) ? strtod(json_string_value(wl), NULL) : 0;
    ts->window_steps = json_is_integer(wn) && json_is_string(wl) && isfinite(ts->window_loss)
                       ? (int)json_integer_value(wn) : 0;
    if (ts->window_steps < 0)
        ts->window_steps = 0;
    if (!ts->window_steps)
        ts->window_loss = 0;
    json_decref(o);
    return bad ? -1 : 0;
}

/* FNV-1a of the optimizer's moments (m, then v, in ParamSet order, each as written):
 * "moments_fnv1a", checked on reading as the weights' checksum is. */
static void moments_hash(const ParamSet *ps, const Optimizer *opt, char *hex, size_t cap)
{
    unsigned long long h = TOKENIZER_FNV_SEED;
    for (int i = 0; i < ps->n; i++) {
        size_t bytes = ps->info[i].numel * sizeof(float);
        if (opt->m)
            h = tokenizer_fnv1a(opt->m + ps->info[i].offset, bytes, h);
        if (opt->v)
            h = tokenizer_fnv1a(opt->v + ps->info[i].offset, bytes, h);
    }
    snprintf(hex, cap, "%016llx", h);
}

static int write_optim(const char *path, const Model *m, const Optimizer *opt, char *err)
{
    SafeTensorsWriter *w = safetensors_writer_create();
    if (!w)
        return err_set(err, LM_ENOMEM, "out of memory writing the optimizer state");
    const ParamSet *ps = &m->params;
    int rc = LM_OK;
    char name[PARAMS_NAME_LEN + 16], buf[32];
    for (int i = 0; i < ps->n && !rc; i++) {
        const ParamInfo *p = &ps->info[i];
        long shape[PARAMS_MAX_DIM];
        for (int k = 0; k < p->ndim; k++)
            shape[k] = p->shape[k];
        if (opt->m) {
            snprintf(name, sizeof name, "exp_avg.%s", p->name);
            rc = safetensors_writer_add(w, name, ST_F32, p->ndim, shape, opt->m + p->offset);
        }
        if (opt->v && !rc) {
            snprintf(name, sizeof name, "exp_avg_sq.%s", p->name);
            rc = safetensors_writer_add(w, name, ST_F32, p->ndim, shape, opt->v + p->offset);
        }
    }
    snprintf(buf, sizeof buf, "%ld", opt->t);
    if (!rc)
        rc = safetensors_writer_meta(w, "t", buf);
    if (!rc)
        rc = safetensors_writer_meta(w, "optimizer", optim_kind_name(opt->kind));
    char hbuf[32];
    moments_hash(ps, opt, hbuf, sizeof hbuf);
    if (!rc)
        rc = safetensors_writer_meta(w, "moments_fnv1a", hbuf);
    if (rc)
        rc = err_set(err, LM_ENOMEM, "cannot assemble the optimizer state");
    else
        rc = safetensors_writer_write(w, path, err);
    safetensors_writer_destroy(w);
    return rc;
}

/* FNV-1a of every parameter's float bytes in ParamSet order: stored as "weights_fnv1a" so
 * bytes damaged after the write (a bad disk, a stray edit) are caught on load. */
static void weights_hash(const ParamSet *ps, char *hex, size_t cap)
{
    unsigned long long h = TOKENIZER_FNV_SEED;
    for (int i = 0; i < ps->n; i++)
        h = tokenizer_fnv1a(ps->data + ps->info[i].offset, ps->info[i].numel * sizeof(float), h);
    snprintf(hex, cap, "%016llx", h);
}

/* One metadata entry; the only refusals are text that is not UTF-8 (JSON cannot hold it)
 * and memory, and the message says which. */
static int add_meta(SafeTensorsWriter *w, const char *key, const char *value, char *err)
{
    int rc = safetensors_writer_meta(w, key, value);
    if (rc == LM_EARG) {
        long bad = 0;
        for (const unsigned char *p = (const unsigned char *)value; *p; p++)
            if (*p >= 0x80) { bad = (long)(p - (const unsigned char *)value) + 1; break; }
        return err_set(err, LM_EFORMAT, "cannot write the checkpoint's '%s' metadata: it is "
                       "not valid UTF-8 (near byte %ld); a text setting such as the run name "
                       "holds bytes that are not text: set it again with plain text", key, bad);
    }
    if (rc)
        return err_set(err, LM_ENOMEM, "out of memory assembling the checkpoint's '%s' "
                       "metadata", key);
    return LM_OK;
}

/* Adds every parameter under naming k; for the reference names also what the reference
 * state_dict holds beyond lmlab's parameters: decoder.weight when tied (the reference
 * lists the shared tensor under both names) and the (5000, 1, d) sinusoidal buffer,
 * whose table is returned in *pe for the caller to free after the write. */
static int add_weights(SafeTensorsWriter *w, const Model *m, NamesKind k, float **pe)
{
    const ParamSet *ps = &m->params;
    int rc = LM_OK, enc = -1, dec = -1;
    char name[ST_NAME_LEN];
    for (int i = 0; i < ps->n && !rc; i++) {
        const ParamInfo *p = &ps->info[i];
        long shape[PARAMS_MAX_DIM];
        for (int j = 0; j < p->ndim; j++)
            shape[j] = p->shape[j];
        enc = strcmp(p->name, "encoder.weight") ? enc : i;
        dec = strcmp(p->name, "decoder.weight") ? dec : i;
        names_map(p->name, k, name, sizeof name);
        rc = safetensors_writer_add(w, name, ST_F32, p->ndim, shape, ps->data + p->offset);
    }
    if (rc || k != NAMES_REFERENCE)
        return rc;
    if (dec < 0 && enc >= 0) {
        long shape[2] = {ps->info[enc].shape[0], ps->info[enc].shape[1]};
        rc = safetensors_writer_add(w, "decoder.weight", ST_F32, 2, shape,
                                    ps->data + ps->info[enc].offset);
    }
    long shape[3];
    rc = rc ? rc : names_reference_pe(m, pe, shape);
    if (!rc && *pe)
        rc = safetensors_writer_add(w, NAMES_PE, ST_F32, 3, shape, *pe);
    return rc;
}

static int save_weights(const char *path, const Model *m, const char *tokenizer_json,
                        const TrainState *ts, NamesKind names, char *err)
{
    int rc;
    SafeTensorsWriter *w = safetensors_writer_create();
    char *cfg = config_to_text(&m->cfg), *state = ts ? state_to_json(ts) : NULL;
    float *pe = NULL;
    if (!w || !cfg || (ts && !state)) {
        rc = err_set(err, LM_ENOMEM, "out of memory writing a checkpoint");
        goto done;
    }
    rc = add_weights(w, m, names, &pe);
    char vbuf[32], hbuf[32];
    snprintf(vbuf, sizeof vbuf, "%d", m->vocab);
    weights_hash(&m->params, hbuf, sizeof hbuf);
    if (rc)
        rc = err_set(err, rc, "cannot assemble the checkpoint's tensors (%s)", err_name(rc));
    rc = rc ? rc : add_meta(w, "format", CHECKPOINT_FORMAT, err);
    rc = rc ? rc : add_meta(w, "weights_fnv1a", hbuf, err);
    rc = rc ? rc : add_meta(w, "config", cfg, err);
    rc = rc ? rc : add_meta(w, "vocab", vbuf, err);
    char kernels[64];   /* what the numbers depend on besides the settings (issue 35) */
    rc = rc ? rc : add_meta(w, "kernels", sysinfo_blas_kernels(kernels, sizeof kernels), err);
    if (!rc && names == NAMES_REFERENCE)
        rc = add_meta(w, "names", "reference", err);
    if (!rc && tokenizer_json)
        rc = add_meta(w, "tokenizer", tokenizer_json, err);
    if (!rc && state)
        rc = add_meta(w, "state", state, err);
    if (!rc)
        rc = safetensors_writer_write(w, path, err);
done:
    safetensors_writer_destroy(w);
    free(cfg);
    free(state);
    free(pe);
    return rc;
}

int checkpoint_save(const char *path, const Model *m, const Optimizer *opt,
                    const char *tokenizer_json, const TrainState *ts, char *err)
{
    if (opt) {
        char op[1024];
        checkpoint_optim_path(path, op, sizeof op);
        int rc = write_optim(op, m, opt, err);
        if (rc)
            return rc;
    }
    return save_weights(path, m, tokenizer_json, ts, NAMES_LMLAB, err);
}

int checkpoint_save_names(const char *path, const Model *m, const char *tokenizer_json,
                          NamesKind names, char *err)
{
    if (names == NAMES_REFERENCE) {
        int rc = names_reference_check(&m->cfg, err);
        if (rc)
            return rc;
    }
    return save_weights(path, m, tokenizer_json, NULL, names, err);
}

void checkpoint_info_free(CheckpointInfo *info)
{
    if (!info)
        return;
    free(info->tokenizer_json);
    info->tokenizer_json = NULL;
}

/* What path's first bytes say it is (torchfile_sniff), so a torch.save file, current or
 * legacy, goes to the torch.save reader, which reads the one and names the other.
 * Opened through regfile, so a FIFO or a device never hangs here; anything else is left
 * to safetensors_open, which says what is wrong with it. */
static int sniff_file(const char *path)
{
    unsigned char head[512];
    char err[LM_ERR_LEN];
    int fd;
    size_t size;
    if (regfile_open(path, &fd, &size, err))
        return TORCHFILE_OTHER;
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    return n > 0 ? torchfile_sniff(head, (size_t)n) : TORCHFILE_OTHER;
}

int checkpoint_open(const char *path, CheckpointInfo *info, SafeTensors **st, char *err)
{
    memset(info, 0, sizeof *info);
    info->ts.best_val = NAN;
    int kind = sniff_file(path);
    int rc = kind == TORCHFILE_ZIP || kind == TORCHFILE_LEGACY ? torchfile_open(path, st, err)
                                                               : safetensors_open(path, st, err);
    if (rc)
        return rc;
    const char *fmt = safetensors_meta(*st, "format");
    int ours = fmt && !strcmp(fmt, CHECKPOINT_FORMAT);
    const char *cfg = ours ? safetensors_meta(*st, "config") : NULL;
    if (fmt && !ours && !strncmp(fmt, "lmlab-", 6)) {
        /* fmt lives in *st: format the message before closing it */
        err_set(err, LM_EFORMAT, "%s: checkpoint format '%.100s' is not supported by this "
                "lmlab (%s): it was written by another lmlab version", path, fmt,
                CHECKPOINT_FORMAT);
        safetensors_close(*st);
        *st = NULL;
        return LM_EFORMAT;
    }
    if (cfg) {
        config_defaults(&info->cfg);
        char e2[LM_ERR_LEN];
        if (config_from_text(&info->cfg, cfg, e2)) {
            safetensors_close(*st);
            *st = NULL;
            return err_set(err, LM_EFORMAT, "%s: its configuration is invalid: %s", path, e2);
        }
        info->has_config = 1;
    }
    const char *v = ours ? safetensors_meta(*st, "vocab") : NULL;
    const StTensor *emb = safetensors_find(*st, "encoder.weight");
    if (!emb)
        emb = safetensors_find(*st, "lm_head.weight");
    info->vocab = v ? atoi(v) : emb && emb->ndim == 2 ? (int)emb->shape[0] : 0;
    const char *kern = ours ? safetensors_meta(*st, "kernels") : NULL;
    snprintf(info->kernels, sizeof info->kernels, "%s", kern ? kern : "");
    const char *tok = ours ? safetensors_meta(*st, "tokenizer") : NULL;
    if (tok && !(info->tokenizer_json = strdup(tok))) {
        safetensors_close(*st);
        *st = NULL;
        return err_set(err, LM_ENOMEM, "out of memory");
    }
    const char *state = ours ? safetensors_meta(*st, "state") : NULL;
    if (state) {
        if (state_from_json(state, &info->ts)) {
            checkpoint_info_free(info);
            safetensors_close(*st);
            *st = NULL;
            return err_set(err, LM_EFORMAT, "%s: the training state in its metadata is "
                           "damaged; load the weights with `import` instead", path);
        }
        info->has_state = 1;
    }
    return LM_OK;
}

static void shape_text(char *buf, size_t cap, int ndim, const long *shape)
{
    size_t o = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < ndim && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%ld", i ? "," : "", shape[i]);
    if (o < cap)
        snprintf(buf + o, cap - o, ")");
}

/* Whether st holds every parameter of m (names as checkpoint_read_weights maps them,
 * after prefix) with m's shape, reading no data: run on a model_describe'd model before
 * anything is allocated for a file. LM_OK, or LM_EFORMAT naming the first tensor that is
 * missing or of another shape. */
static int checkpoint_check_tensors(const Model *m, const SafeTensors *st, const char *prefix,
                             char *err)
{
    const ParamSet *ps = &m->params;
    NamesKind names = names_detect(st);
    char name[PARAMS_NAME_LEN + 64], mapped[PARAMS_NAME_LEN + 32];
    for (int i = 0; i < ps->n; i++) {
        const ParamInfo *p = &ps->info[i];
        names_map(p->name, names, mapped, sizeof mapped);
        snprintf(name, sizeof name, "%s%s", prefix, mapped);
        const StTensor *t = safetensors_find(st, name);
        if (!t)
            return names_mismatch(m, st, name, err);
        long want[PARAMS_MAX_DIM];
        int same = t->ndim == p->ndim;
        for (int k = 0; k < p->ndim; k++) {
            want[k] = p->shape[k];
            same = same && t->shape[k] == want[k];
        }
        if (!same) {
            char a[64], b[64];
            shape_text(a, sizeof a, t->ndim, t->shape);
            shape_text(b, sizeof b, p->ndim, want);
            return err_set(err, LM_EFORMAT, "tensor '%s' has shape %s but this model needs %s: "
                           "the checkpoint is from another model shape", name, a, b);
        }
    }
    return LM_OK;
}

int checkpoint_check_fits(const Config *cfg, int V, const SafeTensors *st, const char *prefix,
                          char *err)
{
    Model *shape = model_describe(cfg, V, err);
    if (!shape)
        return LM_EARG;
    int rc = checkpoint_check_tensors(shape, st, prefix, err);
    model_destroy(shape);
    return rc;
}

int checkpoint_read_weights(Model *m, const SafeTensors *st, const char *prefix, char *err)
{
    ParamSet *ps = &m->params;
    int rc = checkpoint_check_tensors(m, st, prefix, err);
    if (rc)
        return rc;
    NamesKind names = names_detect(st);
    char name[PARAMS_NAME_LEN + 64], mapped[PARAMS_NAME_LEN + 32];
    for (int i = 0; i < ps->n; i++) {
        const ParamInfo *p = &ps->info[i];
        names_map(p->name, names, mapped, sizeof mapped);
        snprintf(name, sizeof name, "%s%s", prefix, mapped);
        if ((rc = safetensors_read_f32(st, name, params_data(ps, i), p->numel, err)))
            return rc;
    }
    const char *fmt = safetensors_meta(st, "format");
    const char *want = prefix[0] || !fmt || strcmp(fmt, CHECKPOINT_FORMAT)
                     ? NULL : safetensors_meta(st, "weights_fnv1a");
    char have[32];
    weights_hash(ps, have, sizeof have);
    if (want && strcmp(want, have))
        return err_set(err, LM_EFORMAT, "the weights do not match the checksum written with "
                       "them (%.20s, now %s): the file was damaged after it was saved", want,
                       have);
    return LM_OK;
}

int checkpoint_read_optim(const char *path, const Model *m, Optimizer *opt, char *err)
{
    char op[1024];
    checkpoint_optim_path(path, op, sizeof op);
    struct stat sb;
    if (stat(op, &sb) && errno == ENOENT)
        return err_set(err, LM_EIO, "%s: no such file", op);
    SafeTensors *st;
    int rc = safetensors_open(op, &st, err);
    if (rc) {
        char e2[LM_ERR_LEN];
        snprintf(e2, sizeof e2, "%.300s", err);
        return err_set(err, LM_EFORMAT, "%.200s", e2);
    }
    const ParamSet *ps = &m->params;
    char name[PARAMS_NAME_LEN + 16];
    for (int i = 0; i < ps->n && !rc; i++) {
        const ParamInfo *p = &ps->info[i];
        if (opt->m) {
            snprintf(name, sizeof name, "exp_avg.%s", p->name);
            rc = safetensors_read_f32(st, name, opt->m + p->offset, p->numel, err);
        }
        if (opt->v && !rc) {
            snprintf(name, sizeof name, "exp_avg_sq.%s", p->name);
            rc = safetensors_read_f32(st, name, opt->v + p->offset, p->numel, err);
        }
    }
    const char *t = safetensors_meta(st, "t"), *want = safetensors_meta(st, "moments_fnv1a");
    char have[32];
    moments_hash(ps, opt, have, sizeof have);
    if (!rc && want && strcmp(want, have))   /* files before the checksum have none */
        rc = err_set(err, LM_EFORMAT, "%s: the moments do not match the checksum written with "
                     "them (%.20s, now %s): the file was damaged after it was saved", op, want,
                     have);
    if (!rc)
        opt->t = t ? atol(t) : 0;
    safetensors_close(st);
    return rc;
}

int checkpoint_find(const char *dir, const char *which, char *out, size_t cap)
{
    struct stat st;
    if (!strcmp(which, "best") && !runfiles_path(out, cap, dir, RUNFILE_BEST, 0) &&
        stat(out, &st) == 0)
        return 0;
    long newest = -1, step;
    int tmp;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)))
        if (runfiles_parse(e->d_name, &step, &tmp) == RUNFILE_STEP && !tmp && step > newest)
            newest = step;
    closedir(d);
    if (newest < 0)
        return -1;
    return runfiles_path(out, cap, dir, RUNFILE_STEP, newest);
}

/* Whether a checkpoint belongs to run run_id of store store_id, from the run id and
 * store id its metadata records. LM_OK when both match; LM_ESTATE when it names another
 * run or store (the message says which: the folder holds another run's weights);
 * 1 when the file does not record them (written by an older lmlab or
 * not by lmlab), which the caller reports as a warning. */
static int checkpoint_check_owner(const CheckpointInfo *info, const char *path, const char *store_id,
                           long run_id, char *err)
{
    if (!info->has_state || !info->ts.store_id[0] || info->ts.run_id <= 0) {
        err_set(err, LM_OK, "%s does not record which run wrote it (an older or foreign "
                "file): it cannot be checked against run %ld", path, run_id);
        return 1;
    }
    if (info->ts.run_id != run_id || strcmp(info->ts.store_id, store_id ? store_id : ""))
        return err_set(err, LM_ESTATE, "%s was written by run %ld of store %s, not by run "
                       "%ld of this store (%s): the folder holds another run's weights; "
                       "open the file by its path if you mean it", path, info->ts.run_id,
                       info->ts.store_id, run_id, store_id ? store_id : "?");
    return LM_OK;
}

long checkpoint_count_nonfinite(const Model *m, char *first, size_t cap)
{
    const ParamSet *ps = &m->params;
    long n = 0;
    if (cap) first[0] = 0;
    for (int i = 0; i < ps->n; i++) {
        const float *w = ps->data + ps->info[i].offset;
        for (size_t k = 0; k < ps->info[i].numel; k++)
            if (!isfinite(w[k])) {
                if (!n && cap) snprintf(first, cap, "%s", ps->info[i].name);
                n++;
            }
    }
    return n;
}

int checkpoint_verify_owner(const char *path, const char *store_id, long run_id, char *err)
{
    CheckpointInfo info;
    SafeTensors *st = NULL;
    int rc = checkpoint_open(path, &info, &st, err);
    if (rc)
        return rc;
    rc = checkpoint_check_owner(&info, path, store_id, run_id, err);
    checkpoint_info_free(&info);
    safetensors_close(st);
    return rc;
}
