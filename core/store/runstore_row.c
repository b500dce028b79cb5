/* runstore_row.c — facts read from a stored run's row alone (runstore_row.h): one key of
 * its config text, and whether its best is an estimate. Replaces the private copies of
 * the config reader that the filter, the run record, runs' table and sort keys, the
 * report, the jobs board and the dashboard each kept. Not a config parser (config.h). */
#include "runstore_row.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* The value of key on the line [line, end) or NULL; *n its length, blanks trimmed. */
static const char *line_value(const char *line, const char *end, const char *key, size_t *n)
{
    size_t kl = strlen(key);
    while (line < end && blank(*line)) line++;
    if ((size_t)(end - line) <= kl || strncmp(line, key, kl)) return NULL;
    const char *p = line + kl;
    while (p < end && blank(*p)) p++;
    if (p == end || *p != '=') return NULL;   /* `lr` on an `lr_min=` line stops here */
    p++;
    while (p < end && blank(*p)) p++;
    const char *e = end;
    while (e > p && blank(e[-1])) e--;
    *n = (size_t)(e - p);
    return p;
}

int runstore_config_value(const char *config, const char *key, char *out, size_t cap)
{
    if (cap) out[0] = 0;
    if (!key || !key[0]) return 0;
    for (const char *line = config; line && *line;) {
        const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line);
        size_t n;
        const char *v = line_value(line, end, key, &n);
        if (v) {
            if (cap) snprintf(out, cap, "%.*s", (int)n, v);
            return 1;
        }
        line = nl ? nl + 1 : NULL;
    }
    return 0;
}

long runstore_config_long(const char *config, const char *key, long dflt)
{
    char v[64], *end;
    if (!runstore_config_value(config, key, v, sizeof v)) return dflt;
    long x = strtol(v, &end, 10);
    return end == v ? dflt : x;
}

double runstore_config_double(const char *config, const char *key, double dflt)
{
    char v[64], *end;
    if (!runstore_config_value(config, key, v, sizeof v)) return dflt;
    double x = strtod(v, &end);
    return end == v ? dflt : x;
}

long runstore_final_whole_step(const RunRow *r)
{
    if (!strcmp(r->status, "finished"))
        return r->last_step;
    if (!strcmp(r->status, "stopped") && strstr(r->reason, "(stop_at)"))
        return r->last_step;
    return -1;
}

int runstore_best_estimated(const RunRow *r)
{
    if (isnan(r->best_val) || runstore_config_long(r->config, "eval_batches", 0) == 0)
        return 0;
    return !(runstore_final_whole_step(r) >= 0 && r->best_val == r->final_val);
}

void runstore_fmt_best(char *out, size_t cap, double best, int estimated)
{
    if (isnan(best)) snprintf(out, cap, "-");
    else snprintf(out, cap, "%s%.4f", estimated ? "~" : "", best);
}
