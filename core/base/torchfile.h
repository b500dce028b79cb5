/* torchfile.h — PyTorch's own checkpoint files, as `torch.save` writes them since 1.6: a
 * zip holding ARCHIVE/data.pkl (a pickle of the saved object), one raw little-endian
 * storage per tensor under ARCHIVE/data/<key>, and ARCHIVE/version. The zip is read by
 * libzip (Debian's libzip-dev), the pickle by the restricted unpickler (pickle.h), which
 * never executes anything. The saved object may be a bare state_dict or a dict holding
 * one under "model_state_dict", "state_dict" or "model" (the Dispatcher repository's
 * training scripts save {'epoch': N, 'model_state_dict': sd}).
 * The result is an in-memory SafeTensors of the state_dict's tensors under their own
 * names (made contiguous, in their own dtype), so everything that reads safetensors reads
 * these too. Not here: the legacy pre-1.6 tar/pickle format (recognised and refused with
 * advice), or names (names_reference). */
#ifndef LM_TORCHFILE_H
#define LM_TORCHFILE_H

#include "safetensors.h"

#include <stddef.h>

/* 1 when buf starts like a zip file (local file header "PK\3\4"), else 0. */
int torchfile_is_zip(const unsigned char *buf, size_t n);

/* What a file's first bytes (n of them; 262 suffice) say it is. */
enum {
    TORCHFILE_OTHER,   /* none of these (perhaps safetensors) */
    TORCHFILE_ZIP,     /* torch.save since PyTorch 1.6 (or any zip) */
    TORCHFILE_LEGACY,  /* the legacy torch.save format (a pickled magic number, or a tar) */
    TORCHFILE_PICKLE   /* some other bare pickle (protocol 2..5) */
};
int torchfile_sniff(const unsigned char *buf, size_t n);

/* Reads the torch.save file at path into *out (release with safetensors_close). Its
 * metadata has "torch_state_dict_key": where the state_dict was found ("" = the file is
 * the state_dict). The tensors are described, not read: every size, offset and stride
 * is checked (overflow-checked) against what its storage's zip entry holds, and a
 * tensor's elements are decompressed and gathered only when it is read (the
 * SafeTensors is a safetensors_open_source one), from the part of the storage its view
 * reaches. A view spread sparsely over its storage (more than 4x its values plus 2^18
 * elements) is refused. LM_OK; LM_EIO (unreadable); LM_EARG (not a regular file);
 * LM_ENOMEM; LM_EFORMAT with a message naming the file and what was wrong (not a zip, a
 * legacy pre-1.6 torch.save file, no data.pkl, a refused pickle, no state_dict inside
 * and which keys there were, a storage missing, of the wrong size or absurd, a tensor
 * past its storage). A damaged storage (CRC) is reported when that tensor is read.
 * Tensors of types safetensors has no name for (bool, int8, int16) are left out. */
int torchfile_open(const char *path, SafeTensors **out, char *err);

/* The same over bytes in memory (not taken over); label names them in messages. */
int torchfile_open_memory(const unsigned char *buf, size_t n, const char *label,
                          SafeTensors **out, char *err);

#endif
