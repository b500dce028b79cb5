/* tboard.h — a run store's runs as TensorBoard event files (`export ID ... format=tensorboard
 * dir=D`, issue 48), so TensorBoard, Trackio (import_tf_events) and Aim (aim convert
 * tensorboard) read lmlab's runs. One folder per run under D ("<id>-<name>", bytes other
 * than letters, digits and ._+- escaped as %XX), holding one events.out.tfevents.<created>.
 * <host> file: the file version record ("brain.Event:2") first, then the run's name and
 * lineage and its settings as text (the text plugin's summaries, step 0), then every
 * series of the run in step order: every series of the registry (core/base/series.h:
 * step metrics, evaluations, best, system samples, gate/<layer>/<level>) the run has,
 * the gates' histograms (hist/gate/<layer>/<level>), the other ranks' system samples
 * under mpirun (sys/rankN/<what>), and the run's named series (the diagnostics: scalars
 * and 64-bin histograms, a histogram's NaN and infinities as <name>/nonfinite). Records are framed as TensorFlow's
 * RecordWriter frames them: uint64 length, masked CRC-32C of the length, the Event
 * message (proto/tensorboard.proto, encoded by libprotobuf-c), masked CRC-32C of it.
 * Not a reader of event files, not a TensorBoard server. */
#ifndef LM_TBOARD_H
#define LM_TBOARD_H

#include "runstore.h"

typedef struct {
    int runs;                  /* files written */
    long scalars, histograms, texts;   /* summaries written, all runs */
    char first[1024];          /* the first run's file */
} TboardReport;

/* Writes the n runs ids into the new folder dir. dir must not exist (an existing folder
 * or file is refused: the export never writes into what is there) and its parent must be
 * a folder this process can write in; every id must be a run of st. All of that is
 * checked before anything is written. The files are written into a temporary folder
 * next to dir, renamed to dir when complete, and removed on failure, so dir is either
 * absent or whole. rep (may be NULL) says what was written. LM_EARG (a bad dir, an
 * unknown run), LM_EIO (a write failed: nothing is left), LM_ENOMEM, the store's
 * errors. */
int tboard_export(RunStore *st, const long *ids, int n, const char *dir, TboardReport *rep,
                  char *err);

#endif
