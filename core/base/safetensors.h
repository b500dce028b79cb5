/* safetensors.h — reading and writing the safetensors format (huggingface.co/docs/safetensors):
 * an 8-byte little-endian header length N, N bytes of JSON mapping each tensor name to
 * {"dtype","shape","data_offsets":[begin,end]} plus an optional "__metadata__" object of
 * strings, then the raw little-endian data. Used for checkpoints and PyTorch fixtures.
 * Not a memory-mapped or streaming reader: the whole file is read into memory, which
 * suits the small models this project trains. JSON is handled by jansson. */
#ifndef LM_SAFETENSORS_H
#define LM_SAFETENSORS_H

#include <stddef.h>

enum { ST_F32, ST_F16, ST_BF16, ST_F64, ST_I64, ST_I32, ST_U8 };

#define ST_NAME_LEN 160
#define ST_MAX_DIM 8

typedef struct {
    char name[ST_NAME_LEN];
    int dtype;            /* ST_* */
    int ndim;
    long shape[ST_MAX_DIM];
    size_t numel;
    size_t begin, end;    /* byte offsets into the data area */
} StTensor;

typedef struct SafeTensors SafeTensors;   /* heap object */

/* Reads and validates the whole file at path; *out receives a SafeTensors the caller
 * releases with safetensors_close. Returns LM_OK, LM_EIO (missing, unreadable), LM_EARG
 * (not a regular file: a directory, a FIFO, a device; never blocks), LM_ENOMEM, or LM_EFORMAT with a message naming the file and the problem
 * (header length past the file or > 100 MB, invalid JSON, not an object, unknown dtype,
 * shape/offset mismatch, offsets out of the data area or overlapping, a missing field).
 * Never crashes on any input; *out is NULL on failure. */
int safetensors_open(const char *path, SafeTensors **out, char *err);

/* Where the bytes of a SafeTensors built by safetensors_open_source come from:
 * load(ctx, i, out, err) writes tensor i's end - begin bytes (contiguous,
 * little-endian, its dtype) into out, or returns a status with a message; it is called
 * only when a caller reads that tensor, after the read's count was checked against the
 * tensor's shape. release(ctx) is called once by safetensors_close. */
typedef struct {
    int (*load)(void *ctx, int i, unsigned char *out, char *err);
    void (*release)(void *ctx);
    void *ctx;
} StSource;

/* A SafeTensors of n tensors described by t (copied; begin/end are reassigned, packed
 * in order) whose bytes src produces on demand, with n_meta (key, value) string pairs in
 * meta (copied): torch.save files (torchfile.c) are read this way, so nothing a file
 * claims is materialised before a model asked for it. Takes src over (released also on
 * failure). LM_EFORMAT on a duplicate name or a malformed entry; LM_ENOMEM. Such a
 * SafeTensors has no data pointer (safetensors_data returns NULL); every read function
 * works on it, from one thread at a time (the source may keep state, e.g. a zip). */
int safetensors_open_source(const StTensor *t, int n, const char *const *meta, int n_meta,
                            const StSource *src, const char *label, SafeTensors **out,
                            char *err);

/* Releases everything; NULL is a no-op. */
void safetensors_close(SafeTensors *st);

/* Number of tensors (metadata excluded), and tensor i (0..count-1) in the order of the
 * file's JSON header; NULL when i is out of range. The pointer lives as long as st. */
int safetensors_count(const SafeTensors *st);
const StTensor *safetensors_at(const SafeTensors *st, int i);

/* The tensor with this name, or NULL if absent. */
const StTensor *safetensors_find(const SafeTensors *st, const char *name);

/* The __metadata__ value for key, or NULL. Owned by st. */
const char *safetensors_meta(const SafeTensors *st, const char *key);

/* Copies tensor `name` into out[0..n), converting F32/F16/BF16/F64 to float.
 * LM_EFORMAT when absent, of another dtype, or numel != n (the message names the
 * tensor, the expected count and the found shape). */
int safetensors_read_f32(const SafeTensors *st, const char *name, float *out, size_t n,
                         char *err);

/* Copies an I64/I32 tensor into out[0..n) as int; LM_EFORMAT when absent, of another
 * dtype, numel != n, or a value outside the int range. */
int safetensors_read_i32(const SafeTensors *st, const char *name, int *out, size_t n,
                         char *err);

/* Raw little-endian bytes of t (t->end - t->begin bytes, not necessarily aligned), or
 * NULL for a SafeTensors built by safetensors_open_source (use safetensors_read_raw). */
const void *safetensors_data(const SafeTensors *st, const StTensor *t);

/* Copies t's raw bytes (t->end - t->begin) into out (cap bytes). LM_EARG when they do
 * not fit; a source's failure (LM_EFORMAT, LM_ENOMEM) with its message. */
int safetensors_read_raw(const SafeTensors *st, const StTensor *t, void *out, size_t cap,
                         char *err);

/* Bytes per element of a dtype (0 for an unknown one). */
size_t safetensors_dtype_size(int dtype);

typedef struct SafeTensorsWriter SafeTensorsWriter;   /* heap object */

/* An empty writer, or NULL when out of memory. destroy(NULL) is a no-op. */
SafeTensorsWriter *safetensors_writer_create(void);
void safetensors_writer_destroy(SafeTensorsWriter *w);

/* Adds a tensor. The writer keeps the data pointer: data must stay valid until
 * safetensors_writer_write. LM_EARG on a duplicate or over-long name, a bad dtype or
 * shape; LM_ENOMEM. */
int safetensors_writer_add(SafeTensorsWriter *w, const char *name, int dtype, int ndim,
                           const long *shape, const void *data);

/* Sets a __metadata__ entry (both strings copied; a repeated key replaces the value). */
int safetensors_writer_meta(SafeTensorsWriter *w, const char *key, const char *value);

/* Writes the file atomically: path.tmp.<pid>, fsync, rename over path, fsync of the
 * directory. Tensors in sorted name order, header padded with spaces to a multiple
 * of 8. LM_ENOSPC (disk full; the message says how many bytes were needed) or LM_EIO;
 * on failure the temporary file is removed and an existing file at path is untouched. */
int safetensors_writer_write(SafeTensorsWriter *w, const char *path, char *err);

#endif
