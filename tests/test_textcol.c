/* test_textcol.c — text table cells (textcol.h): widths in characters, not bytes (UTF-8,
 * and a byte that is not UTF-8 as one); short cells padded to the column; long ones cut
 * to exactly the column with '…' at the end (values) or the start (labels), never inside
 * a character; a column of one holds only the marker; a small buffer stays terminated. */
#include "check.h"
#include "textcol.h"

#include <string.h>

int main(void)
{
    char out[256];
    CHECK(textcol_width("") == 0 && textcol_width(NULL) == 0 && textcol_width("loss") == 4,
          "ASCII widths");
    CHECK(textcol_width("na\xc3\xafve \xe2\x80\xa6") == 7 && textcol_width("\xff" "ab") == 3,
          "a UTF-8 character is one column, a stray byte one: %d",
          textcol_width("na\xc3\xafve \xe2\x80\xa6"));
    CHECK(!strcmp(textcol_fit(out, sizeof out, "lr", 5, TEXTCOL_KEEP_START), "lr   "),
          "padded: '%s'", out);
    CHECK(!strcmp(textcol_fit(out, sizeof out, "na\xc3\xafve", 6, TEXTCOL_KEEP_END),
                  "na\xc3\xafve "), "padded by characters: '%s'", out);
    CHECK(!strcmp(textcol_fit(out, sizeof out, "abcdefgh", 8, TEXTCOL_KEEP_START), "abcdefgh"),
          "exactly the width: unchanged: '%s'", out);
    CHECK(!strcmp(textcol_fit(out, sizeof out, "abcdefghij", 6, TEXTCOL_KEEP_START),
                  "abcde\xe2\x80\xa6"), "a value keeps its start: '%s'", out);
    CHECK(!strcmp(textcol_fit(out, sizeof out, "grad/blocks.3.w (last)", 10, TEXTCOL_KEEP_END),
                  "\xe2\x80\xa6" ".w (last)") && textcol_width(out) == 10,
          "a label keeps its end: '%s'", out);
    CHECK(!strcmp(textcol_fit(out, sizeof out, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 3,
                              TEXTCOL_KEEP_START), "\xc3\xa9\xc3\xa9\xe2\x80\xa6"),
          "cut between characters, not inside one: '%s'", out);
    CHECK(!strcmp(textcol_fit(out, sizeof out, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 3,
                              TEXTCOL_KEEP_END), "\xe2\x80\xa6\xc3\xa9\xc3\xa9"),
          "cut between characters at the start too: '%s'", out);
    CHECK(!strcmp(textcol_fit(out, sizeof out, "abc", 1, TEXTCOL_KEEP_START), "\xe2\x80\xa6") &&
          !strcmp(textcol_fit(out, sizeof out, "abc", 0, TEXTCOL_KEEP_END), "\xe2\x80\xa6"),
          "a column of one (or less) holds the marker: '%s'", out);
    char small[4];
    textcol_fit(small, sizeof small, "abcdef", 10, TEXTCOL_KEEP_START);
    CHECK(strlen(small) < sizeof small, "a small buffer stays terminated: '%s'", small);
    char big[TEXTCOL_MAX * 4 + 8], word[200];
    memset(word, 'x', sizeof word - 1);
    word[sizeof word - 1] = 0;
    CHECK(textcol_width(textcol_fit(big, sizeof big, word, TEXTCOL_MAX, TEXTCOL_KEEP_START)) ==
          TEXTCOL_MAX, "a 199-character value in the widest column: %d", textcol_width(big));
    return check_summary();
}
