/* cstream.h — a source file read as a stream of bytes, decompressed on the fly when it is
 * gzip (zlib), xz (liblzma) or zstd (libzstd), recognised by its magic bytes (the name's
 * suffix is not trusted). Counts and hashes the bytes as they are on disk (FNV-1a, the
 * source's content identity) and re-checks the file's size and mtime at its end, so a
 * file written while it is read is caught. Not a seekable reader: one pass, front to back. */
#ifndef LM_CSTREAM_H
#define LM_CSTREAM_H

#include <stddef.h>

typedef enum { CSTREAM_PLAIN, CSTREAM_GZIP, CSTREAM_XZ, CSTREAM_ZSTD } CStreamKind;

typedef struct CStream CStream;   /* heap object: cstream_open / cstream_close */

/* Opens a regular file (regfile rules: a FIFO or device is refused). LM_OK, LM_EIO (cannot
 * open: strerror), LM_EARG (not a regular file), LM_ENOMEM. */
int cstream_open(const char *path, CStream **out, char *err);

/* Reads up to cap decompressed bytes into buf; *n = 0 at the end. At the end the file's
 * size and mtime are compared with those at open: a change is LM_EIO ("changed while it
 * was read"). LM_EFORMAT for a corrupt or truncated compressed stream (naming the path and
 * the byte offset on disk), LM_EIO for a failed read. */
int cstream_read(CStream *s, char *buf, size_t cap, size_t *n, char *err);

/* Bytes read from disk so far, the file's size and mtime (ns) at open, and the FNV-1a
 * (tokenizer_fnv1a) of the bytes read from disk so far. */
unsigned long long cstream_raw_done(const CStream *s);
unsigned long long cstream_raw_size(const CStream *s);
long long cstream_mtime_ns(const CStream *s);
unsigned long long cstream_raw_hash(const CStream *s);

/* A second FNV-1a of the bytes on disk that continues from h (set before the first read):
 * chained over several files it is the hash of their bytes one after another. */
void cstream_chain_from(CStream *s, unsigned long long h);
unsigned long long cstream_chain(const CStream *s);

/* Closes; NULL is a no-op. */
void cstream_close(CStream *s);

#endif
