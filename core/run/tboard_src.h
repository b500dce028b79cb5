/* tboard_src.h — the summaries of one run for its TensorBoard event file (tboard.h), read
 * from the store in step order as they are written: one cursor per series, merged. Not
 * the file's framing or its texts (tboard.c). */
#ifndef LM_TBOARD_SRC_H
#define LM_TBOARD_SRC_H

#include "runstore.h"
#include "series.h"

enum { TBOARD_SCALAR, TBOARD_HIST };

/* One summary: valid until the next tboard_src_next or tboard_src_close. */
typedef struct {
    long step;
    int kind;                 /* TBOARD_SCALAR or TBOARD_HIST */
    double wall;              /* the run's start plus its training seconds at step (a
                                 system sample: its own time) */
    double value;             /* TBOARD_SCALAR */
    const char *tag;
    const SeriesHist *h;      /* TBOARD_HIST */
} TboardItem;

typedef struct TboardSrc TboardSrc;

/* Opens the sources of run r, in the order their summaries go at one step: every series
 * of the registry the run has (not its named series; a series with no value but NaN
 * left out), the gates' histograms (hist/gate/L/K), the other ranks' system samples
 * (sys/rankN/<what>), then the named series by name (histograms with <name>/nonfinite
 * when they counted any NaN or infinity). A source that cannot be opened is left out, as
 * a series that cannot be read was. LM_OK or LM_ENOMEM; *out to tboard_src_close. */
int tboard_src_open(RunStore *st, const RunRow *r, TboardSrc **out, char *err);

/* The next summary by step (at one step in the sources' order, each source's in its
 * own order) into *it: 1, 0 when every source is done, -1 when a read failed (err). */
int tboard_src_next(TboardSrc *m, TboardItem *it, char *err);

/* Closes every cursor and frees m; NULL is a no-op. */
void tboard_src_close(TboardSrc *m);

#endif
