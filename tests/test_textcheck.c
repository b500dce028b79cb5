/* test_textcheck.c — text settings are validated when set (invalid UTF-8 and control
 * characters refused with a message naming the setting and the byte), and stored text is
 * escaped at output so it cannot drive the terminal (issue 13, items 2 and 6). */
#include "check.h"
#include "config.h"
#include "err.h"
#include "safetext.h"
#include "textcheck.h"

#include <stdlib.h>
#include <string.h>

static void refused(const char *key, const char *value, const char *needle)
{
    Config c;
    char err[LM_ERR_LEN] = "";
    config_defaults(&c);
    char before[CONFIG_STR_LEN];
    config_get(&c, key, before, sizeof before);
    int rc = config_set(&c, key, value, err);
    CHECK(rc == LM_EARG, "%s accepted a bad value", key);
    CHECK(strstr(err, needle) != NULL, "%s: message '%s' lacks '%s'", key, err, needle);
    CHECK(strstr(err, key) != NULL, "message '%s' does not name %s", err, key);
    char after[CONFIG_STR_LEN];
    config_get(&c, key, after, sizeof after);
    CHECK(!strcmp(before, after), "%s changed on refusal", key);
}

static void accepted(const char *key, const char *value)
{
    Config c;
    char err[LM_ERR_LEN] = "";
    config_defaults(&c);
    CHECK(config_set(&c, key, value, err) == LM_OK, "%s refused: %s", key, err);
}

static void escapes(const char *in, int flags, const char *want)
{
    char out[256];
    safetext_escape(out, sizeof out, in, flags);
    CHECK(!strcmp(out, want), "escape: got '%s' want '%s'", out, want);
    char *d = safetext_dup(in, flags);
    CHECK(d && !strcmp(d, want), "dup: got '%s' want '%s'", d ? d : "(null)", want);
    free(d);
}

int main(void)
{
    /* item 2: invalid UTF-8 and control characters are refused when set */
    refused("name", "a\x9b" "b", "not valid UTF-8");
    refused("name", "a\x9b" "b", "byte 2");
    refused("name", "\x1b]0;PWNED\a", "escape");
    refused("name", "two\nlines", "newline");
    refused("sample_prompt", "\x1b[2J", "escape");
    refused("sample_prompt", "x\xc2\x9b" "31m", "U+009B");
    refused("runs_dir", "runs\xff", "not valid UTF-8");
    refused("data", "a\rb", "carriage return");
    refused("init_from", "\xc0\xaf", "not valid UTF-8");         /* overlong '/' */
    refused("name", "\xed\xa0\x80", "not valid UTF-8");          /* surrogate */
    refused("name", "a\x7f", "DEL");
    accepted("name", "café-λ-run ✓");
    accepted("sample_prompt", "ROMEO:\n\tO");
    accepted("name", "");

    char err[LM_ERR_LEN];
    CHECK(textcheck_value("tag", "ok", 0, err) == LM_OK, "plain text refused: %s", err);
    CHECK(textcheck_value("note", "a\nb", TEXTCHECK_ALLOW_NEWLINE, err) == LM_OK, "%s", err);
    CHECK(textcheck_value("note", "a\x1b" "b", TEXTCHECK_ALLOW_NEWLINE, err) == LM_EARG,
          "escape accepted in a note");

    /* item 6: output escaping */
    escapes("\x1b]0;PWNED\a\x1b[2J", 0, "\\e]0;PWNED\\a\\e[2J");
    escapes("plain café ✓", 0, "plain café ✓");
    escapes("a\nb\tc", 0, "a\\nb\\tc");
    escapes("a\nb\tc", SAFETEXT_KEEP_NEWLINES, "a\nb\tc");
    escapes("bad\x9b" "byte", 0, "bad\\x9bbyte");
    escapes("c1\xc2\x9b" "x", 0, "c1\\u009bx");
    escapes("del\x7f", 0, "del\\x7f");
    /* issue 46 item 10: bidirectional controls never reorder what the user reads */
    escapes("x\xe2\x80\xaegnp.exe", 0, "x\\u202egnp.exe");
    escapes("a\xe2\x81\xa6" "b\xe2\x80\x8f" "c\xd8\x9c", 0, "a\\u2066b\\u200fc\\u061c");
    escapes("\xe2\x80\x94 dash stays", 0, "\xe2\x80\x94 dash stays");
    escapes(NULL, 0, "");
    char small[6];
    safetext_escape(small, sizeof small, "\x1b\x1b\x1b", 0);
    CHECK(!strcmp(small, "\\e\\e"), "truncation keeps whole escapes: '%s'", small);
    return check_summary();
}
