/* test_cmd_model.c — `import` and `save` through the real command table: the reference
 * fixtures (tests/fixtures/reference) imported from both file kinds with the model's
 * shape inferred and reported, `save names=reference` and the default lmlab names read
 * back from disk, and one clear error for each bad input (an unknown names= value, a
 * file under foreign names, a vocabulary that disagrees with the configured data, a
 * missing file). Not a test of the readers themselves (test_interop.c, test_pickle.c). */
#include "check.h"
#include "err.h"
#include "safetensors.h"
#include "session.h"
#include "session_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    session_free(&s);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd))
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_summary();
}
