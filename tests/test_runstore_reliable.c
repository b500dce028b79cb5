/* test_runstore_reliable.c — issue 13 in the run store: run ids are never reused (not
 * after `rm` of the newest run, not after reopening), every store has its own identity,
 * run folders are named with it and a folder holding files a run did not write is
 * refused; liveness is a lock the OS drops when the training process dies. */
#include "runstore_util.h"
#include "rundir.h"

static void ids_never_reused(void)
{
    char path[512], err[LM_ERR_LEN];
    RunStore *s;
    db_path(path, sizeof path, "ids.db");
    CHECK(runstore_open(path, &s, err) == LM_OK, "open: %s", err);
    if (!s) return;
    long a = new_run(s, "a", "msa", "", NULL), b = new_run(s, "b", "msa", "", NULL);
    runstore_run_set_status(s, b, "finished", NULL, err);
    CHECK(runstore_delete_run(s, b, 0, err) == LM_OK, "delete: %s", err);
    long c = new_run(s, "c", "msa", "", NULL);
    CHECK(c > b, "after deleting the newest run %ld, the next run got id %ld", b, c);
    runstore_run_set_status(s, c, "finished", NULL, err);
    runstore_delete_run(s, c, 0, err);
    runstore_close(s);
    CHECK(runstore_open(path, &s, err) == LM_OK, "reopen: %s", err);
    if (!s) return;
    long d = new_run(s, "d", "msa", "", NULL);
    CHECK(d > c, "after reopening, id %ld reused (deleted %ld)", d, c);
    (void)a;
    runstore_close(s);
}

static void store_identity(void)
{
    char p1[512], p2[512], err[LM_ERR_LEN], id1[64], id2[64];
    RunStore *s;
    db_path(p1, sizeof p1, "ident1.db");
    db_path(p2, sizeof p2, "ident2.db");
    CHECK(runstore_open(p1, &s, err) == LM_OK, "%s", err);
    if (!s) return;
    snprintf(id1, sizeof id1, "%s", runstore_store_id(s));
    runstore_close(s);
    CHECK(strlen(id1) >= 8, "store id '%s' too short", id1);
    CHECK(runstore_open(p1, &s, err) == LM_OK, "%s", err);
    if (!s) return;
    CHECK(!strcmp(id1, runstore_store_id(s)), "store id changed on reopen: %s vs %s", id1,
          runstore_store_id(s));
    runstore_close(s);
    CHECK(runstore_open(p2, &s, err) == LM_OK, "%s", err);
    if (!s) return;
    snprintf(id2, sizeof id2, "%s", runstore_store_id(s));
    runstore_close(s);
    CHECK(strcmp(id1, id2), "two stores share the id %s", id1);

    /* two stores' run 1 never share a folder */
    char d1[600], d2[600];
    rundir_name(d1, sizeof d1, "runs", id1, 1);
    rundir_name(d2, sizeof d2, "runs", id2, 1);
    CHECK(strcmp(d1, d2), "run 1 of two stores: same folder %s", d1);
    CHECK(strstr(d1, id1) && strstr(d1, "run-1"), "folder %s lacks the run or store id", d1);
}

static void folder_with_foreign_files_refused(void)
{
    char runs[512], dir[700], file[800], err[LM_ERR_LEN];
    db_path(runs, sizeof runs, "runs");
    rundir_name(dir, sizeof dir, runs, "abcd1234", 5);
    CHECK(rundir_create(dir, err) == LM_OK, "fresh folder: %s", err);
    CHECK(rundir_create(dir, err) == LM_OK, "empty existing folder: %s", err);
    snprintf(file, sizeof file, "%s/step-00000100.safetensors", dir);
    FILE *f = fopen(file, "w");
    if (f) fclose(f);
    CHECK(rundir_create(dir, err) == LM_ESTATE, "folder with another run's files accepted");
    CHECK(strstr(err, "step-00000100.safetensors") != NULL, "message: %s", err);
}

static void run_all(void)
{
    ids_never_reused();
    store_identity();
    folder_with_foreign_files_refused();
}

int main(void)
{
    return runstore_test_main("run store reliability tests", run_all);
}
