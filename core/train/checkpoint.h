/* checkpoint.h — checkpoints as safetensors files: the weights under the PyTorch names
 * the fixtures use (so `model.load_state_dict(safetensors.torch.load_file(p))` takes the
 * file as is), with the configuration, the tokenizer and the training state in the
 * metadata; the optimizer's moments in a sibling file `<stem>.optim.safetensors`
 * (exp_avg.<name>, exp_avg_sq.<name>), written first, so the weights file is the commit
 * point. Both writes are atomic (temporary file, fsync, rename).
 * Not here: deciding when to checkpoint (trainer.c) or where runs live (runstore). */
#ifndef LM_CHECKPOINT_H
#define LM_CHECKPOINT_H

#include "config.h"
#include "model.h"
#include "names_reference.h"
#include "optim.h"
#include "safetensors.h"
#include "schedule.h"

#include <stdint.h>

typedef struct {
    long step;             /* optimizer steps done */
    long tokens;           /* training tokens seen */
    double epoch, elapsed; /* fractional epochs, seconds of training */
    double best_val;       /* best validation loss so far (NAN if none) */
    long run_id;           /* run store id (0 = none) */
    char store_id[40];     /* the run store's identity ("" = none or an older file) */
    Rng model_rng;         /* dropout stream */
    Rng data_rng;          /* unused by stream batching; kept for completeness */
    unsigned long long batcher[4]; /* batcher_get_state */
    Schedule sched;        /* plateau state included */
    double window_loss;    /* the open log window: the sum of its steps' losses ... */
    int window_steps;      /* ... and how many steps it holds since the last log row, so
                              a resumed run logs the same window means as one never
                              stopped (0 in files from before it was kept) */
} TrainState;

typedef struct {
    Config cfg;            /* valid when has_config */
    int has_config, has_state;
    int vocab;             /* from the metadata, or the embedding's rows */
    char *tokenizer_json;  /* malloc'd, or NULL (a plain PyTorch file) */
    char kernels[64];      /* the BLAS kernel family that wrote it (sysinfo_blas_kernels;
                              "" in files from before it was recorded) */
    TrainState ts;
} CheckpointInfo;

/* Writes the checkpoint (and the optimizer file when opt is not NULL). LM_OK, LM_ENOSPC
 * (disk full: nothing at path is replaced) or LM_EIO. */
int checkpoint_save(const char *path, const Model *m, const Optimizer *opt,
                    const char *tokenizer_json, const TrainState *ts, char *err);

/* Writes the weights alone (no optimizer, no training state) under naming `names`:
 * NAMES_LMLAB is checkpoint_save's file; NAMES_REFERENCE writes the reference
 * repositories' state_dict names (plus their decoder.weight when tied and the
 * (5000, 1, d) pos_encoder.pe buffer), so the reference classes load the file with
 * load_state_dict(strict=True); the metadata keeps lmlab's configuration and tokenizer
 * and says names=reference. LM_EARG when the model has no reference form
 * (names_reference_check), else as checkpoint_save. */
int checkpoint_save_names(const char *path, const Model *m, const char *tokenizer_json,
                          NamesKind names, char *err);

/* Opens a checkpoint and reads its metadata into info (caller frees with
 * checkpoint_info_free) and the open file into *st (caller closes). The file may be
 * safetensors or a torch.save zip (torchfile.h: its state_dict's tensors). Metadata is
 * read only when its "format" is lmlab's own; any other tool's metadata (safetensors'
 * {"format": "pt"}, ...) is ignored and the file opens as plain weights with
 * has_config = 0. A newer lmlab format is refused (LM_EFORMAT). */
int checkpoint_open(const char *path, CheckpointInfo *info, SafeTensors **st, char *err);
void checkpoint_info_free(CheckpointInfo *info);

/* Opens path's metadata and applies checkpoint_check_owner (same results; open errors as
 * checkpoint_open). */
int checkpoint_verify_owner(const char *path, const char *store_id, long run_id, char *err);

/* The number of non-finite values (NaN, Inf) in a model's weights; *first receives the
 * name of the first tensor holding one (cap bytes) when there are any. */
long checkpoint_count_nonfinite(const Model *m, char *first, size_t cap);

/* checkpoint_check_tensors for the model cfg and V describe (model_describe: parameter
 * shapes only), so a file is checked before any slab is allocated for it. LM_OK, the
 * model's error (LM_EARG) or the tensors' (LM_EFORMAT). */
int checkpoint_check_fits(const Config *cfg, int V, const SafeTensors *st, const char *prefix,
                          char *err);

/* Copies every model parameter from the tensors named prefix + its name, in lmlab's
 * naming or the reference's (names_detect decides from the file). Every parameter must
 * be present with the same shape; a missing one gets a message with the names expected
 * in both namings and those found; a shape error names the tensor and both shapes
 * ("checkpoint from another model shape"). Tensors the model does not use (the
 * reference's pos_encoder.pe) are ignored. With prefix "", a file that carries a
 * "weights_fnv1a" checksum (every lmlab checkpoint) must match it: LM_EFORMAT "damaged"
 * otherwise. The message does not name the file: callers prefix the path. */
int checkpoint_read_weights(Model *m, const SafeTensors *st, const char *prefix, char *err);

/* Restores the optimizer moments from <stem>.optim.safetensors. LM_EIO when the file is
 * missing (the caller may continue with fresh moments, and says so); LM_EFORMAT when it is
 * there but unreadable, of another shape, or its moments do not match the checksum
 * ("moments_fnv1a") written with them: damaged (the message names the file). */
int checkpoint_read_optim(const char *path, const Model *m, Optimizer *opt, char *err);

/* A run directory's checkpoint: which = "best" gives best.safetensors (falling back to
 * the newest), "last" the newest step-N.safetensors (names sort by step). A write's
 * leftover temporary file (step-N.safetensors.tmp.PID, torn by a crash) never counts.
 * 0 with the path in out, or -1 when there is none. */
int checkpoint_find(const char *dir, const char *which, char *out, size_t cap);


#endif
