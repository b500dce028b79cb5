/* regfile.h — opening a file the user named for reading, safely: a FIFO with no writer,
 * a device, a socket or a directory never blocks or is read as if it were a file; each
 * is refused with a message saying what the path is. The one "open a regular file"
 * prologue shared by the safetensors and torch.save readers, the checkpoint sniffer and
 * the vocab.txt / experiment file readers. Not for writing (outfile.h). */
#ifndef LM_REGFILE_H
#define LM_REGFILE_H

#include <stddef.h>
#include <stdio.h>

/* Opens path read-only, non-blocking while it is checked (so a FIFO cannot hang the
 * open), then blocking again: *fd (caller closes) and *size (its length). LM_OK;
 * LM_EIO when it cannot be opened (the message has strerror); LM_EARG when it is not a
 * regular file ("PATH: not a regular file (a FIFO)"). */
int regfile_open(const char *path, int *fd, size_t *size, char *err);

/* regfile_open as a stdio stream ("rb"); NULL with the message in err. */
FILE *regfile_fopen(const char *path, char *err);

/* Reads the whole regular file into *buf (malloc'd, size+1 bytes with a NUL after the
 * data; caller frees) and *size. LM_EFORMAT when it is larger than max bytes (the
 * message gives both sizes); LM_ENOMEM; LM_EIO when a read fails or the file shrinks;
 * as regfile_open otherwise. *buf is NULL on failure. */
int regfile_read(const char *path, size_t max, unsigned char **buf, size_t *size, char *err);

#endif
