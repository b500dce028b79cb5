/* shardplan.c — the cut of a step's work into shards (see shardplan.h). */
#include "shardplan.h"

#include "err.h"

#include <stdio.h>

int shardplan_init(ShardPlan *p, int batch, int shards, char *err)
{
    if (batch < 1)
        return err_set(err, LM_EARG, "batch=%d: a batch needs at least one row", batch);
    int S = shards > 0 ? shards : (batch < SHARDPLAN_AUTO_MAX ? batch : SHARDPLAN_AUTO_MAX);
    if (S > batch)
        return err_set(err, LM_EARG, "shards=%d is more than batch=%d: every shard needs at "
                       "least one row of the batch (set shards=%d or fewer, or 0 for the "
                       "default, min(batch, %d))", shards, batch, batch, SHARDPLAN_AUTO_MAX);
    if (S > SHARDPLAN_MAX)
        return err_set(err, LM_EARG, "shards=%d is more than %d, the most a run can have",
                       shards, SHARDPLAN_MAX);
    p->B = batch;
    p->S = S;
    return LM_OK;
}

void shardplan_rows(int rows, int shards, int s, int *r0, int *r1)
{
    int base = rows / shards, extra = rows % shards;
    *r0 = s * base + (s < extra ? s : extra);
    *r1 = *r0 + base + (s < extra);
}

int shardplan_shards_for(const ShardPlan *p, int rows)
{
    return rows < p->S ? (rows > 0 ? rows : 1) : p->S;
}

void shardplan_share(int n, int owners, int i, int *lo, int *hi)
{
    shardplan_rows(n, owners, i, lo, hi);
}

void shardplan_chunk(size_t n, int c, size_t *lo, size_t *hi)
{
    size_t per = ((n + SHARDPLAN_NORM_CHUNKS - 1) / SHARDPLAN_NORM_CHUNKS + 15) & ~(size_t)15;
    *lo = per * (size_t)c < n ? per * (size_t)c : n;
    *hi = *lo + per < n ? *lo + per : n;
}

void shardplan_describe(const ShardPlan *p, char *buf, size_t cap)
{
    int lo = p->B / p->S, hi = lo + (p->B % p->S != 0);
    if (lo == hi)
        snprintf(buf, cap, "%d shard%s of %d row%s (batch %d)", p->S, p->S == 1 ? "" : "s",
                 lo, lo == 1 ? "" : "s", p->B);
    else
        snprintf(buf, cap, "%d shards of %d-%d rows (batch %d)", p->S, lo, hi, p->B);
}
