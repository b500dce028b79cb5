/* tboard.c — runs as TensorBoard event files (see tboard.h): a run's name, lineage and
 * settings as text, then its summaries in step order as tboard_src.c reads them from the
 * store (written as they are read), each encoded as an Event with libprotobuf-c, the
 * records framed with TensorFlow's masked CRC-32C (tensorflow/core/lib/hash/crc32c.h:
 * Mask); one folder per run, renamed into place when whole. Not the command
 * (commands/cmd_export.c). */
#include "tboard.h"
#include "tboard_src.h"

#include "err.h"
#include "series.h"
#include "strbuf.h"
#include "tensorboard.pb-c.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- record framing ------------------------------------------------------------------ */

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)   /* CRC-32C (Castagnoli), reflected polynomial 0x82F63B78 */
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[i] = c;
    }
}

static uint32_t masked_crc(const uint8_t *p, size_t n)
{
    pthread_once(&crc_once, crc_init);
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) c = crc_table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    c ^= 0xFFFFFFFFu;
    return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static void put_le(uint8_t *b, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) b[i] = (uint8_t)(v >> (8 * i));
}

/* One record: length, its CRC, the data, its CRC. 0 or -1 (errno). */
static int write_record(FILE *f, const uint8_t *data, size_t n)
{
    uint8_t head[12], tail[4];
    put_le(head, n, 8);
    put_le(head + 8, masked_crc(head, 8), 4);
    put_le(tail, masked_crc(data, n), 4);
    return fwrite(head, 1, 12, f) == 12 && fwrite(data, 1, n, f) == n &&
           fwrite(tail, 1, 4, f) == 4 ? 0 : -1;
}

static int write_event(FILE *f, Tensorflow__Event *ev)
{
    size_t n = tensorflow__event__get_packed_size(ev);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) return -1;
    tensorflow__event__pack(ev, buf);
    int rc = write_record(f, buf, n);
    free(buf);
    return rc;
}

/* ---- text: the run and its settings -------------------------------------------------- */

/* Text for a markdown table cell: `|`, backslash and markdown's marks escaped, newlines
 * as spaces. */
static void bcell(StrBuf *b, const char *s)
{
    for (; *s; s++) {
        if (strchr("|\\`*_[]<>#", *s)) strbuf_printf(b, "\\%c", *s);
        else strbuf_printf(b, "%c", *s == '\n' || *s == '\r' || *s == '\t' ? ' ' : *s);
    }
}

static void time_iso(double t, char *buf, size_t cap)
{
    time_t s = (time_t)t;
    struct tm tm;
    if (t <= 0 || !gmtime_r(&s, &tm)) snprintf(buf, cap, "-");
    else strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The run: its name, id, status, model, data, times, group, and its lineage (the chain of
 * fork parents, each with the step it was forked at). malloc'd; NULL out of memory. */
static char *run_text(RunStore *st, const RunRow *r)
{
    StrBuf b = {0};
    char when[32], ended[32];
    time_iso(r->created, when, sizeof when);
    time_iso(r->ended, ended, sizeof ended);
    strbuf_printf(&b, "| | |\n|---|---|\n| run | #%ld ", r->id);
    bcell(&b, r->name);
    strbuf_printf(&b, " |\n| status | ");
    bcell(&b, r->status);
    if (r->reason[0]) {
        strbuf_printf(&b, ": ");
        bcell(&b, r->reason);
    }
    strbuf_printf(&b, " |\n| model | ");
    bcell(&b, r->model);
    strbuf_printf(&b, " (%ld parameters) |\n| data | ", r->params);
    bcell(&b, r->data_name);
    strbuf_printf(&b, " |\n| created | %s |\n| ended | %s |\n| steps | %ld |\n", when, ended,
            r->last_step);
    if (r->group[0]) {
        strbuf_printf(&b, "| group | ");
        bcell(&b, r->group);
        strbuf_printf(&b, " |\n");
    }
    strbuf_printf(&b, "| lineage | ");
    if (!r->parent_run) strbuf_printf(&b, "trained from scratch");
    long run = r->parent_run, step = r->parent_step;
    int init = r->parent_init;
    for (int depth = 0; run > 0 && depth < 32; depth++) {
        RunRow p;
        char err[LM_ERR_LEN];
        strbuf_printf(&b, "%s%s #%ld at step %ld", depth ? ", which was " : "",
                      init ? "initialised from the weights of" : "forked from", run, step);
        if (runstore_get(st, run, &p, err)) {
            strbuf_printf(&b, " (deleted)");
            break;
        }
        strbuf_printf(&b, " (");
        bcell(&b, p.name);
        strbuf_printf(&b, ")");
        run = p.parent_run;
        step = p.parent_step;
        init = p.parent_init;
        runstore_row_free(&p);
    }
    strbuf_printf(&b, " |\n");
    if (b.oom) { free(b.p); return NULL; }
    return b.p;
}

/* The settings as a two-column table, in the stored order. */
static char *settings_text(const char *config)
{
    StrBuf b = {0};
    strbuf_printf(&b, "| setting | value |\n|---|---|\n");
    for (const char *p = config; p && *p;) {
        size_t k = strcspn(p, "\n");
        const char *eq = memchr(p, '=', k);
        if (k && *p != '#' && eq) {
            char key[256], val[1024];
            snprintf(key, sizeof key, "%.*s", (int)(eq - p), p);
            snprintf(val, sizeof val, "%.*s", (int)(k - (size_t)(eq - p) - 1), eq + 1);
            strbuf_printf(&b, "| ");
            bcell(&b, key);
            strbuf_printf(&b, " | ");
            bcell(&b, val);
            strbuf_printf(&b, " |\n");
        }
        p += k + (p[k] == '\n');
    }
    if (b.oom) { free(b.p); return NULL; }
    return b.p;
}

/* ---- one run's file ------------------------------------------------------------------ */

/* One summary as an Event: a scalar, a histogram (64 buckets over [lo, hi], one bucket
 * when they are equal), or text (x NULL: the text plugin's string tensor at step 0). */
static int write_item(FILE *f, const TboardItem *x, const char *tag, const char *text,
                      double wall, TboardReport *rep)
{
    Tensorflow__Summary__Value v = TENSORFLOW__SUMMARY__VALUE__INIT, *vp = &v;
    Tensorflow__Summary sm = TENSORFLOW__SUMMARY__INIT;
    Tensorflow__Event ev = TENSORFLOW__EVENT__INIT;
    Tensorflow__HistogramProto hp = TENSORFLOW__HISTOGRAM_PROTO__INIT;
    Tensorflow__TensorProto tp = TENSORFLOW__TENSOR_PROTO__INIT;
    Tensorflow__TensorShapeProto shape = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
    Tensorflow__SummaryMetadata md = TENSORFLOW__SUMMARY_METADATA__INIT;
    Tensorflow__SummaryMetadata__PluginData pd = TENSORFLOW__SUMMARY_METADATA__PLUGIN_DATA__INIT;
    double limits[SERIES_HIST_BINS], counts[SERIES_HIST_BINS];
    ProtobufCBinaryData bytes;
    v.tag = (char *)(x ? x->tag : tag);
    sm.n_value = 1;
    sm.value = &vp;
    ev.wall_time = x ? x->wall : wall;
    ev.step = x ? x->step : 0;
    ev.what_case = TENSORFLOW__EVENT__WHAT_SUMMARY;
    ev.summary = &sm;
    if (x && x->kind == TBOARD_SCALAR) {
        v.value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_SIMPLE_VALUE;
        v.simple_value = (float)x->value;
        rep->scalars++;
    } else if (x) {
        const SeriesHist *h = x->h;
        double w = (h->hi - h->lo) / SERIES_HIST_BINS;
        int nb = w > 0 ? SERIES_HIST_BINS : 1;   /* one value: one bucket */
        for (int i = 0; i < nb; i++) {
            limits[i] = i == nb - 1 ? h->hi : h->lo + (i + 1) * w;
            counts[i] = (double)(nb == 1 ? h->num : h->counts[i]);
        }
        hp.min = h->lo;
        hp.max = h->hi;
        hp.num = (double)h->num;
        hp.sum = h->sum;
        hp.sum_squares = h->sum_sq;
        hp.n_bucket_limit = hp.n_bucket = (size_t)nb;
        hp.bucket_limit = limits;
        hp.bucket = counts;
        v.value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_HISTO;
        v.histo = &hp;
        rep->histograms++;
    } else {   /* the text plugin's summary: a scalar string tensor */
        bytes.data = (uint8_t *)text;
        bytes.len = strlen(text);
        tp.dtype = 7;   /* DT_STRING */
        tp.tensor_shape = &shape;
        tp.n_string_val = 1;
        tp.string_val = &bytes;
        pd.plugin_name = "text";
        md.plugin_data = &pd;
        v.metadata = &md;
        v.value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_TENSOR;
        v.tensor = &tp;
        rep->texts++;
    }
    return write_event(f, &ev);
}

/* name with every byte but letters, digits and ._+- as %XX, appended at buf + k. */
static void escape_name(const char *name, char *buf, size_t k, size_t cap)
{
    for (const unsigned char *p = (const unsigned char *)name; p && *p && k + 4 < cap; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("._+-", *p))
            buf[k++] = (char)*p;
        else
            k += (size_t)snprintf(buf + k, cap - k, "%%%02X", *p);
    }
    buf[k < cap ? k : cap - 1] = 0;
}

static void folder_name(long id, const char *name, char *buf, size_t cap)
{
    size_t k = (size_t)snprintf(buf, cap, "%ld%s", id, name && *name ? "-" : "");
    escape_name(name, buf, k, cap);
}

/* The run's file: the file version, the run and its settings as text, then every
 * summary in step order as tboard_src reads it. LM_OK, LM_EIO, LM_ENOMEM, LM_EDB. */
static int write_events(RunStore *st, const RunRow *r, FILE *f, TboardReport *rep, char *err)
{
    Tensorflow__Event ev = TENSORFLOW__EVENT__INIT;   /* the file version first */
    ev.wall_time = r->created;
    ev.what_case = TENSORFLOW__EVENT__WHAT_FILE_VERSION;
    ev.file_version = "brain.Event:2";
    char *run = run_text(st, r), *settings = settings_text(r->config);
    int rc = run && settings ? LM_OK : err_set(err, LM_ENOMEM, "out of memory");
    if (!rc && (write_event(f, &ev) || write_item(f, NULL, "run", run, r->created, rep) ||
                write_item(f, NULL, "settings", settings, r->created, rep)))
        rc = err_set(err, LM_EIO, "%s", strerror(errno));
    free(run);
    free(settings);
    TboardSrc *src = NULL;
    if (!rc) rc = tboard_src_open(st, r, &src, err);
    TboardItem it;
    int got = 0;
    while (!rc && (got = tboard_src_next(src, &it, err)) == 1)
        if (write_item(f, &it, NULL, NULL, 0, rep)) rc = err_set(err, LM_EIO, "%s", strerror(errno));
    if (!rc && got < 0) rc = LM_EDB;
    tboard_src_close(src);
    return rc;
}

static int write_run(RunStore *st, const RunRow *r, const char *root, TboardReport *rep,
                     char *path, size_t cap, char *err)
{
    char folder[600], host[200];
    folder_name(r->id, r->name, folder, sizeof folder);
    escape_name(r->host[0] ? r->host : "lmlab", host, 0, sizeof host);
    snprintf(path, cap, "%s/%s", root, folder);
    if (mkdir(path, 0777))
        return err_set(err, LM_EIO, "cannot create %s: %s", path, strerror(errno));
    snprintf(path, cap, "%s/%s/events.out.tfevents.%ld.%s", root, folder, (long)r->created,
             host);
    FILE *f = fopen(path, "wb");
    if (!f) return err_set(err, LM_EIO, "cannot write %s: %s", path, strerror(errno));
    int rc = write_events(st, r, f, rep, err);
    if (rc == LM_EIO) err_set(err, LM_EIO, "cannot write %s: %s", path, strerror(errno));
    int bad = fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (!rc && bad) rc = err_set(err, LM_EIO, "cannot write %s: %s", path, strerror(errno));
    return rc;
}

/* ---- the export ---------------------------------------------------------------------- */

/* Removes the export's own temporary folder: its run folders and their files (nothing
 * else is in it: it was created empty by this process). */
static void remove_tmp(const char *tmp)
{
    DIR *d = opendir(tmp);
    struct dirent *e;
    char sub[2048], file[3072];
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(sub, sizeof sub, "%s/%s", tmp, e->d_name);
        DIR *d2 = opendir(sub);
        struct dirent *f;
        while (d2 && (f = readdir(d2))) {
            if (!strcmp(f->d_name, ".") || !strcmp(f->d_name, "..")) continue;
            snprintf(file, sizeof file, "%s/%s", sub, f->d_name);
            unlink(file);
        }
        if (d2) closedir(d2);
        if (rmdir(sub)) unlink(sub);
    }
    if (d) closedir(d);
    rmdir(tmp);
}

/* dir must be new, in a folder that exists and can be written in. */
static int check_dir(const char *dir, char *err)
{
    struct stat sb;
    if (!dir || !*dir)
        return err_set(err, LM_EARG, "format=tensorboard needs dir=FOLDER, a new folder to "
                       "write one event file per run into (e.g. dir=tb)");
    if (lstat(dir, &sb) == 0)
        return err_set(err, LM_EARG, "dir=%s %s: give a new folder (the export writes one "
                       "folder per run into it and never into what is there)", dir,
                       S_ISDIR(sb.st_mode) ? "exists" : "exists and is not a folder");
    char parent[1024];
    snprintf(parent, sizeof parent, "%s", dir);
    size_t k = strlen(parent);
    while (k > 1 && parent[k - 1] == '/') parent[--k] = 0;   /* "tb/" is tb */
    char *slash = strrchr(parent, '/');
    if (!slash) snprintf(parent, sizeof parent, ".");
    else if (slash == parent) parent[1] = 0;
    else *slash = 0;
    errno = 0;
    if (stat(parent, &sb) || !S_ISDIR(sb.st_mode))
        return err_set(err, LM_EARG, "dir=%s: %s is not a folder (%s); create it first or "
                       "choose another place", dir, parent, errno ? strerror(errno) : "a file");
    if (access(parent, W_OK | X_OK))
        return err_set(err, LM_EARG, "dir=%s: cannot write in %s (%s); choose a folder you "
                       "can write in", dir, parent, strerror(errno));
    return LM_OK;
}

int tboard_export(RunStore *st, const long *ids, int n, const char *dir, TboardReport *rep,
                  char *err)
{
    TboardReport local;
    rep = rep ? rep : &local;
    memset(rep, 0, sizeof *rep);
    int rc = check_dir(dir, err);
    if (rc) return rc;
    RunRow *rows = calloc((size_t)(n > 0 ? n : 1), sizeof *rows);
    if (!rows) return err_set(err, LM_ENOMEM, "out of memory");
    int got = 0;
    for (; got < n && !rc; got++)   /* every run exists before anything is written */
        if ((rc = runstore_get(st, ids[got], &rows[got], err))) break;
    char tmp[1100], path[2200];
    snprintf(tmp, sizeof tmp, "%.1000s.tmp-%ld", dir, (long)getpid());
    while (!rc && strlen(tmp) > 1 && tmp[strlen(tmp) - 1] == '/') tmp[strlen(tmp) - 1] = 0;
    if (!rc && mkdir(tmp, 0777))
        rc = err_set(err, LM_EIO, "dir=%s: cannot create a folder next to it (%s): nothing "
                     "was written", dir, strerror(errno));
    int made = !rc;
    for (int i = 0; i < n && !rc; i++) {
        rc = write_run(st, &rows[i], tmp, rep, path, sizeof path, err);
        if (!rc && !rep->runs++)
            snprintf(rep->first, sizeof rep->first, "%s%s", dir, path + strlen(tmp));
    }
    if (!rc && rename(tmp, dir))
        rc = err_set(err, LM_EIO, "cannot rename %s to %s (%s): nothing was written", tmp, dir,
                     strerror(errno));
    if (rc && made) remove_tmp(tmp);
    if (rc) memset(rep, 0, sizeof *rep);
    for (int i = 0; i < got && i < n; i++) runstore_row_free(&rows[i]);
    free(rows);
    return rc;
}
