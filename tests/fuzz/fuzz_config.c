/* fuzz_config.c — libFuzzer target for the configuration parser: the input is read as
 * the text of a stored configuration (config_from_text), as an experiment file
 * (config_load_file, through a memfd) and line by line as `key=value` pairs
 * (config_set_pair), then validated. Invariants: a failure leaves a message; whatever
 * was accepted reads back to the same configuration through config_to_text (what run
 * store rows and checkpoints hold), so a resumed run gets exactly its settings; every
 * key formats; every number stays within its key's range.
 * Not built by meson: scripts/fuzz.sh builds and runs every target. By hand, from the
 * source root:
 *
 *   scripts/fuzz.sh 0 config     # builds /tmp/lmlab-fuzz/fuzz_config
 *   /tmp/lmlab-fuzz/fuzz_config -max_total_time=120 -max_len=8192 /tmp/config_work \
 *     tests/fuzz/corpus/config
 *   mkdir /tmp/config_min && /tmp/lmlab-fuzz/fuzz_config -merge=1 -use_counters=0 \
 *     /tmp/config_min tests/fuzz/corpus/config /tmp/config_work   # then replace the corpus
 */
#include "config.h"
#include "err.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_ASSERT(c) \
    do { \
        if (!(c)) __builtin_trap(); \
    } while (0)

/* Every key formats, and numbers lie in their ranges. */
static void fuzz_check_config(const Config *c)
{
    int n;
    const ConfigKey *keys = config_keys(&n);
    for (int i = 0; i < n; i++) {
        char buf[CONFIG_STR_LEN * 2];
        FUZZ_ASSERT(config_get(c, keys[i].key, buf, sizeof buf) == 0);
        if (keys[i].type == CFG_INT || keys[i].type == CFG_FLOAT) {
            double v = strtod(buf, NULL);
            FUZZ_ASSERT(isfinite(v) && v >= keys[i].min && v <= keys[i].max);
        }
    }
    FUZZ_ASSERT(config_get(c, "no_such_key", NULL, 0) == -1);
}

/* What was accepted survives config_to_text -> config_from_text unchanged. */
static void fuzz_round_trip(const Config *c)
{
    char err[LM_ERR_LEN];
    char *text = config_to_text(c);
    FUZZ_ASSERT(text);
    Config back;
    config_defaults(&back);
    FUZZ_ASSERT(config_from_text(&back, text, err) == LM_OK);
    char *again = config_to_text(&back);
    FUZZ_ASSERT(again && strcmp(text, again) == 0);
    free(text);
    free(again);
}

static void fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0)
        fd = memfd_create("fuzz_config", 0);
    if (fd < 0 || ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
        return;
    char path[64], err[LM_ERR_LEN] = "";
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    Config c;
    config_defaults(&c);
    if (config_load_file(&c, path, err) == LM_OK) {
        fuzz_check_config(&c);
        fuzz_round_trip(&c);
    } else {
        FUZZ_ASSERT(err[0]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    char err[LM_ERR_LEN] = "";
    Config c;
    config_defaults(&c);
    if (config_from_text(&c, text, err) == LM_OK) {
        fuzz_check_config(&c);
        fuzz_round_trip(&c);
        err[0] = 0;
        if (config_validate(&c, err) != LM_OK)
            FUZZ_ASSERT(err[0]);
    } else {
        FUZZ_ASSERT(err[0]);
    }
    /* each line as a command-line pair: a failure leaves the setting as it was */
    config_defaults(&c);
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        Config before = c;
        err[0] = 0;
        if (config_set_pair(&c, l, err) != LM_OK) {
            FUZZ_ASSERT(err[0] && memcmp(&before, &c, sizeof c) == 0);
        }
    }
    fuzz_check_config(&c);
    fuzz_round_trip(&c);
    free(text);
    fuzz_file(data, size);
    return 0;
}
