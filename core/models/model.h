/* model.h — the one interface every model family implements (transformer: dispatcher,
 * dispatcher-mh, msa; the linear LM; recurrent LMs), so the trainer, evaluation,
 * sampling and checkpoints never ask which family they hold.
 * Layout: tokens and targets are (B,T) row-major int32, batch-major.
 * Memory: model_alloc sizes every activation for batches up to (B,T) before training;
 * forward/backward never allocate. Not thread-safe: one thread drives a Model. */
#ifndef LM_MODEL_H
#define LM_MODEL_H

#include "config.h"
#include "dropout.h"
#include "params.h"
#include "rng.h"
#include "sysinfo.h"

#include <stddef.h>

typedef struct Model Model;

/* Where time goes, accumulated in Model.prof when Model.profiling is set (bench). */
/* PROF_MIXER: the mixer's matrix products (MSA: its whole attention); PROF_SCAN: the
 * Dispatcher's shift-and-sum (gate activation and the levels: elementwise, no product);
 * PROF_DECODER: the decoder's products; PROF_LOSS: the rest of the decoder stage (the
 * softmax, the loss, zeroing and scaling the decoder's gradients: elementwise).
 * The step's stages outside the model (forward only, timed by their callers on the
 * primary's thread): PROF_OPTIM the gradient norm, clipping and optimizer step (bench);
 * PROF_GRAD zeroing the gradient before a step and the primary thread's slice of the sum
 * of the shards' gradients; PROF_WAIT the primary thread's waits for the other threads
 * to finish a phase (replicas.c). */
enum { PROF_EMBED, PROF_MIXER, PROF_SCAN, PROF_FFN, PROF_NORM, PROF_DECODER, PROF_LOSS,
       PROF_OPTIM, PROF_GRAD, PROF_WAIT, PROF_N };
typedef struct DecodeState DecodeState;

typedef struct {
    /* Activation buffers for up to (B,T). LM_OK or LM_ENOMEM. */
    int (*alloc)(Model *m, int B, int T, char *err);
    /* Forward over tokens (B,T). With targets (B,T; entries < 0 are ignored): *loss_sum
     * gets the summed cross-entropy and *count the number of predicted tokens (targets
     * >= 0: decoder_loss_count, known before the forward); in
     * training mode (m->training) it also keeps what backward needs. Without targets:
     * logits (B,T,V) are kept for model_logits. */
    int (*forward)(Model *m, const int *tokens, const int *targets, int B, int T,
                   double *loss_sum, long *count);
    /* Gradients of loss_sum * scale from the last training forward, added into
     * m->params.grad (scale = 1/count gives the mean loss). */
    void (*backward)(Model *m, float scale);
    /* Logits (B,T,V) of the last forward without targets. */
    const float *(*logits)(Model *m);
    /* Recurrent models: forget the carried hidden state (no-op elsewhere). */
    void (*reset_state)(Model *m);
    /* Incremental decoding: a cache for one sequence; step feeds one token at position
     * pos (0,1,2,...) and writes the next token's logits (V). NULL when the family has
     * no cache (the sampler then recomputes the window). */
    DecodeState *(*decode_create)(Model *m, char *err);
    int (*decode_step)(Model *m, DecodeState *st, int token, int pos, float *logits);
    void (*decode_destroy)(DecodeState *st);
    /* Gate coefficients (B*heads, T, levels) of dispatcher layer `layer` from the last
     * forward, or NULL. The op itself is NULL for families without gates (n_gate_layers
     * is then 0, and callers check it first). */
    const float *(*gates)(Model *m, int layer);
    /* Diagnostics (NULL for families without blocks: then model_block_output says so).
     * Block `layer`'s output (B,T,d) of the last training forward, its B and T in *B,
     * *T, or NULL when there was none. */
    const float *(*block_output)(Model *m, int layer, int *B, int *T);
    /* MSA: each head's attention entropy in nats, added over the rows of the last
     * training forward into sum[heads]; LM_EARG for a family or layer without attention
     * (sum NULL: only asks whether the layer has attention, LM_OK or LM_EARG). */
    int (*attention_entropy)(Model *m, int layer, double *sum);
    void (*destroy)(Model *m);
} ModelOps;

struct Model {
    const ModelOps *ops;
    Config cfg;
    int vocab;             /* V */
    ParamSet params;
    Rng rng;               /* initialisation, then one dropout seed per training forward */
    DropKey drop;          /* the masks of the current training forward (dropout.h) */
    int drop_set;          /* model_drop_key was called for the next forward */
    int training;          /* 1: dropout on, keep activations for backward */
    int carry_state;       /* recurrent: keep the hidden state across forward calls */
    int B, T;              /* allocated for */
    int n_gate_layers;     /* dispatcher layers with gates (0 for others) */
    int gate_heads, gate_levels;
    int profiling;         /* accumulate seconds per part in prof[] (forward) and
                              prof_bwd[] (backward) */
    int prof_in_backward;  /* set by model_backward while the family's backward runs */
    double prof[PROF_N], prof_bwd[PROF_N];
    int estimate_only;     /* set before init: register parameters, allocate nothing
                              (model_estimate_bytes, model_describe); such a model only counts */
    int weights_only;      /* set before init: no gradient slab (model_create_weights),
                              and model_alloc lays out only what a forward without
                              backward needs (one layer's buffers shared by all, no
                              dropout masks): for sampling and evaluation; training = 1
                              makes model_forward answer LM_ESTATE */
    size_t act_bytes;      /* bytes of activations the last alloc allocated */
    void *impl;            /* the family's own state */
};

/* Creates the model the configuration names, with vocabulary V, parameters registered,
 * allocated and initialised from cfg->seed. Returns NULL with a message on failure. */
Model *model_create(const Config *cfg, int V, char *err);
void model_destroy(Model *m);

/* model_create without the gradient slab: the weights a sampling or evaluating model
 * needs, and (model_alloc) only the activations of a forward without backward; its
 * forward gives bit for bit the losses, logits and gate coefficients of the same
 * weights in a model_create model in evaluation mode. model_backward must never be
 * called on it, nor a training forward (LM_ESTATE). */
Model *model_create_weights(const Config *cfg, int V, char *err);

/* The model's parameters (names and shapes) registered, nothing allocated: what a file
 * must hold before anything is allocated for it (checkpoint_check_tensors). Only
 * m->params.info/n/total are meaningful; model_destroy frees it. NULL with a message. */
Model *model_describe(const Config *cfg, int V, char *err);

/* Bytes of parameters + gradients + Adam state (4 floats per parameter) + the
 * activations model_alloc(B,T) allocates: the estimate checked against the machine's
 * memory before allocating. Counted by the family's own parameter registration and
 * layout function (registry.h), allocating no parameter or activation; equal to what
 * model_create + model_alloc then take (test_model checks every family). 0 when the
 * configuration cannot make a model. */
double model_estimate_bytes(const Config *cfg, int V, int B, int T);

/* The same for a model made with model_create_weights: one float per parameter and the
 * activations its model_alloc(B,T) allocates (the weights-only layout: what a forward
 * without backward needs), equal to what model_create_weights + model_alloc then take. */
double model_estimate_weights_bytes(const Config *cfg, int V, int B, int T);

/* The memory check run before building a model, by train and by open/import alike:
 * LM_ENOMEM with a message giving both figures and what to lower when
 * model_estimate_bytes exceeds 85% of the memory available now (sysinfo); LM_EARG when
 * the configuration makes no model; LM_OK otherwise (also when the available memory
 * cannot be read). */
int model_check_memory(const Config *cfg, int V, int B, int T, char *err);

/* The same check for a model that is only sampled and evaluated (model_create_weights):
 * model_estimate_weights_bytes against the memory available. */
int model_check_memory_weights(const Config *cfg, int V, int B, int T, char *err);

/* Profiling by stage (bench), free when m->profiling is 0; time inside model_backward
 * goes to prof_bwd, the rest to prof:
 *     double t = model_prof_begin(m); ...the stage...; model_prof_end(m, PROF_FFN, t); */
static inline double model_prof_begin(const Model *m)
{
    return m->profiling ? sysinfo_now() : 0;
}

static inline void model_prof_end(Model *m, int part, double t0)
{
    if (m->profiling)
        (m->prof_in_backward ? m->prof_bwd : m->prof)[part] += sysinfo_now() - t0;
}

/* A stage whose callee times a part of it itself (the Dispatcher's shift-and-sum into
 * dd.scan_s, the decoder's elementwise work into dec.elem_s): *slot points at that inner
 * part while profiling (else NULL), and the outer part gets its time less what the inner
 * one gained meanwhile, so that nothing is counted twice. */
typedef struct { double t0, inner0; int inner; } ModelNestedProf;

static inline ModelNestedProf model_prof_begin_nested(Model *m, double **slot, int inner)
{
    double *part = m->prof_in_backward ? m->prof_bwd : m->prof;
    *slot = m->profiling ? &part[inner] : NULL;
    return (ModelNestedProf){model_prof_begin(m), part[inner], inner};
}

static inline void model_prof_end_nested(Model *m, int outer, ModelNestedProf p)
{
    model_prof_end(m, outer, p.t0);
    if (m->profiling) {
        double *part = m->prof_in_backward ? m->prof_bwd : m->prof;
        part[outer] -= part[p.inner] - p.inner0;
    }
}

/* Convenience wrappers over m->ops. */
int model_alloc(Model *m, int B, int T, char *err);
int model_forward(Model *m, const int *tokens, const int *targets, int B, int T,
                  double *loss_sum, long *count);
void model_backward(Model *m, float scale);
/* A family's activation memory, for its alloc op: one zeroed, 64-byte aligned slab of
 * n_floats floats (the family lays its buffers out in it) and a buffer of n_ints ints.
 * Sets m->act_bytes to the bytes taken (model_act_bytes, what the family's act-bytes
 * registry function returns). On failure both are NULL, m->B = m->T = 0 and LM_ENOMEM
 * says how much batch x bptt asked for. */
int model_act_alloc(Model *m, size_t n_floats, size_t n_ints, float **slab, int **ints, int B,
                    int T, char *err);
size_t model_act_bytes(size_t n_floats, size_t n_ints);
/* Sets the dropout key of m's next training forward: the step's seed (model_drop_seed of
 * the model that owns the stream) and the global index of the forward's first batch row,
 * so a batch split over replicas or ranks gets the masks it would get whole. Without it,
 * model_forward draws the seed from m->rng and counts rows from 0. */
void model_drop_key(Model *m, uint64_t seed, long row0);
/* The next step's dropout seed, drawn from m->rng (two 32-bit draws). */
uint64_t model_drop_seed(Model *m);

/* Whether the family carries its hidden state from one window to the next (the recurrent
 * families of families.def): a whole-split evaluation then runs the windows in order on
 * one row, and cannot be shared between ranks. Asked here, never by kind elsewhere. */
int model_carries_state(const Model *m);

/* Layout helper for families that run time-major: dst (B,T,C) from src (T,B,C) when
 * to_bt, else dst (T,B,C) from src (B,T,C). */
void model_transpose_tb(float *dst, const float *src, int B, int T, int C, int to_bt);

/* The diagnostics' view of the last training forward (ModelOps.block_output,
 * .attention_entropy): NULL / LM_EARG for a family that has no blocks or attention. */
const float *model_block_output(Model *m, int layer, int *B, int *T);
int model_attention_entropy(Model *m, int layer, double *sum);

/* Parameter count (weights tied once). */
long model_param_count(const Model *m);

/* Family constructors (model_transformer.c, model_linear.c, model_recurrent.c): register
 * parameters in m->params, set m->ops and m->impl, initialise weights (only register
 * when m->estimate_only). model_create finds them through the registry (families.def);
 * they are declared here for tests that build a family directly. */
int model_transformer_init(Model *m, char *err);
int model_linear_init(Model *m, char *err);
int model_recurrent_init(Model *m, char *err);

/* The tail every family constructor shares, called once its parameters are registered
 * and m->impl is set: installs ops, then (unless m->estimate_only) allocates the
 * parameter and gradient slabs and fills the weights with init_weights(m), which reads
 * m->impl and draws from m->rng. LM_OK, or LM_ENOMEM with the message in err; on
 * failure ops->destroy(m) has released m->impl and m->ops is NULL again. */
int model_finish_init(Model *m, const ModelOps *ops, void (*init_weights)(Model *m),
                      char *err);

#endif
