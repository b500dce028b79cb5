/* dashboard_fixture.c — the dashboard tests' shared frame dump and hand-built Snapshot
 * (dashboard_fixture.h). Not a test itself. */
#include "dashboard_fixture.h"

#include "dash_render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *dump(Dashboard *d, const Snapshot *sn, int w, int h, const CanvasCaps *caps,
           Canvas **keep)
{
    Canvas *c = canvas_create(w, h);
    dash_render(c, d, sn, caps);
    char *s = canvas_dump(c);
    if (keep)
        *keep = c;
    else
        canvas_destroy(c);
    return s;
}

int has(const char *dump, const char *s) { return dump && strstr(dump, s) != NULL; }

void make_snapshot(Snapshot *sn)
{
    memset(sn, 0, sizeof *sn);
    config_defaults(&sn->cfg);
    snprintf(sn->cfg.model, sizeof sn->cfg.model, "dispatcher");
    snprintf(sn->cfg.data, sizeof sn->cfg.data, "tinyshakespeare");
    sn->run_id = 7;
    snprintf(sn->run_name, sizeof sn->run_name, "demo");
    sn->total_steps = 300;
    sn->status = TRAINER_RUNNING;
    sn->last = (StepMetric){.step = 150, .epoch = 0.12, .tokens = 38400, .loss = 2.1f, .lr = 3e-3f,
                            .grad_norm = 1.0f, .tokens_per_s = 12345.0f, .elapsed = 30.0};
    sn->n_loss = sn->cap_loss = 30;
    sn->loss = malloc(30 * sizeof *sn->loss);
    for (int i = 0; i < 30; i++)
        sn->loss[i] = (SeriesPoint){(i + 1) * 5, 4.2 * exp(-i / 12.0) + 0.5};
    sn->n_val = sn->cap_val = 3;
    sn->val = malloc(3 * sizeof *sn->val);
    for (int i = 0; i < 3; i++)
        sn->val[i] = (SeriesPoint){(i + 1) * 50, 3.5 - 0.6 * i};
    sn->last_eval.loss = 2.3;
    sn->last_eval.ppl = exp(2.3);
    sn->best_val = 2.3;
    sn->gate_layers = 2;
    sn->gate_levels = 5;
    sn->n_gates = 10;
    for (int l = 0; l < 2; l++)
        for (int k = 0; k < 5; k++) {
            GateStat *g = &sn->gates[l * 5 + k];
            g->step = 100, g->layer = l, g->level = k;
            g->mean = l == 1 && k == 4 ? 1.0f : 0.1f * (float)k;
            g->std = 0.05f;
            for (int b = 0; b < GATE_HIST_BINS; b++)
                g->hist[b] = b * (k + 1);
        }
    snprintf(sn->sample, sizeof sn->sample, "ROMEO:\nwherefore art thou, sweet gate");
    sn->sample_step = 100;
    sn->seq = 42;
}

RunStore *new_store(char *db, char *err)
{
    int fd = mkstemps(db, 3);
    if (fd >= 0) close(fd);
    remove(db);
    RunStore *st = NULL;
    return runstore_open(db, &st, err) == LM_OK ? st : NULL;
}
