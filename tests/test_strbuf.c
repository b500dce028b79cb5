/* test_strbuf.c — the growable printf buffer (strbuf.h): appends in order with their
 * formats, grows past its first allocation without losing text, an empty format leaves
 * it NULL-free and terminated, and after a failed growth (oom set) writes do nothing. */
#include "check.h"
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

int main(void)
{
    StrBuf b = {0};
    strbuf_printf(&b, "| run | #%ld ", 7L);
    strbuf_printf(&b, "%s|%c", "x", '\n');
    CHECK(b.p && !strcmp(b.p, "| run | #7 x|\n") && b.n == strlen(b.p) && !b.oom,
          "appends in order: '%s'", b.p ? b.p : "(null)");
    strbuf_printf(&b, "%s", "");
    CHECK(b.n == 14 && b.p[b.n] == 0, "an empty append keeps the text terminated");

    StrBuf g = {0};   /* 5000 lines of 10 characters: several doublings past 1024 */
    for (int i = 0; i < 5000; i++) strbuf_printf(&g, "line %04d\n", i);
    int whole = g.p && g.n == 50000 && strlen(g.p) == 50000 && g.cap > g.n;
    for (int i = 0; whole && i < 5000; i += 499) {
        char want[16];
        snprintf(want, sizeof want, "line %04d\n", i);
        whole = !memcmp(g.p + (size_t)i * 10, want, 10);
    }
    CHECK(whole && !g.oom, "grows without losing text: n=%zu cap=%zu", g.n, g.cap);
    char big[3000];   /* one append larger than the first allocation */
    memset(big, 'y', sizeof big - 1);
    big[sizeof big - 1] = 0;
    StrBuf h = {0};
    strbuf_printf(&h, "%s!", big);
    CHECK(h.p && h.n == 3000 && h.p[2999] == '!' && h.p[3000] == 0, "one large append");

    b.oom = 1;   /* as after a failed realloc: the text stays as it was */
    strbuf_printf(&b, "more");
    CHECK(b.n == 14 && !strcmp(b.p, "| run | #7 x|\n"), "no writes after oom");
    free(b.p), free(g.p), free(h.p);
    return check_summary();
}
