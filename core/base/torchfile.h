/* torchfile.h — PyTorch's own checkpoint files, as `torch.save` writes them since 1.6: a
 * zip holding ARCHIVE/data.pkl (a pickle of the saved object), one raw little-endian
 * storage per tensor under ARCHIVE/data/<key>, and ARCHIVE/version. The zip is read by
 * libzip (Debian's libzip-dev), the pickle by the restricted unpickler (pickle.h), which
 * never executes anything. The saved object may be a bare state_dict or a dict holding
 * one under "model_state_dict", "state_dict" or "model" (the Dispatcher repository's
 * training scripts save {'epoch': N, 'model_state_dict': sd}).
 * The result is an in-memory SafeTensors of the state_dict's tensors under their own
 * names (made contiguous, in their own dtype), so everything that reads safetensors reads
 * these too. Not here: the legacy pre-1.6 tar/pickle format, or names (names_reference). */
#ifndef LM_TORCHFILE_H
#define LM_TORCHFILE_H

#include "safetensors.h"

#include <stddef.h>

/* 1 when buf starts like a zip file (local file header "PK\3\4"), else 0. */
int torchfile_is_zip(const unsigned char *buf, size_t n);

/* Reads the torch.save file at path into *out (release with safetensors_close). Its
 * metadata has "torch_state_dict_key": where the state_dict was found ("" = the file is
 * the state_dict). LM_OK; LM_EIO (unreadable); LM_ENOMEM; LM_EFORMAT with a message
 * naming the file and what was wrong (not a zip, no data.pkl, a refused pickle, no
 * state_dict inside and which keys there were, a storage missing or of the wrong size).
 * Tensors of types safetensors has no name for (bool, int8, int16) are left out. */
int torchfile_open(const char *path, SafeTensors **out, char *err);

/* The same over bytes in memory (not taken over); label names them in messages. */
int torchfile_open_memory(const unsigned char *buf, size_t n, const char *label,
                          SafeTensors **out, char *err);

#endif
