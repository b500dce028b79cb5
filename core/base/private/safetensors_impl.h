/* safetensors_impl.h — what the safetensors files share: the open file's (or source's)
 * state, built by safetensors.c and read by safetensors_read.c, and the dtype names the
 * reader's messages and the writer's header use. Private to core/base. */
#ifndef LM_SAFETENSORS_IMPL_H
#define LM_SAFETENSORS_IMPL_H

#include "safetensors.h"

#include <stddef.h>

struct SafeTensors {
    unsigned char *buf;   /* the whole file */
    size_t size;
    const unsigned char *data;   /* start of the data area */
    size_t data_len;
    StTensor *t;
    int n;
    char **meta;          /* key, value, key, value, ... */
    int n_meta;
    StSource src;         /* src.load != NULL: tensors produced on demand, buf unused */
};

/* The name of a known dtype (ST_*) as the format spells it: "F32", "BF16", ... */
const char *safetensors_dtype_name(int dtype);

#endif
