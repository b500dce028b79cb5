/* bench_diag.h — what diagnostics (`diagnostics=N`, core/train/diag.h) cost a training
 * step, for `lmlab bench WORKLOAD diagnostics=N`: every timed step also collects the
 * diagnostics (timed apart, so the step's own time stays the time without them, measured
 * in the same process between the same steps) and records the batch in a scratch run
 * store (the recorder thread's work, timed apart too). Not a test: nothing asserts. */
#ifndef LM_BENCH_DIAG_H
#define LM_BENCH_DIAG_H

#include "bench.h"
#include "replicas.h"

typedef struct BenchDiag BenchDiag;

/* For n timed steps of m on r; a scratch store in a fresh /tmp folder. NULL with a
 * message on failure. */
BenchDiag *bench_diag_create(const Model *m, Replicas *r, int n, char *err);
/* Removes the scratch store and frees; NULL is a no-op. */
void bench_diag_destroy(BenchDiag *b);
/* Step s's diagnostics: collect (after the gradient, before the update); returns its
 * seconds. */
double bench_diag_collect(BenchDiag *b, Model *m, Replicas *r, int s);
/* ... then finish (after the update) and record the batch; returns the seconds of both
 * (the recording's are kept apart in the result). */
double bench_diag_finish(BenchDiag *b, const Model *m, int s);
/* The medians into out (diag_s, diag_cpu_s, diag_record_s, diag_series, diag_hists). */
void bench_diag_result(BenchDiag *b, BenchResult *out);

#endif
