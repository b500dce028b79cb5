/* test_usersig.c — the per-user key and its HMAC-SHA256 codes (issue 46 item 1): the key
 * is made on first signing with mode 0600 in $XDG_CONFIG_HOME/lmlab; a code verifies under
 * the same key and fields only (a changed field, a moved boundary between fields, another
 * user's key all fail); a key file others may read, or that another user owns, is refused;
 * verifying never makes a key. The HMAC is checked against RFC 4231 test case 2's shape by
 * comparing with OpenSSL's command line when it is installed. */
#include "check.h"
#include "err.h"
#include "usersig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static void use_home(const char *name)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    setenv("XDG_CONFIG_HOME", p, 1);
}

int main(void)
{
    char err[LM_ERR_LEN], a[USERSIG_HEX_LEN], b[USERSIG_HEX_LEN], path[256];
    snprintf(dir, sizeof dir, "/tmp/lmlab-usersig-XXXXXX");
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    const char *f[] = {"store", "2", "step>5", "touch A"};
    const char *moved[] = {"store", "2", "step>5t", "ouch A"};
    const char *changed[] = {"store", "3", "step>5", "touch A"};

    use_home("alice");
    CHECK(usersig_verify(f, 4, "00", err) == LM_EARG, "a short code verified");
    usersig_key_path(path, sizeof path);
    CHECK(access(path, F_OK) != 0, "verifying made a key");
    CHECK(usersig_verify(f, 4, "0000000000000000000000000000000000000000000000000000000000000000",
                         err) == LM_EARG && strstr(err, "no key"), "no key: '%s'", err);
    CHECK(usersig_sign(f, 4, a, err) == LM_OK, "sign: %s", err);
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600 && sb.st_size == 32 &&
          sb.st_uid == geteuid(), "key %s: mode %o size %ld", path, (unsigned)sb.st_mode,
          (long)sb.st_size);
    CHECK(strlen(a) == 64, "64 hex digits: %s", a);
    CHECK(usersig_verify(f, 4, a, err) == LM_OK, "own code refused: %s", err);
    CHECK(usersig_sign(f, 4, b, err) == LM_OK && !strcmp(a, b), "the code is deterministic");
    CHECK(usersig_verify(moved, 4, a, err) == LM_EARG, "a moved field boundary verified");
    CHECK(usersig_verify(changed, 4, a, err) == LM_EARG && strstr(err, "does not match"),
          "a changed field verified: '%s'", err);
    b[0] = b[0] == '0' ? '1' : '0';
    CHECK(usersig_verify(f, 4, b, err) == LM_EARG, "a changed code verified");

    /* the code is the standard HMAC-SHA256 of the framed fields (OpenSSL's CLI agrees) */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "command -v openssl >/dev/null && printf '"
             "\\0\\0\\0\\0\\0\\0\\0\\005store\\0\\0\\0\\0\\0\\0\\0\\0012"
             "\\0\\0\\0\\0\\0\\0\\0\\006step>5\\0\\0\\0\\0\\0\\0\\0\\007touch A' |"
             " openssl dgst -sha256 -mac HMAC -macopt hexkey:$(od -An -tx1 %s | tr -d ' \\n')"
             " | sed 's/.*= //'", path);
    FILE *p = popen(cmd, "r");
    char line[128] = "";
    if (p && fgets(line, sizeof line, p)) line[strcspn(line, "\n")] = 0;
    if (p) pclose(p);
    if (line[0]) CHECK(!strcmp(line, a), "openssl says %s, usersig %s", line, a);
    else printf("SKIP: no openssl command line to compare with\n");

    /* another user's key (another folder) does not verify alice's code */
    use_home("mallory");
    CHECK(usersig_verify(f, 4, a, err) == LM_EARG, "mallory (no key) verified alice's code");
    CHECK(usersig_sign(f, 4, b, err) == LM_OK && strcmp(a, b), "mallory's code differs");
    use_home("alice");
    CHECK(usersig_verify(f, 4, b, err) == LM_EARG, "alice accepted mallory's code");

    /* an unsafe key file is refused, with what to do */
    use_home("loose");
    CHECK(usersig_sign(f, 4, b, err) == LM_OK, "sign: %s", err);
    usersig_key_path(path, sizeof path);
    chmod(path, 0644);
    use_home("alice");   /* the key in memory is alice's again */
    CHECK(usersig_verify(f, 4, a, err) == LM_OK, "alice again: %s", err);
    use_home("loose");
    CHECK(usersig_sign(f, 4, b, err) == LM_EARG && strstr(err, "chmod 600"),
          "a 0644 key was used: '%s'", err);
    CHECK(usersig_verify(f, 4, b, err) != LM_OK, "a 0644 key verified");
    if (geteuid() == 0) {   /* a key another user owns */
        chmod(path, 0600);
        CHECK(chown(path, 65534, 65534) == 0, "chown");
        use_home("alice");
        CHECK(usersig_verify(f, 4, a, err) == LM_OK, "alice again: %s", err);
        use_home("loose");
        CHECK(usersig_sign(f, 4, b, err) == LM_EARG && strstr(err, "not to you"),
              "a key owned by uid 65534 was used: '%s'", err);
    } else {
        printf("SKIP: not root, the foreign-owner case needs chown\n");
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) {}
    return check_summary();
}
