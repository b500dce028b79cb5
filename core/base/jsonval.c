/* jsonval.c — JSON numbers and strings as every lmlab JSON writes them (see jsonval.h). */
#include "jsonval.h"

#include <jansson.h>
#include <math.h>
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
    char *copy = strdup(text);   /* json_string refuses text that is not UTF-8 */
    for (char *p = copy; p && *p; p++)
        if ((unsigned char)*p >= 0x80) *p = '?';
    j = json_string(copy ? copy : "");
    free(copy);
    return j;
}
