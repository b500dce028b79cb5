/* dataset_cache.c — choosing the token cache of a configuration's data (see
 * dataset_cache.h). */
#include "dataset_cache.h"

#include "err.h"
#include "tokformat.h"

#include <stdio.h>
#include <string.h>

int dataset_cache_dir(const Config *c, const char *root, const Tokenizer *given, int prepare,
                      TokCacheProgressFn fn, void *ud, char *dir, size_t cap, char *err)
{
    dir[0] = 0;
    if (tokformat_detect(c->data) != TOKFORMAT_NONE)
        return LM_OK;   /* token files: read as they are */
    TokCacheRequest req;
    int rc = tokcache_request_config(&req, c, root, given, err);
    if (rc)
        return rc;
    if (prepare)
        return tokcache_ensure(&req, fn, ud, dir, cap, err);
    char key[TOKCACHE_KEY_LEN + 1], path[1200];
    if (tokcache_key(&req, key, err))
        return LM_OK;   /* the text path names what is wrong with the spec */
    snprintf(path, sizeof path, "%s/%s", root, key);
    TokCacheEntry e;
    tokcache_inspect(path, &e);
    if (e.state == TOKCACHE_FRESH && strlen(path) < cap)
        snprintf(dir, cap, "%s", path);
    return LM_OK;
}
