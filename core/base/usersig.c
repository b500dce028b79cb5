/* usersig.c — the per-user key and its HMAC-SHA256 codes (see usersig.h). The HMAC is
 * OpenSSL's (HMAC(3)); nothing cryptographic is written here. The key is read once per
 * process and path (XDG_CONFIG_HOME may change between calls in a test) and kept in memory. */
#include "usersig.h"
#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEY_LEN 32

static pthread_mutex_t key_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned char key_bytes[KEY_LEN];
static char key_loaded[1024];   /* the path key_bytes came from ("" = none yet) */

void usersig_key_path(char *out, size_t cap)
{
    const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
    if (x && x[0] == '/') snprintf(out, cap, "%s/lmlab/key", x);
    else if (h && h[0] == '/') snprintf(out, cap, "%s/.config/lmlab/key", h);
    else out[0] = 0;
}

/* Reads the key at path into key_bytes. LM_OK; LM_ESTATE when there is no file; LM_EIO or
 * LM_EARG (unsafe) with a message otherwise. */
static int key_read(const char *path, char *err)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? err_set(err, LM_ESTATE, "no key of yours at %s", path)
                               : err_set(err, LM_EIO, "cannot read your key %s: %s", path,
                                         strerror(errno));
    struct stat sb;
    int status = LM_OK;
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode))
        status = err_set(err, LM_EARG, "your key %s is not a regular file", path);
    else if (sb.st_uid != geteuid())
        status = err_set(err, LM_EARG, "your key %s belongs to uid %ld, not to you (uid %ld):"
                         " refused; remove it", path, (long)sb.st_uid, (long)geteuid());
    else if (sb.st_mode & 077)
        status = err_set(err, LM_EARG, "your key %s may be read or written by others (mode"
                         " %03o): refused; `chmod 600 %s`, or remove it if it may have been"
                         " read", path, (unsigned)(sb.st_mode & 0777), path);
    else if (sb.st_size != KEY_LEN || read(fd, key_bytes, KEY_LEN) != KEY_LEN)
        status = err_set(err, LM_EARG, "your key %s is not %d bytes: damaged; remove it (what"
                         " it signed will be refused)", path, KEY_LEN);
    close(fd);
    return status;
}

/* Makes the folders of path (mode 0700) and a fresh key file (0600): written whole under a
 * temporary name, then linked to path (atomic, fails when it exists), so a process that
 * finds the key never reads it half written; another process that made it first wins. */
static int key_create(const char *path, char *err)
{
    char dir[1024], tmp[1100];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(dir, 0700) && errno != EEXIST)
            return err_set(err, LM_EIO, "cannot make %s for your key: %s", dir, strerror(errno));
        *p = '/';
    }
    if (RAND_bytes(key_bytes, KEY_LEN) != 1)
        return err_set(err, LM_EIO, "no randomness for your key (OpenSSL RAND_bytes failed)");
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return err_set(err, LM_EIO, "cannot create your key %s: %s", tmp, strerror(errno));
    int ok = fchmod(fd, 0600) == 0 && write(fd, key_bytes, KEY_LEN) == KEY_LEN;
    ok = fsync(fd) == 0 && ok;
    close(fd);
    int linked = ok ? link(tmp, path) : -1, e = errno;
    unlink(tmp);
    if (linked && ok && e == EEXIST)
        return key_read(path, err);   /* another process made it first: theirs is the key */
    if (linked)
        return err_set(err, LM_EIO, "cannot write your key %s: %s", path, strerror(e));
    return LM_OK;
}

static int key_get(int create, char *err)
{
    char path[1024];
    usersig_key_path(path, sizeof path);
    if (!path[0])
        return err_set(err, LM_EIO, "no home folder for your lmlab key: set HOME or"
                       " XDG_CONFIG_HOME");
    pthread_mutex_lock(&key_mu);
    int status = !strcmp(key_loaded, path) ? LM_OK : key_read(path, err);
    if (status == LM_ESTATE && create) status = key_create(path, err);
    snprintf(key_loaded, sizeof key_loaded, "%s", status ? "" : path);
    pthread_mutex_unlock(&key_mu);
    return status;
}

static int mac_of(const char *const *fields, int n, unsigned char out[32], char *err)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) total += 8 + strlen(fields[i] ? fields[i] : "");
    unsigned char *msg = malloc(total + 1), *p = msg;
    if (!msg) return err_set(err, LM_ENOMEM, "out of memory signing");
    for (int i = 0; i < n; i++) {   /* each field framed by its 8-byte big-endian length */
        const char *f = fields[i] ? fields[i] : "";
        unsigned long long len = strlen(f);
        for (int b = 0; b < 8; b++) *p++ = (unsigned char)(len >> (56 - 8 * b));
        memcpy(p, f, len);
        p += len;
    }
    unsigned int got = 0;
    int ok = HMAC(EVP_sha256(), key_bytes, KEY_LEN, msg, total, out, &got) && got == 32;
    free(msg);
    return ok ? LM_OK : err_set(err, LM_EIO, "OpenSSL's HMAC failed");
}

int usersig_sign(const char *const *fields, int n, char hex[USERSIG_HEX_LEN], char *err)
{
    unsigned char m[32];
    int status = key_get(1, err);
    if (!status) status = mac_of(fields, n, m, err);
    if (status) return status;
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", m[i]);
    return LM_OK;
}

int usersig_verify(const char *const *fields, int n, const char *hex, char *err)
{
    if (!hex || strlen(hex) != 64) return err_set(err, LM_EARG, "it carries no code");
    unsigned char want[32], m[32];
    for (int i = 0; i < 32; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return err_set(err, LM_EARG, "its code is malformed");
        want[i] = (unsigned char)v;
    }
    int status = key_get(0, err);
    if (status == LM_ESTATE) return err_set(err, LM_EARG, "you have no key, so you signed nothing");
    if (!status) status = mac_of(fields, n, m, err);
    if (status) return status;
    return CRYPTO_memcmp(m, want, 32) ? err_set(err, LM_EARG, "its code does not match your key")
                                      : LM_OK;
}
