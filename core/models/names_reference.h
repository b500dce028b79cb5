/* names_reference.h — the two namings lmlab reads and writes weights under: its own
 * (`blocks.L.mixer.*`, the names Model.params registers) and the reference
 * repositories' (`transformer_encoder.layers.L.self_attn.*`, the state_dict() of
 * fractalego/dispatcher's DispatcherModel / MSA model; PyTorch's word_language_model
 * RNNModel, whose names lmlab's recurrent models already share). Also: which naming a
 * file uses (from its tensor names), a message for a file that matches neither, and the
 * configuration a file's tensor shapes imply.
 * Not here: reading or writing the files (checkpoint.c, torchfile.c). */
#ifndef LM_NAMES_REFERENCE_H
#define LM_NAMES_REFERENCE_H

#include "config.h"
#include "model.h"
#include "safetensors.h"

#include <stddef.h>

typedef enum { NAMES_LMLAB, NAMES_REFERENCE } NamesKind;

/* The reference's sinusoidal buffer `pos_encoder.pe` is (NAMES_PE_ROWS, 1, d) whatever
 * bptt is; a strict load_state_dict needs exactly that shape. */
#define NAMES_PE_ROWS 5000
#define NAMES_PE "pos_encoder.pe"

/* The buffers the reference's state_dict holds beyond the parameters, for a checkpoint
 * written under the reference names: for the Transformer families the (NAMES_PE_ROWS, 1, d)
 * sinusoidal table `pos_encoder.pe`. Sets *pe to a malloc'd table the caller frees after
 * the write (NULL when the family has none) and shape to its shape. LM_OK or LM_ENOMEM. */
int names_reference_pe(const Model *m, float **pe, long shape[3]);

/* "lmlab" or "reference" into *out: LM_OK, or LM_EARG with the accepted values. */
int names_parse(const char *s, NamesKind *out, char *err);

/* The name of lmlab parameter `lmlab_name` under naming k (a copy when k is
 * NAMES_LMLAB). Never fails; truncates to cap. */
void names_map(const char *lmlab_name, NamesKind k, char *out, size_t cap);

/* LM_OK when a model of configuration c can be written under the reference names so
 * that the reference classes load it; LM_EARG saying why not (the linear LM, norm=pre,
 * pos=learned have no reference class or name). */
int names_reference_check(const Config *c, char *err);

/* The naming a file's tensors use: NAMES_REFERENCE when any name starts with
 * "transformer_encoder." or is "pos_encoder.pe", else NAMES_LMLAB. */
NamesKind names_detect(const SafeTensors *st);

/* Writes into err (LM_EFORMAT) that tensor `missing` is absent, with a few of the
 * names this model expects in each naming and a few the file holds. */
int names_mismatch(const Model *m, const SafeTensors *st, const char *missing, char *err);

/* For a file without lmlab's configuration: sets in *c what the tensor shapes decide
 * (model family, d, nhid, layers, tie, pos, norm; for the paper's Dispatcher heads and
 * bptt; for the multi-head one bptt from the configured heads), keeping the rest of *c.
 * Writes a one-line summary into note (what was taken from the file and what from the
 * configuration). LM_OK, or LM_EFORMAT when the names fit no model lmlab has or the
 * shapes give a configuration outside the keys' ranges (d above 8192, ...). */
int names_infer_config(const SafeTensors *st, Config *c, char *note, size_t cap, char *err);

#endif
