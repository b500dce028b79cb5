/* test_cmd_model.c — `import` and `save` through the real command table: the reference
 * fixtures (tests/fixtures/reference) imported from both file kinds with the model's
 * shape inferred and reported, `save names=reference` and the default lmlab names read
 * back from disk, and one clear error for each bad input (an unknown names= value, a
 * file under foreign names, a vocabulary that disagrees with the configured data, a
 * missing file), and issue 25's smaller items (test_reliability). Not a test of the
 * readers themselves (test_interop.c, test_pickle.c). */
#include "check.h"
#include "err.h"
#include "safetensors.h"
#include "session.h"
#include "session_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[64];

static const char *fixture(const char *name)
{
    static char buf[512];
    const char *dir = getenv("LMLAB_FIXTURES");
    snprintf(buf, sizeof buf, "%s/reference/%s", dir ? dir : "tests/fixtures", name);
    return buf;
}

/* The names in a saved file: 1 when `name` is present. */
static int has_tensor(const char *path, const char *name)
{
    char err[LM_ERR_LEN];
    SafeTensors *st = NULL;
    if (safetensors_open(path, &st, err))
        return 0;
    int found = safetensors_find(st, name) != NULL;
    safetensors_close(st);
    return found;
}

static void test_import_save(Session *s)
{
    char line[1024], path[128];
    snprintf(line, sizeof line, "set data=%s/v37.txt heads=2", tmpdir);
    CHECK(run(s, line) == LM_OK, "set: %s", out);
    const char *kinds[] = {"dispatcher.pt", "dispatcher-mh.safetensors", "msa.pt", "lstm.pt"};
    const char *models[] = {"model=dispatcher ", "model=dispatcher-mh ", "model=msa ", "model=lstm "};
    for (int i = 0; i < 4; i++) {
        snprintf(line, sizeof line, "import %s", fixture(kinds[i]));
        CHECK(run(s, line) == LM_OK && strstr(out, models[i]) && strstr(out, "from the file") &&
                  strstr(out, "imported"), "import %s: %s", kinds[i], out);
        if (i == 2)   /* MSA's tensors hold no bptt: it is the configuration's, and said so */
            CHECK(strstr(out, "layers=2 (from the file), heads=2 bptt=") &&
                      strstr(out, "(from your configuration: the file cannot tell)"),
                  "msa's bptt from the configuration: %s", out);
        CHECK(run(s, "sample prompt=ab tokens=5 seed=1") == LM_OK, "sample: %s", out);
        snprintf(path, sizeof path, "%s/ref%d.safetensors", tmpdir, i);
        snprintf(line, sizeof line, "save %s names=reference", path);
        CHECK(run(s, line) == LM_OK && strstr(out, "reference names"), "save: %s", out);
        CHECK(has_tensor(path, "encoder.weight") &&
                  has_tensor(path, i < 3 ? "pos_encoder.pe" : "rnn.weight_hh_l1") &&
                  !has_tensor(path, "blocks.0.linear1.weight"), "%s: reference names", path);
        snprintf(line, sizeof line, "import %s", path);   /* our own file: config inside */
        CHECK(run(s, line) == LM_OK && !strstr(out, "from the file"), "reimport: %s", out);
    }
    snprintf(path, sizeof path, "%s/lm.safetensors", tmpdir);
    snprintf(line, sizeof line, "import %s; save %s", fixture("msa.safetensors"), path);
    CHECK(run(s, line) == LM_OK && strstr(out, "lmlab names"), "save: %s", out);
    CHECK(has_tensor(path, "blocks.1.mixer.in_proj_weight") && !has_tensor(path, "pos_encoder.pe"),
          "lmlab names by default");
}

static void test_errors(Session *s)
{
    char line[1024], path[128];
    snprintf(path, sizeof path, "%s/x.safetensors", tmpdir);
    snprintf(line, sizeof line, "save %s names=pytorch", path);
    CHECK(run(s, line) != LM_OK && strstr(out, "names") && strstr(out, "reference"),
          "names=pytorch: %s", out);
    snprintf(path, sizeof path, "%s/foreign.safetensors", tmpdir);
    float w[4] = {0};
    long shape[2] = {2, 2};
    char err[LM_ERR_LEN];
    SafeTensorsWriter *wr = safetensors_writer_create();
    safetensors_writer_add(wr, "embed.weight", ST_F32, 2, shape, w);
    safetensors_writer_add(wr, "layer.weight", ST_F32, 2, shape, w);
    safetensors_writer_write(wr, path, err);
    safetensors_writer_destroy(wr);
    snprintf(line, sizeof line, "import %s", path);
    CHECK(run(s, line) != LM_OK && strstr(out, "expected lmlab's or the reference's names") &&
              strstr(out, "embed.weight") && strstr(out, "transformer_encoder.layers.0"),
          "foreign names: %s", out);
    snprintf(line, sizeof line, "set data=tinyshakespeare; import %s", fixture("lstm.pt"));
    CHECK(run(s, line) != LM_OK && strstr(out, "vocabulary of 37"), "vocab: %s", out);
    snprintf(line, sizeof line, "import %s/none.pt", tmpdir);
    CHECK(run(s, line) != LM_OK && strstr(out, "none.pt"), "missing: %s", out);
}

/* Issue 25's smaller items, each through the real commands: a save path longer than
 * the old 1,100-byte buffer lands where it says; open and import run train's memory
 * estimate before allocating; import and train init_from= warn of NaN/Inf weights as
 * open does; vocab=
 * naming a FIFO with no writer is refused at once (an alarm fails the test if it
 * blocks); an old-format torch.save file is named as such. */
static void test_reliability(Session *s)
{
    char line[4096], path[2048], err[LM_ERR_LEN];
    snprintf(line, sizeof line, "set data=%s/v37.txt heads=2", tmpdir);
    CHECK(run(s, line) == LM_OK, "set: %s", out);
    /* 1. a 1,200-byte path: ten nested 110-byte folders */
    int n = snprintf(path, sizeof path, "%s", tmpdir);
    for (int i = 0; i < 10; i++) {
        n += snprintf(path + n, sizeof path - (size_t)n, "/%0110d", i);
        mkdir(path, 0777);
    }
    snprintf(path + n, sizeof path - (size_t)n, "/long.safetensors");
    snprintf(line, sizeof line, "import %s; save %s", fixture("lstm.safetensors"), path);
    CHECK(strlen(path) > 1100 && run(s, line) == LM_OK && has_tensor(path, "rnn.weight_hh_l0"),
          "save to a %zu-byte path: %s", strlen(path), out);
    /* 2. train's memory estimate, before anything is allocated */
    snprintf(line, sizeof line, "set batch=65536 bptt=65536; import %s",
             fixture("lstm.safetensors"));
    CHECK(run(s, line) != LM_OK && strstr(out, "refused before allocating") &&
              strstr(out, "GiB is available"), "memory estimate on import: %s", out);
    snprintf(line, sizeof line, "open %s", fixture("lstm.safetensors"));
    CHECK(run(s, line) != LM_OK && strstr(out, "GiB is available"), "on open: %s", out);
    CHECK(run(s, "unset batch bptt") == LM_OK, "unset: %s", out);
    /* 3. NaN weights warn on import as on open */
    SafeTensors *st = NULL;
    CHECK(safetensors_open(fixture("lstm.safetensors"), &st, err) == LM_OK, "%s", err);
    SafeTensorsWriter *w = safetensors_writer_create();
    float *keep[64] = {0};
    for (int i = 0; st && i < safetensors_count(st) && i < 64; i++) {
        const StTensor *t = safetensors_at(st, i);
        keep[i] = malloc(t->numel * sizeof(float) + 4);
        safetensors_read_f32(st, t->name, keep[i], t->numel, err);
        if (!strcmp(t->name, "decoder.bias"))
            keep[i][3] = NAN;
        safetensors_writer_add(w, t->name, ST_F32, t->ndim, t->shape, keep[i]);
    }
    snprintf(path, sizeof path, "%s/nan.safetensors", tmpdir);
    CHECK(safetensors_writer_write(w, path, err) == LM_OK, "%s", err);
    safetensors_writer_destroy(w);
    safetensors_close(st);
    for (int i = 0; i < 64; i++)
        free(keep[i]);
    snprintf(line, sizeof line, "import %s", path);
    CHECK(run(s, line) == LM_OK && strstr(out, "1 non-finite weights") &&
              strstr(out, "decoder.bias"), "import of NaN weights: %s", out);
    snprintf(line, sizeof line, "open %s", path);
    CHECK(run(s, line) == LM_OK && strstr(out, "1 non-finite weights"), "open: %s", out);
    snprintf(line, sizeof line, "train init_from=%s model=lstm d=16 nhid=24 layers=2 tie=false "
             "steps=2 runs_dir=%s/runs; wait", path, tmpdir);
    run(s, line);
    CHECK(strstr(out, "1 non-finite weights") != NULL, "train init_from NaN weights: %s", out);
    /* 4. vocab= a FIFO with no writer */
    snprintf(path, sizeof path, "%s/vocab.fifo", tmpdir);
    CHECK(mkfifo(path, 0600) == 0, "mkfifo");
    alarm(60);
    snprintf(line, sizeof line, "set tokenizer=wordpiece vocab=%s; tokenize abc", path);
    CHECK(run(s, line) != LM_OK && strstr(out, "a FIFO"), "vocab FIFO: %s", out);
    alarm(0);
    CHECK(run(s, "unset tokenizer vocab") == LM_OK, "unset: %s", out);
    /* 5. torch.save's legacy format: its magic number, then a pickle */
    snprintf(path, sizeof path, "%s/legacy.pt", tmpdir);
    FILE *f = fopen(path, "wb");
    static const unsigned char legacy[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46,
                                           0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, 0x2e};
    if (f) {
        fwrite(legacy, 1, sizeof legacy, f);
        fclose(f);
    }
    snprintf(line, sizeof line, "import %s", path);
    CHECK(run(s, line) != LM_OK && strstr(out, "legacy torch.save") &&
              strstr(out, "_use_new_zipfile_serialization=True"), "legacy: %s", out);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/lmlab-cmdmodel-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    char path[128], db[128];
    snprintf(path, sizeof path, "%s/v37.txt", tmpdir);   /* 37 distinct chars: V = 37 */
    FILE *f = fopen(path, "w");
    for (int i = 0; f && i < 20; i++)
        fputs("abcdefghijklmnopqrstuvwxyz0123456789 ", f);
    if (f)
        fclose(f);
    snprintf(db, sizeof db, "%s/runs.db", tmpdir);
    Session s;
    session_init(&s, db);
    session_set_writer(&s, capture, NULL);
    test_import_save(&s);
    test_errors(&s);
    test_reliability(&s);
    session_free(&s);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd))
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_summary();
}
