/* dashboard_fixture.h — what the dashboard's tests (test_dashboard_*.c) share: the
 * canvas capabilities they draw with, a whole frame rendered off-screen as text, the
 * hand-built Snapshot of a run in training and a new run store. The names are the ones
 * the cases used when they were one file, so the cases read unchanged. Not a test itself;
 * no terminal. */
#ifndef LM_DASHBOARD_FIXTURE_H
#define LM_DASHBOARD_FIXTURE_H

#include "canvas.h"
#include "dash_state.h"

/* Unicode with colour, and ASCII in monochrome. */
static const CanvasCaps U = {1, 1}, ASCII_MONO = {0, 0};

/* The dashboard d drawing sn on a w x h canvas with caps, as canvas_dump's text (the
 * caller frees it); the canvas goes to *keep (the caller destroys it) when keep is set. */
char *dump(Dashboard *d, const Snapshot *sn, int w, int h, const CanvasCaps *caps,
           Canvas **keep);

/* 1 when the text dump holds s (0 for a NULL dump). */
int has(const char *dump, const char *s);

/* A run at step 150 of 300 with a falling loss, three evaluations, 2 x 5 gates (layer 1
 * shift 16 fully open) and a sample; snapshot_free releases it. */
void make_snapshot(Snapshot *sn);

/* A new, empty run store at db, a writable "/tmp/...XXXXXX.db" template that mkstemps
 * fills in; NULL with err set when it cannot be opened (the caller CHECKs: this file's
 * checks would not count in the test's summary). */
RunStore *new_store(char *db, char *err);

#endif
