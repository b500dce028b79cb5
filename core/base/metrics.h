/* metrics.h — the records a training run produces (steps, evaluations, gate statistics,
 * samples, checkpoints). The trainer emits them as events; the run store persists them;
 * the dashboard plots them. Plain data, no behaviour. */
#ifndef LM_METRICS_H
#define LM_METRICS_H

#define GATE_HIST_BINS 10
#define METRICS_PATH_LEN 1024

typedef struct {
    long step;
    double epoch;          /* fractional epochs done */
    long tokens;           /* tokens seen so far */
    float loss;            /* mean training loss of this step */
    float lr;
    float grad_norm;       /* before clipping */
    float tokens_per_s;    /* smoothed over the log interval */
    double elapsed;        /* seconds of training (pauses excluded) */
} StepMetric;

typedef struct {
    long step;
    char split[8];         /* valid | test */
    double loss;           /* mean cross-entropy per predicted token */
    double ppl;            /* exp(loss) */
    double bpc;            /* bits per character (char tokenizer), else NAN */
    long tokens;           /* predicted tokens evaluated */
    double elapsed;
} EvalMetric;

typedef struct {
    long step;
    int layer, level;
    float mean, std;       /* over every (sequence, head, position >= 2^level) */
    int hist[GATE_HIST_BINS]; /* counts over [0,1) in GATE_HIST_BINS bins (clamped) */
} GateStat;

typedef struct {
    long step;
    char path[METRICS_PATH_LEN];
    double val_loss;       /* NAN when no evaluation preceded it */
    int is_best;
} CheckpointRecord;

#endif
