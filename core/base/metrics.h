/* metrics.h — the records a training run produces (steps, evaluations, gate statistics,
 * samples, checkpoints). The trainer emits them as events; the run store persists them;
 * the dashboard plots them. Plain data; the per-step metrics are listed once, in
 * metrics.def, and metrics.c reads and writes them by position. */
#ifndef LM_METRICS_H
#define LM_METRICS_H

#define GATE_HIST_BINS 10
#define METRICS_PATH_LEN 1024

/* One logged training step: the step and the metrics of metrics.def (one field each,
 * in its order). */
typedef struct {
    long step;
#define STEP_METRIC(name, type, kind, ...) type name;
#include "metrics.def"
#undef STEP_METRIC
} StepMetric;

/* The metrics of metrics.def by position: STEP_M_loss, ...; STEP_METRIC_N of them. */
enum {
#define STEP_METRIC(name, type, kind, ...) STEP_M_##name,
#include "metrics.def"
#undef STEP_METRIC
    STEP_METRIC_N
};

typedef enum { STEP_REAL, STEP_INT } StepMetricKind;

/* What a per-step metric is: its name (field, column, series), kind, the significant
 * digits that print it back exactly (9 for a float, 16 otherwise) and its help. */
typedef struct {
    const char *name;
    StepMetricKind kind;
    int digits;
    const char *help;
} StepMetricInfo;

/* The metrics of metrics.def in order (metrics.c). */
extern const StepMetricInfo STEP_METRICS[STEP_METRIC_N];

/* A perplexity as every screen prints it (buf, at least METRIC_PPL_TEXT bytes): "%.3f"
 * below 1e6, 4 significant digits above ("2.476e+135": a diverged run's, where "%.3f"
 * printed 136 digits), "inf" where exp(loss) overflowed (a loss over 709.78), "nan".
 * Returns buf. */
#define METRIC_PPL_TEXT 32
const char *metric_ppl_text(double ppl, char *buf);

/* Seconds of training left at `step` of `total` after `elapsed` seconds of training: the
 * pace so far over the steps left, or what is left of time_budget (> 0) when that ends the
 * run sooner; NAN before the first step. Every ETA on screen is this one. */
double metric_eta(long step, long total, double elapsed, double time_budget);

/* Metric i (STEP_M_*) of m as a double (a long converted: exact below 2^53). */
double step_metric_get(const StepMetric *m, int i);
/* Sets metric i of m from v (converted to the field's type). */
void step_metric_set(StepMetric *m, int i, double v);
/* The index (STEP_M_*) of the metric called name, -1 for none. */
int step_metric_find(const char *name);

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

/* ---- named series (issue 48): any scalar or 64-bin histogram a run records by name,
 * such as the diagnostics `grad/<tensor>` or `hist/weight/<tensor>` (the store keeps
 * them in runstore_series.h's tables; a registry of names says what each one is). */

#define SERIES_NAME_LEN 128        /* a series name with its NUL */
#define SERIES_HIST_BINS 64

/* One named scalar at a step. value may be NaN or an infinity: they are kept as such. */
typedef struct {
    char name[SERIES_NAME_LEN];
    double value;
} NamedScalar;

/* A histogram of values over SERIES_HIST_BINS equal bins spanning the finite values'
 * [lo, hi] (bin b: [lo + b w, lo + (b+1) w), w = (hi - lo) / SERIES_HIST_BINS, the last
 * bin closed; all in bin 0 when lo == hi). Non-finite values are counted apart, so a
 * diverging tensor shows as such. */
typedef struct {
    double lo, hi;                 /* NAN when there is no finite value */
    long num;                      /* finite values (the sum of counts) */
    double sum, sum_sq;            /* of the finite values */
    long n_nan, n_posinf, n_neginf;
    long counts[SERIES_HIST_BINS];
} SeriesHist;

typedef struct {
    char name[SERIES_NAME_LEN];
    SeriesHist h;
} NamedHist;

/* Named scalars and histograms of one step, as the trainer's diagnostics emit them (one
 * event) and the recorder stores them (runstore_series_log, runstore_hist_log). */
typedef struct {
    long step;
    NamedScalar *scalars;          /* (n_scalars) malloc'd */
    int n_scalars;
    NamedHist *hists;              /* (n_hists) malloc'd */
    int n_hists;
} SeriesBatch;

/* Frees b, its arrays and the struct (malloc'd); NULL is a no-op. */
void series_batch_free(SeriesBatch *b);

/* Fills h with the n values of x (two passes: range, then bins; sums in double). */
void series_hist_fill(SeriesHist *h, const float *x, long n);

typedef struct {
    long step;
    char path[METRICS_PATH_LEN];
    double val_loss;       /* NAN when no evaluation preceded it */
    int is_best;
} CheckpointRecord;

#endif
