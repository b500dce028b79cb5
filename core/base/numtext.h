/* numtext.h — the text of a number as the exports write it: the shortest "%.*g" of a
 * double that reads back as the same double (or as the same float, for a 32-bit value
 * stored as a double). Not a parser and not a general printf. */
#ifndef LM_NUMTEXT_H
#define LM_NUMTEXT_H

#define NUMTEXT_LEN 40   /* a buffer that holds any result */

/* The shortest "%.*g" of v (finite) that strtod reads back as v, or, when f32, whose
 * strtod cast to float equals (float)v (precisions 1..9 then; 1..17 otherwise), into buf
 * (NUMTEXT_LEN bytes). The same bytes as numtext_shortest_slow, found without printf for
 * most values (128-bit integers and Clinger's fast path; the rest take the slow way). */
void numtext_shortest(char *buf, double v, int f32);

/* The reference: a bisection over precisions, each tried with snprintf and strtod (a
 * precision that reads back makes every larger one read back). For the values the fast
 * path cannot take, and for test_numtext, which compares the two. */
void numtext_shortest_slow(char *buf, double v, int f32);

/* The decimal digits of a long (a minus sign when negative) at buf, NUL-terminated;
 * returns their length. buf holds at least 21 bytes. */
int numtext_long(char *buf, long long v);

#endif
