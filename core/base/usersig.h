/* usersig.h — proof that a stored text was written by the user running this process: an
 * HMAC-SHA256 (OpenSSL's libcrypto) under a per-user secret key kept in the user's own
 * configuration folder ($XDG_CONFIG_HOME/lmlab/key, else ~/.config/lmlab/key; made on first
 * signing, 32 random bytes, mode 0600). A key file that another user owns or that its group
 * or others may read or write is refused, so a writer of a shared run store can neither read
 * the key nor forge a code. The caller chooses the fields (a row's full content and its
 * context: store identity, ids); they are framed by length, so no two field lists share a
 * code. Not a store: the code is kept wherever the caller keeps the row. */
#ifndef LM_USERSIG_H
#define LM_USERSIG_H

#include <stddef.h>

#define USERSIG_HEX_LEN 65   /* 64 hex digits and the NUL */

/* Signs fields[0..n) (NUL-terminated strings) under the user's key, creating the key when
 * there is none. LM_OK with hex set, or LM_EIO/LM_EARG with a message (no home folder, an
 * unsafe or unreadable key file, no randomness). */
int usersig_sign(const char *const *fields, int n, char hex[USERSIG_HEX_LEN], char *err);

/* LM_OK when hex is the code of fields under the user's key; else LM_EARG with why in err
 * ("no code", "the code does not match", "no key of yours" ...). Never creates a key. */
int usersig_verify(const char *const *fields, int n, const char *hex, char *err);

/* The key file's path for this process (for messages and tests). */
void usersig_key_path(char *out, size_t cap);

#endif
