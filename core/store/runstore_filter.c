/* runstore_filter.c — the list filter of runstore_list: parses "key OP value" terms
 * (run columns, tags, since/until dates, any config key, any series of the registry as
 * its aggregate: loss<2, val_loss.min<1.6, gate/0/1>0.5), turns column terms into SQL
 * fragments whose values are bound, matches config terms against a run's config text; and
 * parses "key=value" config texts for compare and export. Not a query language: terms are
 * ANDed, there are no parentheses or ORs; no SQL text is ever built from user input. */
#include "runstore.h"
#include "private/runstore_impl.h"
#include "err.h"
#include "runstore_row.h"
#include "config.h"
#include "series.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- list filters --------------------------------------------------------------------- */

enum { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_HAS };

static const struct { const char *key, *col; int kind; } FILTER_KEYS[] = {
    {"id", "id", K_NUM}, {"name", "name", K_TEXT}, {"status", "status", K_TEXT},
    {"model", "model", K_TEXT}, {"data", "data_name", K_TEXT},
    {"tokenizer", "tokenizer", K_TEXT}, {"machine", "machine", K_TEXT},
    {"git", "git_rev", K_TEXT}, {"host", "host", K_TEXT}, {"params", "params", K_NUM},
    {"steps", "last_step", K_NUM}, {"best", "best_val", K_NUM},
    {"final", "final_val", K_NUM}, {"sweep", "sweep_id", K_NUM}, {"tag", NULL, K_TAG}, {"note", NULL, K_NOTE},
    {"since", NULL, K_SINCE}, {"until", NULL, K_UNTIL},
    {"group", "coalesce((SELECT g.name FROM run_groups g WHERE g.run_id=runs.id), '')",
     K_TEXT},   /* its seed group (runstore_group.c); "" when none */
};
const char *runstore_filter_key(int i)
{
    return i >= 0 && i < (int)(sizeof FILTER_KEYS / sizeof *FILTER_KEYS) ? FILTER_KEYS[i].key
                                                                        : NULL;
}

static const char *OP_TEXT[] = {"=", "!=", "<", "<=", ">", ">=", "~"};
static const char *OP_SQL[] = {"=", "IS NOT", "<", "<=", ">", ">="};

int runstore_parse_number(const char *v, double *x)
{
    char *end;
    errno = 0;
    *x = strtod(v, &end);
    return *v && !*end && !errno && !isnan(*x);
}

/* YYYY-MM-DD[THH:MM] in local time, or N[dhm] meaning that long ago. */
static int parse_when(const char *v, double *t)
{
    int y, mo, d, h = 0, mi = 0, n = 0;
    char unit;
    if (sscanf(v, "%d%c%n", &y, &unit, &n) == 2 && !v[n] && y > 0 &&
        (unit == 'd' || unit == 'h' || unit == 'm')) {
        *t = sysinfo_wall() - y * (unit == 'd' ? 86400.0 : unit == 'h' ? 3600.0 : 60.0);
        return 1;
    }
    n = 0;
    int k = sscanf(v, "%4d-%2d-%2d%n", &y, &mo, &d, &n);
    if (k != 3) return 0;
    if (v[n] && (sscanf(v + n, "T%2d:%2d", &h, &mi) != 2)) return 0;
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
                    .tm_min = mi, .tm_isdst = -1};
    time_t tt = mktime(&tm);
    *t = (double)tt;
    return tt != (time_t)-1 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31;
}

static int bad_term(const char *term, int len, const char *why, char *err)
{
    return err_set(err, LM_EARG, "invalid filter term '%.*s': %s (use key OP value with OP one"
                   " of = != < <= > >= ~; keys: id name status model data tag group note since until"
                   " params steps best final sweep, or any config key)", len, term, why);
}

/* Parses one term at *p (advancing *p); classifies the key. */
static int parse_term(const char **pp, Term *t, char *err)
{
    const char *start = *pp, *p = start;
    size_t k = 0;
    while (*p && !isspace((unsigned char)*p) && !strchr("=!<>~", *p) && k < sizeof t->key - 1)
        t->key[k++] = *p++;
    t->key[k] = 0;
    int len = (int)strcspn(start, " \t\n");
    static const int try_ops[] = {OP_NE, OP_LE, OP_GE, OP_EQ, OP_LT, OP_GT, OP_HAS};
    int op = -1;
    for (int i = 0; i < 7 && op < 0; i++)
        if (!strncmp(p, OP_TEXT[try_ops[i]], strlen(OP_TEXT[try_ops[i]]))) op = try_ops[i];
    if (op < 0) return bad_term(start, len, "no operator", err);
    p += strlen(OP_TEXT[op]);
    int ok = k > 0 && (isalpha((unsigned char)t->key[0]) || t->key[0] == '_');
    for (size_t i = 0; i < k; i++)   /* '/' and ':' name series: gate/0/1 */
        ok = ok && (isalnum((unsigned char)t->key[i]) || strchr("_.-/:", t->key[i]));
    if (!ok) return bad_term(start, len, "bad key", err);
    const char *v = p, *vend;
    if (*p == '"') {
        v = ++p;
        if (!(vend = strchr(p, '"'))) return bad_term(start, (int)strlen(start),
                                                      "unclosed quote", err);
        p = vend + 1;
        len = (int)(p - start);
    } else {
        vend = v + strcspn(v, " \t\n");
        p = vend;
        if (vend == v) return bad_term(start, len, "no value", err);
    }
    snprintf(t->val, sizeof t->val, "%.*s", (int)(vend - v), v);
    t->op = op;
    t->is_num = runstore_parse_number(t->val, &t->num);
    *pp = p;
    return LM_OK;
}

static int classify_term(Term *t, const char *term, char *err)
{
    int len = (int)strcspn(term, " \t\n");
    t->kind = K_CONFIG;
    t->col = NULL;
    for (size_t i = 0; i < sizeof FILTER_KEYS / sizeof *FILTER_KEYS; i++)
        if (!strcmp(t->key, FILTER_KEYS[i].key)) {
            t->kind = FILTER_KEYS[i].kind;
            t->col = FILTER_KEYS[i].col;
        }
    SeriesRef ref;
    SeriesRegAgg agg;
    if (t->kind == K_CONFIG && !config_find_key(t->key) &&   /* a setting wins: lr */
        !runstore_series_ref(t->key, &ref, &agg, NULL)) {     /* a series: its aggregate */
        runstore_series_value_sql(&ref, agg, t->series_sql, sizeof t->series_sql);
        t->kind = K_NUM;
        t->col = t->series_sql;
    }
    if (t->kind == K_NUM && t->op == OP_HAS)
        return bad_term(term, len, "~ compares text, not numbers", err);
    const ConfigKey *ck = t->kind == K_CONFIG ? config_find_key(t->key) : NULL;
    int numeric = t->kind == K_NUM || (ck && (ck->type == CFG_INT || ck->type == CFG_FLOAT));
    if (numeric && t->op != OP_HAS && !t->is_num) {   /* would match nothing, silently */
        char why[200];
        snprintf(why, sizeof why, "%s takes a number, not '%.100s'", t->key, t->val);
        return bad_term(term, len, why, err);
    }
    if (t->kind == K_NOTE && t->op != OP_HAS)
        return bad_term(term, len, "note takes ~ (a note of the run or its sweep contains)", err);
    if (t->kind == K_TAG && t->op != OP_EQ && t->op != OP_NE && t->op != OP_HAS)
        return bad_term(term, len, "tag takes = (has), != (lacks) or ~ (a tag contains)", err);
    if (t->kind == K_SINCE || t->kind == K_UNTIL) {
        if (t->op != OP_EQ) return bad_term(term, len, "since/until take =", err);
        if (!parse_when(t->val, &t->num))
            return bad_term(term, len, "dates are YYYY-MM-DD[THH:MM] or Nd/Nh/Nm", err);
    }
    return LM_OK;
}

/* Appends the SQL fragment of one term (constant text only; the value is bound). */
static void term_sql(const Term *t, char *sql, size_t cap)
{
    size_t n = strlen(sql);
    if (t->kind == K_TAG && t->op == OP_HAS)   /* `tags~base`: a tag contains it */
        snprintf(sql + n, cap - n, " AND instr(lower(coalesce(tags,'')), lower(?)) > 0");
    else if (t->kind == K_TAG)
        snprintf(sql + n, cap - n, " AND instr(',' || coalesce(tags,'') || ',', ',' || ? ||"
                 " ',') %s 0", t->op == OP_EQ ? ">" : "=");
    else if (t->kind == K_NOTE)   /* notes table: schema step 7 (runstore_track.c) */
        snprintf(sql + n, cap - n, " AND EXISTS (SELECT 1 FROM notes nt WHERE (nt.run_id ="
                 " runs.id OR nt.sweep_id = runs.sweep_id) AND instr(lower(nt.text), lower(?)) > 0)");
    else if (t->kind == K_SINCE || t->kind == K_UNTIL)
        snprintf(sql + n, cap - n, " AND created %s ?", t->kind == K_SINCE ? ">=" : "<");
    else if (t->op == OP_HAS)
        snprintf(sql + n, cap - n, " AND instr(lower(%s), lower(?)) > 0", t->col);
    else
        snprintf(sql + n, cap - n, " AND %s %s ?", t->col, OP_SQL[t->op]);
}

static int term_bind(const Term *t, sqlite3_stmt *st, int i)
{
    if (t->kind == K_SINCE || t->kind == K_UNTIL || t->kind == K_NUM)
        sqlite3_bind_double(st, i, t->num);
    else
        sqlite3_bind_text(st, i, t->val, -1, SQLITE_TRANSIENT);
    return i + 1;
}

/* A config term against a run's config text (missing key: no match). */
static int term_match_config(const Term *t, const char *config)
{
    char v[256];
    double x;
    if (!runstore_config_value(config, t->key, v, sizeof v)) return 0;
    if (t->op == OP_HAS) return strcasestr(v, t->val) != NULL;
    int c;
    if (t->is_num && runstore_parse_number(v, &x)) c = x < t->num ? -1 : x > t->num;
    else c = strcmp(v, t->val);
    switch (t->op) {
    case OP_EQ: return c == 0;
    case OP_NE: return c != 0;
    case OP_LT: return c < 0;
    case OP_LE: return c <= 0;
    case OP_GT: return c > 0;
    default: return c >= 0;
    }
}


int runstore_parse_filter(const char *filter, Term *terms, int *nt, char *err)
{
    const char *p = filter ? filter : "";
    *nt = 0;
    for (;;) {
        while (isspace((unsigned char)*p)) p++;
        if (!*p) return LM_OK;
        if (*nt == MAX_TERMS) return err_set(err, LM_EARG, "too many filter terms (max %d)",
                                             MAX_TERMS);
        const char *start = p;
        Term *t = &terms[*nt];
        memset(t, 0, sizeof *t);
        int status = parse_term(&p, t, err);
        if (!status) status = classify_term(t, start, err);
        if (status) return status;
        (*nt)++;
    }
}

int runstore_config_terms_match(const Term *terms, int nt, const char *config)
{
    for (int i = 0; i < nt; i++)
        if (terms[i].kind == K_CONFIG && !term_match_config(&terms[i], config)) return 0;
    return 1;
}

/* Prepares "SELECT <what> FROM runs WHERE 1 <sql terms><tail>" with the terms bound;
 * *next receives the next free parameter index. */
int runstore_list_prepare(RunStore *s, const char *what, const Term *terms, int nt,
                          const char *tail, sqlite3_stmt **st, int *next, char *err)
{
    char sql[8192];
    snprintf(sql, sizeof sql, "SELECT %s FROM runs WHERE 1", what);
    for (int i = 0; i < nt; i++)
        if (terms[i].kind != K_CONFIG) term_sql(&terms[i], sql, sizeof sql);
    snprintf(sql + strlen(sql), sizeof sql - strlen(sql), "%s", tail);
    int status = prep(s, sql, st, err);
    if (status) return status;
    *next = 1;
    for (int i = 0; i < nt; i++)
        if (terms[i].kind != K_CONFIG) *next = term_bind(&terms[i], *st, *next);
    return LM_OK;
}

/* ---- parsed configs ------------------------------------------------------------------- */

void runstore_cfg_free(Cfg *c)
{
    free(c->buf);
    free(c->key);
    free(c->val);
    memset(c, 0, sizeof *c);
}

static char *trim(char *a)
{
    while (isspace((unsigned char)*a)) a++;
    size_t n = strlen(a);
    while (n && isspace((unsigned char)a[n - 1])) a[--n] = 0;
    return a;
}

/* Splits "key=value" lines (blank lines and '#' comments skipped). 0 or -1 (memory). */
int runstore_cfg_parse(const char *text, Cfg *c)
{
    memset(c, 0, sizeof *c);
    int lines = 1;
    for (const char *p = text; *p; p++) lines += *p == '\n';
    c->buf = strdup(text);
    c->key = malloc(sizeof(char *) * (size_t)lines);
    c->val = malloc(sizeof(char *) * (size_t)lines);
    if (!c->buf || !c->key || !c->val) {
        runstore_cfg_free(c);
        return -1;
    }
    for (char *save = NULL, *line = strtok_r(c->buf, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *eq = strchr(line, '=');
        line = trim(line);
        if (!eq || line[0] == '#') continue;
        *eq = 0;
        c->key[c->n] = trim(line);
        c->val[c->n++] = trim(eq + 1);
    }
    return 0;
}

const char *runstore_cfg_get(const Cfg *c, const char *key)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->key[i], key)) return c->val[i];
    return NULL;
}

/* The union of the keys of n configs, in first-seen order (pointers into the configs). */
const char **runstore_cfg_union(const Cfg *c, int n, int *n_keys)
{
    int total = 0;
    for (int i = 0; i < n; i++) total += c[i].n;
    const char **keys = malloc(sizeof(char *) * (size_t)(total + 1));
    *n_keys = 0;
    for (int i = 0; keys && i < n; i++)
        for (int j = 0; j < c[i].n; j++) {
            int seen = 0;
            for (int k = 0; k < *n_keys && !seen; k++) seen = !strcmp(keys[k], c[i].key[j]);
            if (!seen) keys[(*n_keys)++] = c[i].key[j];
        }
    return keys;
}
