/* test_tokenize.c — the `tokenize TEXT` command through the real command table: pieces
 * and ids under char, basic_english, wordpiece and gpt2 settings (text and JSON output), and
 * its errors (no text, wordpiece without vocab=); `bench tokenizer` over a small file. Not a tokenizer test (test_tokenizer.c,
 * test_wordpiece.c). */
#include "check.h"
#include "cmd_bench.h"
#include "err.h"
#include "session.h"
#include "session_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
    char db[] = "/tmp/lmlab_tokenize_XXXXXX", line[4096];
    int fd = mkstemp(db);
    if (fd < 0) return 1;
    close(fd);
    Session s;
    session_init(&s, db);
    session_set_writer(&s, capture, NULL);
    const char *fx = getenv("LMLAB_FIXTURES");

    CHECK(run(&s, "tokenize Hi there") == LM_OK && strstr(out, "tokenizer=char") &&
          strstr(out, "8 pieces") && strstr(out, " H\n"), "char pieces: %s", out);
    CHECK(run(&s, "tokenize") != LM_OK && n_errors == 1 && strstr(out, "needs a text"), "no text: %s", out);
    CHECK(run(&s, "set tokenizer=wordpiece") != LM_OK && strstr(out, "vocab=PATH"),
          "wordpiece without vocab: %s", out);
    snprintf(line, sizeof line, "set data=wikitext-small tokenizer=wordpiece vocab=%s/wordpiece_vocab.txt "
             "lowercase=true", fx ? fx : "tests/fixtures");
    CHECK(run(&s, line) == LM_OK, "set wordpiece: %s", out);
    CHECK(run(&s, "tokenize \"An unaffable Café.\"") == LM_OK &&
          strstr(out, "tokenizer=wordpiece (30522 tokens): 6 pieces") && strstr(out, "14477  una\n") &&
          strstr(out, "20961  ##ffa\n") && strstr(out, "7668  cafe\n") && strstr(out, "1012  .\n"),
          "wordpiece pieces: %s", out);
    s.json = 1;
    CHECK(run(&s, "tokenize Café") == LM_OK &&
          strstr(out, "\"ids\":[7668]") && strstr(out, "\"pieces\":[\"cafe\"]"), "json: %s", out);
    s.json = 0;
    CHECK(run(&s, "set tokenizer=basic_english") == LM_OK, "set basic_english: %s", out);
    CHECK(run(&s, "tokenize \"The (film), it's\"") == LM_OK && strstr(out, "tokenizer=basic_english") &&
          strstr(out, "8 pieces") && strstr(out, "  the\n") && strstr(out, "  '\n"), "basic_english: %s", out);
    /* gpt2 from data/gpt2 (vocab= unset: the wordpiece vocab.txt set above is cleared) */
    CHECK(run(&s, "set tokenizer=gpt2 vocab=") == LM_OK, "set gpt2: %s", out);
    CHECK(run(&s, "tokenize \"Hello world, it's\"") == LM_OK &&
          strstr(out, "tokenizer=gpt2 (50257 tokens): 5 pieces") && strstr(out, "15496  Hello\n") &&
          strstr(out, "995   world\n") && strstr(out, "338  's\n"), "gpt2: %s", out);
    /* bench tokenizer over a small file: counts, not speed; a bad name refused first */
    char txt[] = "/tmp/lmlab_benchtok_XXXXXX";
    int tf = mkstemp(txt);
    CHECK(tf >= 0 && write(tf, "Hello world, it's", 17) == 17, "temp file");
    close(tf);
    reset();   /* its handler directly: `bench` would first measure the sgemm peak */
    CHECK(cmd_bench_tokenizer(&s, "char,gpt2", txt) == LM_OK && strstr(out, "encoding 17 bytes of") &&
          strstr(out, "17 tokens (1.00 bytes/token)") && strstr(out, "V=50257") &&
          strstr(out, "5 tokens (3.40 bytes/token)") && strstr(out, "MB per CPU-second"),
          "bench tokenizer: %s", out);
    CHECK(run(&s, "bench tokenizer tokenizer=gpt2,nope") != LM_OK && strstr(out, "'nope'") &&
          !strstr(out, "sgemm"), "bench tokenizer bad name: %s", out);
    remove(txt);
    session_free(&s);
    remove(db);
    return check_summary();
}
