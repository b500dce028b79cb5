/* test_suggest.c — edit distance (with transpositions, case-insensitive) and the
 * nearest-candidate rule behind "did you mean". Exact integer comparisons. */
#include "check.h"
#include "suggest.h"

#include <string.h>

static int streq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static void test_distance(void)
{
    static const struct {
        const char *a, *b;
        int d;
    } cases[] = {
        {"", "", 0}, {"lr", "lr", 0}, {"", "abc", 3}, {"abc", "", 3},
        {"lrr", "lr", 1}, {"stpes", "steps", 1}, {"ab", "ba", 1}, {"kitten", "sitting", 3},
        {"LR", "lr", 0}, {"ca", "abc", 3}, /* OSA: no edit of a transposed pair */
        {"dispatcher", "dispacther", 1}, {"flaw", "lawn", 2},
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        int d = suggest_distance(cases[i].a, cases[i].b);
        CHECK(d == cases[i].d, "distance('%s','%s') = %d, want %d", cases[i].a, cases[i].b, d,
              cases[i].d);
        CHECK(suggest_distance(cases[i].b, cases[i].a) == d, "symmetric for '%s'", cases[i].a);
    }
    /* long strings: compared on a prefix plus the length difference, no overflow */
    char a[300], b[300];
    memset(a, 'x', 299);
    a[299] = 0;
    memset(b, 'x', 200);
    b[200] = 0;
    CHECK(suggest_distance(a, b) == 99, "long distance %d", suggest_distance(a, b));
}

static void test_nearest(void)
{
    const char *keys[] = {"lr", "steps", "epochs", "model", "batch", "bptt", "seed", NULL,
                          "sample_temp", "sample_tokens"};
    int n = (int)(sizeof keys / sizeof keys[0]);
    CHECK(streq(suggest_nearest("lrr", keys, n), "lr"), "lrr -> lr");
    CHECK(streq(suggest_nearest("stpes", keys, n), "steps"), "stpes -> steps");
    CHECK(streq(suggest_nearest("Steps", keys, n), "steps"), "case");
    CHECK(suggest_nearest("xyzzy", keys, n) == NULL, "xyzzy -> nothing");
    CHECK(suggest_nearest("", keys, n) == NULL, "empty word");
    CHECK(streq(suggest_nearest("bach", keys, n), "batch"), "bach -> batch");
    CHECK(streq(suggest_nearest("sample", keys, n), "sample_temp"), "prefix -> shortest");
    CHECK(streq(suggest_nearest("ep", keys, n), "epochs"), "short prefix");
    CHECK(suggest_nearest("e", keys, n) == NULL, "one letter: no prefix guess");
    CHECK(suggest_nearest("moddddel", keys, n) == NULL, "too far (3 > 8/3)");
    CHECK(streq(suggest_nearest("modl", keys, n), "model"), "modl -> model");
    CHECK(suggest_nearest("lr", NULL, 0) == NULL, "no candidates");
}

int main(void)
{
    test_distance();
    test_nearest();
    return check_summary();
}
