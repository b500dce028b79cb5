/* jsonval.c — JSON numbers and strings as every lmlab JSON writes them (see jsonval.h). */
#include "jsonval.h"
#include "textcheck.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *jsonval_num(double v)
{
    return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

json_t *jsonval_str(const char *text)
{
    json_t *j = json_string(text ? text : "");
    if (j) return j;
    /* json_string refuses text that is not UTF-8: each byte that is not becomes the four
     * characters \xNN, every valid character is kept (issue 46: nothing lost silently) */
    size_t n = strlen(text), o = 0;
    char *copy = malloc(4 * n + 1);
    if (!copy) return json_string("");
    for (size_t i = 0; i < n;) {
        unsigned cp;
        int k = textcheck_utf8_char((const unsigned char *)text + i, n - i, &cp);
        if (k > 0) {
            memcpy(copy + o, text + i, (size_t)k);
            o += (size_t)k, i += (size_t)k;
        } else {
            o += (size_t)snprintf(copy + o, 5, "\\x%02x", (unsigned char)text[i++]);
        }
    }
    copy[o] = 0;
    j = json_string(copy);
    free(copy);
    return j;
}
