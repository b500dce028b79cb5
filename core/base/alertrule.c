/* alertrule.c — parsing and checking alert rules (see alertrule.h). Not the acting on
 * one (core/run/alerts.c). */
#include "alertrule.h"
#include "err.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(const char *text, const char *why, char *err)
{
    return err_set(err, LM_EARG, "alert rule '%.60s': %s (rules: diverged, finished, failed,"
                   " ended, stalled[:SECONDS], or SERIES<X / SERIES>X with SERIES step or any"
                   " series, e.g. loss val best_val grad_norm tokens_per_s gate/0/1; `help"
                   " series`)", text, why);
}

static int number(const char *v, double *x)
{
    char *end;
    errno = 0;
    *x = strtod(v, &end);
    return *v && !*end && !errno && isfinite(*x);
}

int alertrule_parse(const char *text, AlertRule *r, char *canon, size_t cap, char *err)
{
    static const char *const WORDS[] = {"diverged", "finished", "failed", "ended"};
    memset(r, 0, sizeof *r);
    text = text ? text : "";
    if (!*text) return bad(text, "empty", err);
    for (int i = 0; i < 4; i++)
        if (!strcmp(text, WORDS[i])) {
            r->kind = (AlertKind)i;
            if (canon) snprintf(canon, cap, "%s", text);
            return LM_OK;
        }
    if (!strncmp(text, "stalled", 7) && (text[7] == 0 || text[7] == ':')) {
        r->kind = ALERT_STALLED;
        r->x = ALERTRULE_STALLED_DEFAULT;
        if (text[7] == ':' && (!number(text + 8, &r->x) || r->x < 1 || r->x > 1e7))
            return bad(text, "stalled:SECONDS takes 1 to 10000000 seconds", err);
        if (canon) snprintf(canon, cap, "stalled:%g", r->x);
        return LM_OK;
    }
    const char *op = strpbrk(text, "<>");
    if (!op) return bad(text, "unknown rule", err);
    size_t k = (size_t)(op - text);
    char name[SERIES_NAME_LEN], why[LM_ERR_LEN];
    if (k >= sizeof name) return bad(text, "the series' name is too long", err);
    snprintf(name, sizeof name, "%.*s", (int)k, text);
    if (!strcmp(name, "step"))   /* the step: every series' axis, not a series */
        snprintf(r->metric, sizeof r->metric, "step");
    else if (series_find(name, &r->ref, why))   /* the one registry, did you mean */
        return err_set(err, LM_EARG, "alert rule '%.60s': %s", text, why);
    else
        snprintf(r->metric, sizeof r->metric, "%s", r->ref.name);
    if (!number(op + 1, &r->x)) return bad(text, "the threshold is not a number", err);
    r->kind = *op == '<' ? ALERT_BELOW : ALERT_ABOVE;
    if (canon) snprintf(canon, cap, "%s%c%g", r->metric, *op, r->x);
    return LM_OK;
}

int alertrule_check_list(const char *list, char *err)
{
    char word[ALERTRULE_LEN + 8];
    for (const char *p = list ? list : ""; *p;) {
        size_t n = strcspn(p, ",");
        if (n >= sizeof word) return err_set(err, LM_EARG, "alert rule '%.40s...' is too long", p);
        memcpy(word, p, n);
        word[n] = 0;
        AlertRule r;
        if (n && alertrule_parse(word, &r, NULL, 0, err)) return LM_EARG;
        p += n + (p[n] == ',');
    }
    return LM_OK;
}

static double metric_value(const AlertRule *r, const AlertFacts *f, long *at)
{
    *at = -1;
    if (!r->ref.info) return f->step > 0 ? (double)f->step : NAN;
    return f->value ? f->value(f->ud, &r->ref, at) : NAN;
}

int alertrule_fires(const AlertRule *r, const AlertFacts *f, char *msg, size_t cap)
{
    const char *st = f->status ? f->status : "";
    int ended = strcmp(st, "running") && strcmp(st, "paused") && *st;
    switch (r->kind) {
    case ALERT_DIVERGED:
    case ALERT_FINISHED:
    case ALERT_FAILED:
        if (strcmp(st, r->kind == ALERT_DIVERGED ? "diverged" : r->kind == ALERT_FINISHED
                                                                ? "finished" : "failed"))
            return 0;
        snprintf(msg, cap, "%s at step %ld", st, f->step);
        return 1;
    case ALERT_ENDED:
        if (!ended) return 0;
        snprintf(msg, cap, "ended (%s) at step %ld", st, f->step);
        return 1;
    case ALERT_STALLED:
        if (strcmp(st, "running") || !(f->since_step >= r->x)) return 0;
        snprintf(msg, cap, "stalled: no step for %.0f s (at step %ld)", f->since_step, f->step);
        return 1;
    default: {
        long at;   /* the value's own step: an evaluation's, not the run's newest */
        double v = metric_value(r, f, &at);
        if (isnan(v) || (r->kind == ALERT_BELOW ? !(v < r->x) : !(v > r->x))) return 0;
        snprintf(msg, cap, "%s %.6g %c %g at step %ld", r->metric, v,
                 r->kind == ALERT_BELOW ? '<' : '>', r->x, at >= 0 ? at : f->step);
        return 1;
    }
    }
}
