/* test_dashboard_views.c — the dashboard's other views rendered off-screen (no
 * terminal): sweep, per-token, system and grid; and the view table's rules: each view's
 * keys and the focus rules of the key table, a view owning its state (a throwaway view
 * defined here), and letters of command names that never act. The training and history
 * views: test_dashboard_train.c, test_dashboard_history.c. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "canvas.h"
#include "commands.h"
#include "check.h"
#include "dashboard_fixture.h"
#include "dash_data.h"
#include "dash_groups.h"
#include "dash_draw.h"
#include "runkeys.h"
#include "dash_keymap.h"
#include "dash_render.h"
#include "dash_state.h"
#include "views.h"
#include "view_sweep.h"
#include "view_system.h"
#include "view_grid.h"
#include "view_train.h"

#include <curses.h>

/* The sweep view: the trials table (swept values, status, best val) and best val
 * against a swept setting, log x when it spans more than 20x; # picks the other key. */
static void test_sweep_view(void)
{
    Dashboard d;
    Snapshot sn;
    dash_state_init(&d);
    make_snapshot(&sn);
    d.view = views_find("sweep");
    char *s = dump(&d, &sn, 80, 24, &U, NULL);
    CHECK(has(s, "no sweep yet"), "the empty sweep view says how to start one");
    free(s);
    SweepView *w = dash_view_state(&d, &view_sweep);   /* the view's own state */
    CHECK(w && w->sw_id == 0 && !w->sw_trials, "the sweep view's state starts empty");
    if (!w) return;
    w->sw_id = 4;
    snprintf(w->sw_name, sizeof w->sw_name, "lrs");
    snprintf(w->sw_status, sizeof w->sw_status, "running");
    w->n_sw_trials = 3;
    w->sw_trials = calloc(3, sizeof *w->sw_trials);
    static const char *const params[] = {"lr=0.0001 d=64", "lr=0.001 d=64", "lr=0.01 d=128"};
    for (int i = 0; i < 3; i++) {
        SweepTrialRow *t = &w->sw_trials[i];
        t->trial = i;
        t->run_id = 10 + i;
        snprintf(t->params, sizeof t->params, "%s", params[i]);
        snprintf(t->status, sizeof t->status, i == 2 ? "running" : "done");
        t->best_val = i == 2 ? NAN : 2.0 - 0.5 * i;
        t->last_step = 100;
    }
    s = dump(&d, &sn, 80, 24, &U, NULL);
    CHECK(has(s, "sweep #4 lrs: running, 3 trials"), "sweep title: %s", s ? s : "");
    CHECK(has(s, "lr=0.001 d=64") && has(s, "1.5000") && has(s, "#11"), "trials listed: %s", s ? s : "");
    CHECK(has(s, "best val loss vs lr") && has(s, "lr (log)") && !has(s, "-3."),
          "chart against lr, log x in lr's units (issue 33 item 14): %s", s);
    CHECK(!has(s, "nan point") && !has(s, "×"),
          "a running trial with no best yet is no point, not a NaN mark: %s", s);
    free(s);
    w->sw_param = 1;
    s = dump(&d, &sn, 80, 24, &U, NULL);
    CHECK(has(s, "best val loss vs d") && !has(s, "(log)"), "# picks d (linear x)");
    free(s);
    /* issue 33 item 14: the parallel coordinates have no 0..1 y ticks (the positions are
     * normalised; each axis names its own ends) */
    w->sw_param = 2;
    s = dump(&d, &sn, 100, 30, &U, NULL);
    CHECK(s && has(s, "best val") && !has(s, "0.5┤") && !has(s, "1.0┤") && !has(s, "  1┤"),
          "parallel coordinates without 0..1 ticks: %s", s ? s : "");
    CHECK(s && !has(s, "nan point") && !has(s, "nan/inf"),
          "parallel coordinates: no NaN marks for their gaps: %s", s ? s : "");
    free(s);
    snapshot_free(&sn);
    dash_state_free(&d);
}

static void test_tokens(void)
{
    Dashboard d;
    Snapshot sn;
    dash_state_init(&d);
    make_snapshot(&sn);
    d.view = views_find("tokens");
    DashTokens *t = dash_view_state(&d, views_get(d.view));   /* the view's own state */
    CHECK(t && !strncmp(t->prompt, "ROMEO:", 6), "the tokens view's state, made by its init");
    if (!t) return;
    const char *texts[] = {"R", "O", "\\n", " "};
    t->n_tok = 4, t->layers = 2, t->levels = 3, t->layer = 1;
    t->text = malloc(4 * sizeof *t->text);
    t->gates = malloc(2 * 4 * 3 * sizeof *t->gates);
    for (int j = 0; j < 4; j++)
        snprintf(t->text[j], sizeof t->text[j], "%s", texts[j]);
    for (int i = 0; i < 24; i++)
        t->gates[i] = i % 3 == 2 && i >= 12 ? 1.0f : 0.0f;
    t->gates[12] = NAN;
    snprintf(t->source, sizeof t->source, "run #7 (live weights)");
    Canvas *c;
    char *s = dump(&d, &sn, 80, 24, &U, &c);
    CHECK(has(s, "layer 1 of 2"), "layer shown");
    CHECK(has(s, "shift 1") && has(s, "shift 4"), "level labels");
    CHECK(has(s, "RO↵␣"), "tokens in a row, newline and space made visible");
    CHECK(has(s, "█"), "an open gate is a filled cell");
    CHECK(has(s, "run #7 (live weights)"), "weights source");
    free(s);
    canvas_destroy(c);
    t->error[0] = 0;
    snprintf(t->error, sizeof t->error, "no model open: `open ID` or `train`");
    t->layers = 0;
    s = dump(&d, &sn, 80, 24, &U, NULL);
    CHECK(has(s, "no model open: `open ID` or `train`"), "error shown");
    CHECK(!has(s, "layer 0 of 0") && !has(s, "of 0"), "no 'layer 0 of 0' without a model");
    free(s);
    snapshot_free(&sn);
    dash_state_free(&d);
}

/* Issue 37: the system view draws tok/s beside load and CPU, the newest sample's facts
 * and the console pane (its escaping is view_system.c's console_add, tested end to end by
 * e2e_track.sh through `log`). */
static void test_system_view(void)
{
    Dashboard d;
    dash_state_init(&d);
    Snapshot sn;
    make_snapshot(&sn);
    d.view = views_find("system");
    SystemView *w = dash_view_state(&d, &view_system);   /* the view's own state */
    w->sys_run = 7;
    w->n_sys = 20;
    w->sys = calloc(20, sizeof *w->sys);
    for (int i = 0; w->sys && i < 20; i++)   /* load rises as tok/s falls */
        w->sys[i] = (SysSample){.t = 1e9 + 5.0 * i, .cpu = 190 - 4 * i, .rss_mb = 50,
                               .threads = 3, .load1 = 1.0 + 0.2 * i, .mem_avail_mb = 900,
                               .mem_total_mb = 2000, .tokens_per_s = 20000 - 500 * i};
    w->console = textpane_create(100);
    textpane_append(w->console, "08:00:00 warning  evil line here\n", -1, 0, 0);
    Canvas *c = NULL;
    char *s = dump(&d, &sn, 120, 40, &U, &c);
    CHECK(has(s, "tokens/s") && has(s, "load (1 min)") && has(s, "cpu (cores)") &&
          has(s, "threads 3") && has(s, "console") && has(s, "evil line"), "system view: %s",
          s ? s : "(none)");
    free(s);
    canvas_destroy(c);
    /* 80 columns cannot hold eight tab names and the focus badge: the others abbreviate
     * (to their first letter: three letters each do not fit beside the badge either) */
    d.focus = DASH_FOCUS_VIEW;
    s = dump(&d, &sn, 80, 24, &U, NULL);
    CHECK(has(s, " 7 system ") && has(s, " 1 t ") && has(s, " 2 h ") && has(s, " 8 g ") &&
          has(s, "VIEW KEYS"),
          "compact tabs at 80 columns: %s", s ? s : "");
    free(s);
    /* eight views (issue 48's grid) at 80 columns: whichever is on and whichever part has
     * the keys, the badge shows (the others down to a letter or their number) */
    int view0 = d.view;
    for (int v = 0; v < views_count(); v++)
        for (int f = DASH_FOCUS_VIEW; f <= DASH_FOCUS_OUTPUT; f++) {
            d.view = v;
            d.focus = f;
            s = dump(&d, &sn, 80, 24, &U, NULL);
            CHECK(s && has(s, f == DASH_FOCUS_VIEW ? "VIEW KEYS" : "OUTPUT KEYS") &&
                  has(s, views_get(v)->name), "view %d, focus %d at 80 columns: %s", v, f,
                  s ? s : "");
            free(s);
        }
    d.view = view0;
    d.focus = DASH_FOCUS_VIEW;
    snapshot_free(&sn);
    dash_state_free(&d);
}

/* A live run's grid reads only its new points: an old row changed behind its back stays
 * as first read (so it was not read again), the new steps are appended, a histogram's
 * too, and a series that appears makes it read all again. */
static void grid_update_checks(GridView *w, RunStore *st, const char *db, long id, NamedHist *hh)
{
    char err[LM_ERR_LEN];
    sqlite3 *other = NULL;
    snprintf(w->pattern, sizeof w->pattern, "loss");
    CHECK(view_grid_load(w, st, id) == LM_OK && w->n == 1 && w->len[0] == 11, "loss: %d", w->n ? w->len[0] : -1);
    double first = w->y[0][0];
    char sql[120];
    snprintf(sql, sizeof sql, "UPDATE metrics SET loss=42 WHERE run_id=%ld AND step=10", id);
    CHECK(sqlite3_open(db, &other) == SQLITE_OK && sqlite3_exec(other, sql, NULL, NULL, NULL) ==
          SQLITE_OK, "an old row changed by another connection");
    sqlite3_close(other);
    for (long t = 120; t <= 140; t += 10) {
        StepMetric m = {.step = t, .loss = 1.5f, .lr = 1e-3f, .grad_norm = 1.0f, .tokens = t * 64,
                        .tokens_per_s = 1000};
        runstore_log_step(st, id, &m, err);
    }
    runstore_flush(st, err);
    CHECK(view_grid_update(w, st) == LM_OK && w->len[0] == 14 && w->x[0][13] == 140 &&
          w->y[0][13] == 1.5 && w->y[0][0] == first, "new steps appended, the old not read again: "
          "%d points, first %g", w->len[0], w->y[0][0]);
    CHECK(view_grid_load(w, st, id) == LM_OK && w->y[0][0] == 42, "a whole read sees the change");
    snprintf(w->pattern, sizeof w->pattern, "sys/cpu");   /* samples by time: steps repeat */
    SysSample x = {.t = 1000, .step = 140, .cpu = 50, .threads = 1, .tokens_per_s = NAN};
    runstore_sys_log(st, id, &x, err);
    runstore_flush(st, err);
    CHECK(view_grid_load(w, st, id) == LM_OK && w->n == 1 && w->len[0] == 1, "sys/cpu: %d", w->n);
    x.t = 1001, x.cpu = 60;
    runstore_sys_log(st, id, &x, err);   /* the same step, a second later */
    x.t = 1002, x.step = 150, x.cpu = 70;
    runstore_sys_log(st, id, &x, err);
    runstore_flush(st, err);
    CHECK(view_grid_update(w, st) == LM_OK && w->len[0] == 3 && w->y[0][1] == 60 && w->y[0][2] == 70,
          "a sample at the step already read is not lost: %d points", w->len[0]);
    snprintf(w->pattern, sizeof w->pattern, "hist/*");
    view_grid_load(w, st, id);
    runstore_hist_log(st, id, 150, hh, 1, err);
    runstore_flush(st, err);
    CHECK(view_grid_update(w, st) == LM_OK && w->n == 1 && w->n_hist[0] == 3 &&
          w->hist[0][2].step == 150 && w->len[0] == 3, "a histogram's new step appended: %d",
          w->n ? w->n_hist[0] : -1);
    snprintf(hh->name, sizeof hh->name, "hist/weight/v");
    runstore_hist_log(st, id, 150, hh, 1, err);
    runstore_flush(st, err);
    CHECK(view_grid_update(w, st) == LM_OK && w->n == 2 && w->n_hist[0] + w->n_hist[1] == 4,
          "a new series: read whole (%d series)", w->n);
}

/* Issue 48: the grid view draws every series of a run as a small chart titled with its
 * registry name, arrows move the pick by one and by a row, Enter enlarges it with its
 * unit and help, a pattern keeps the matching series, and one that matches nothing says
 * so with the run's names. */
static void test_grid_view(void)
{
    char db[] = "/tmp/lmlab-dash-grid-XXXXXX.db", err[LM_ERR_LEN];
    RunStore *st = new_store(db, err);
    CHECK(st, "open: %s", err);
    if (!st) return;
    long id = 0;
    RunInfo info = {.name = "g", .config = "lr=0.001\n", .model = "dispatcher"};
    runstore_run_create(st, &info, &id, err);
    for (long t = 10; t <= 100; t += 10) {
        StepMetric m = {.step = t, .loss = 3.0f - 0.01f * (float)t, .lr = 1e-3f,
                        .grad_norm = 1.0f, .tokens = t * 64, .tokens_per_s = 1000};
        runstore_log_step(st, id, &m, err);
    }
    StepMetric bad = {.step = 110, .loss = NAN, .lr = 1e-3f, .grad_norm = INFINITY,
                      .tokens = 110 * 64, .tokens_per_s = 1000};   /* the step it diverged */
    runstore_log_step(st, id, &bad, err);
    EvalMetric e = {.step = 100, .split = "valid", .loss = 2.1, .ppl = 8.2, .bpc = NAN};
    runstore_log_eval(st, id, &e, err);
    GateStat g[2] = {{.step = 100, .layer = 0, .level = 0, .mean = 0.4f},
                     {.step = 100, .layer = 0, .level = 1, .mean = 0.6f}};
    runstore_log_gates(st, id, g, 2, err);
    NamedHist *hh = calloc(1, sizeof *hh);   /* a histogram series: a heat strip */
    float xs[6] = {0, 1, 1, 2, 2, 2};
    snprintf(hh->name, sizeof hh->name, "hist/weight/w");
    series_hist_fill(&hh->h, xs, 6);
    runstore_hist_log(st, id, 50, hh, 1, err);
    runstore_hist_log(st, id, 100, hh, 1, err);
    NamedHist *hh_log = hh;
    CHECK(runstore_flush(st, err) == LM_OK, "flush: %s", err);
    Dashboard d;
    dash_state_init(&d);
    Snapshot sn;
    make_snapshot(&sn);
    d.view = views_find("grid");
    GridView *w = dash_view_state(&d, &view_grid);
    CHECK(w && !strcmp(w->pattern, "*"), "every series at first");
    if (!w) return;
    CHECK(view_grid_load(w, st, id) == LM_OK && w->n >= 10, "loaded %d series: %s", w->n, w->msg);
    char *s = dump(&d, &sn, 120, 40, &U, NULL);
    CHECK(has(s, "series *:") && has(s, " loss ") && has(s, " val_loss ") &&
          has(s, " grad_norm "), "small charts titled by name: %s", s ? s : "");
    CHECK(has(s, "1 nan point marked ×") && has(s, "1 +inf point marked ▲"),
          "a tile marks the step that diverged (loss NaN, gradient norm inf): %s", s ? s : "");
    free(s);
    view_grid_move(w, VIEW_GRID_RIGHT);
    view_grid_move(w, VIEW_GRID_RIGHT);   /* epoch, tokens, loss */
    CHECK(w->sel == 2, "right twice: %d", w->sel);
    view_grid_move(w, VIEW_GRID_DOWN);
    CHECK(w->sel == 2 + w->cols, "down a row of %d: %d", w->cols, w->sel);
    view_grid_move(w, VIEW_GRID_UP);
    view_grid_move(w, VIEW_GRID_ENLARGE);
    s = dump(&d, &sn, 120, 40, &U, NULL);
    CHECK(w->enlarged && has(s, "loss [nats/token]: training loss"), "enlarged: %s", s ? s : "");
    free(s);
    view_grid_move(w, VIEW_GRID_ENLARGE);
    snprintf(w->pattern, sizeof w->pattern, "gate/*");
    CHECK(view_grid_load(w, st, id) == LM_OK && w->n == 2 && !strcmp(w->names[1], "gate/0/1"),
          "gate/*: %d", w->n);
    snprintf(w->pattern, sizeof w->pattern, "hist/*");
    CHECK(view_grid_load(w, st, id) == LM_OK && w->n == 1 && w->n_hist[0] == 2, "hist/*: %d", w->n);
    s = dump(&d, &sn, 120, 40, &U, NULL);
    CHECK(has(s, "hist/weight/w") && has(s, "steps 50..100  last [0, 2]") && has(s, "█"),
          "a histogram as a heat strip: %s", s ? s : "");
    free(s);
    grid_update_checks(w, st, db, id, hh_log);
    snprintf(w->pattern, sizeof w->pattern, "grd/*");
    CHECK(view_grid_load(w, st, id) == LM_EARG && w->n == 0, "grd/* matches nothing");
    s = dump(&d, &sn, 120, 40, &U, NULL);
    CHECK(has(s, "no series of run") && has(s, "grd/*"), "said in the view: %s", s ? s : "");
    free(s);
    free(hh_log);
    snapshot_free(&sn);
    dash_state_free(&d);
    runstore_close(st);
    remove(db);
}

static void test_key_rules(void)
{
    Dashboard d;
    dash_state_init(&d);
    int arg, hist = views_find("history"), tok = views_find("tokens");
    int sweep = views_find("sweep");
    /* the table, whatever its length: each view found by its name at its place, and its
     * digit (1 + its place) shows it */
    int nv = views_count();
    CHECK(nv >= 1 && nv <= DASH_MAX_VIEWS, "%d views (1 .. %d: one digit each)", nv,
          DASH_MAX_VIEWS);
    for (int v = 0; v < nv; v++) {
        CHECK(views_find(views_get(v)->name) == v, "view %d (%s) found at its place", v,
              views_get(v)->name);
        CHECK(dash_keymap_action(&d, '1' + v, &arg) == DA_VIEW && arg == v, "%c: the %s view",
              '1' + v, views_get(v)->name);
    }
    CHECK(views_find("training") == 0 && hist >= 0 && tok >= 0 && sweep >= 0 &&
          views_find("jobs") >= 0 && views_find("samples") >= 0 && views_find("system") >= 0 &&
          views_find("nope") == -1,
          "the view table");
    CHECK(dash_keymap_action(&d, DASH_KEY_FN(KEY_F(5)), &arg) == DA_PAUSE,
          "F5 still pauses (the 4th view has its digit only)");
    CHECK(dash_keymap_view_fkey(3) == 0 && dash_keymap_view_fkey(2) == 4, "view F-keys");
    CHECK(dash_keymap_action(&d, DASH_KEY_FN(KEY_F(2 + tok)), &arg) == DA_VIEW && arg == tok,
          "F%d: the tokens view", 2 + tok);
    CHECK(dash_keymap_action(&d, '2', &arg) == DA_VIEW && arg == hist, "digit on an empty line");
    CHECK(dash_keymap_action(&d, 'p', &arg) == DA_NONE, "letters type while the line has focus");
    CHECK(dash_keymap_action(&d, '\t', &arg) == DA_FOCUS_NEXT, "Tab on an empty line: focus");
    CHECK(dash_keymap_action(&d, DASH_KEY_FN(KEY_F(1)), &arg) == DA_HELP, "F1 always");
    CHECK(dash_keymap_action(&d, DASH_KEY_FN(KEY_F(8)), &arg) == DA_STOP, "F8 stop (asks)");
    CHECK(dash_keymap_action(&d, DASH_KEY_FN(KEY_F(10)), &arg) == DA_QUIT, "F10 quit");
    CHECK(dash_keymap_action(&d, '*', &arg) == DA_NONE, "plot keys type on the line");
    editor_set_line(&d.ed, "sample");
    CHECK(dash_keymap_action(&d, '2', &arg) == DA_NONE, "digit inside a typed line");
    CHECK(dash_keymap_action(&d, '\t', &arg) == DA_NONE, "Tab on a typed line completes");
    CHECK(dash_keymap_action(&d, 27, &arg) == DA_FOCUS_VIEW, "Esc leaves the line");
    d.focus = DASH_FOCUS_VIEW;
    CHECK(dash_keymap_action(&d, 'p', &arg) == DA_NONE, "p types, in a pane too");
    CHECK(dash_keymap_action(&d, 'q', &arg) == DA_NONE, "q types, in a pane too");
    CHECK(dash_keymap_action(&d, '*', &arg) == DA_LOG_Y, "* in a pane: log y");
    CHECK(dash_keymap_action(&d, ' ', &arg) == DA_NONE, "Space only in the history view");
    CHECK(dash_keymap_action(&d, DASH_KEY_FN(KEY_LEFT), &arg) == DA_VIEW_KEY,
          "Left moves the gate cursor in the training view");
    d.view = hist;
    CHECK(dash_keymap_action(&d, ' ', &arg) == DA_VIEW_KEY, "Space marks in history");
    int mark = arg;
    CHECK(dash_keymap_action(&d, '\r', &arg) == DA_VIEW_KEY && arg != mark,
          "Enter opens in history");
    d.view = tok;
    CHECK(dash_keymap_action(&d, '\n', &arg) == DA_VIEW_KEY, "Enter edits the tokens prompt");
    d.focus = DASH_FOCUS_OUTPUT;
    CHECK(dash_keymap_action(&d, DASH_KEY_FN(KEY_UP), &arg) == DA_UP, "Up scrolls the output");
    d.focus = DASH_FOCUS_VIEW;
    d.prompt_mode = DASH_PROMPT_VIEW;
    CHECK(dash_keymap_action(&d, '2', &arg) == DA_NONE, "a view's line takes every key");
    dash_state_free(&d);
}

/* A view owns its state (issue 34): a throwaway view defined here, with a struct of its
 * own, gets it made by its init on first use, the same one on every later use, one per
 * Dashboard, and released by its free with the Dashboard; the shared state has nothing
 * of it. */
typedef struct {
    int draws;
    char *note;   /* malloc'd by init, freed by free */
} ProbeView;

static int probe_inits, probe_frees;

static int probe_init(void *state)
{
    ProbeView *p = state;
    probe_inits++;
    p->note = strdup("probe view state");
    return p->note ? LM_OK : LM_ENOMEM;
}

static void probe_free(void *state)
{
    probe_frees++;
    free(((ProbeView *)state)->note);
}

static const DashView view_probe;

static void probe_draw(Canvas *c, Rect r, Dashboard *d, const Snapshot *sn,
                       const CanvasCaps *caps, int focused)
{
    (void)sn, (void)focused;
    ProbeView *p = dash_view_state(d, &view_probe);
    if (!p) return;
    char line[64];
    snprintf(line, sizeof line, "%s, draw %d", p->note, ++p->draws);
    canvas_text_fit(c, r.x, r.y, r.w, line, UI_COLOR_DEFAULT, 0, caps->unicode);
}

static const DashView view_probe = {.name = "probe", .state_size = sizeof(ProbeView),
                                    .init = probe_init, .free = probe_free, .draw = probe_draw};

static void test_view_owns_state(void)
{
    Dashboard a, b;
    Snapshot sn;
    dash_state_init(&a);
    dash_state_init(&b);
    make_snapshot(&sn);
    probe_inits = probe_frees = 0;
    CHECK(a.n_view_slots == 0, "no view state before a view is used");
    Canvas *c = canvas_create(60, 10);
    view_probe.draw(c, (Rect){0, 0, 60, 10}, &a, &sn, &U, 1);
    view_probe.draw(c, (Rect){0, 0, 60, 10}, &a, &sn, &U, 1);
    char *s = canvas_dump(c);
    CHECK(has(s, "probe view state, draw 2"), "the state lives between draws: %s", s ? s : "");
    free(s);
    ProbeView *pa = dash_view_state(&a, &view_probe), *pb = dash_view_state(&b, &view_probe);
    CHECK(pa && pb && pa != pb && pa->draws == 2 && pb->draws == 0 && probe_inits == 2,
          "one state per Dashboard, each made once (inits %d)", probe_inits);
    CHECK(dash_view_state(&a, &view_probe) == pa, "the same state on every use");
    dash_state_free(&a);
    CHECK(probe_frees == 1, "freed with its Dashboard (%d)", probe_frees);
    dash_state_free(&b);
    CHECK(probe_frees == 2, "each Dashboard frees its own (%d)", probe_frees);
    /* every table view with a state makes it, and its Dashboard frees it */
    dash_state_init(&a);
    for (int v = 0; v < views_count(); v++)
        CHECK(!views_get(v)->state_size || dash_view_state(&a, views_get(v)),
              "the %s view's state", views_get(v)->name);
    char *frame = dump(&a, &sn, 100, 30, &U, NULL);
    CHECK(frame != NULL, "a frame with every view's state made");
    free(frame);
    canvas_destroy(c);
    snapshot_free(&sn);
    dash_state_free(&a);
}

/* Typing a command can never trigger an action: no printable letter is bound in any
 * focus or view, so each letter of every command name goes to the line. */
static void test_letters_never_act(void)
{
    Dashboard d;
    dash_state_init(&d);
    int n, arg, bad = 0;
    const Command *t = session_commands(&n);
    for (int focus = 0; focus < DASH_N_FOCUS; focus++)
        for (int v = 0; v < views_count(); v++)
            for (int i = 0; i < n; i++)
                for (const char *p = t[i].name; *p; p++) {
                    d.focus = focus, d.view = v;
                    editor_reset(&d.ed);
                    DashAction a = dash_keymap_action(&d, (unsigned char)*p, &arg);
                    if (a != DA_NONE && !bad++)
                        fprintf(stderr, "'%c' of `%s` acts (%d) in focus %d view %d\n", *p,
                                t[i].name, a, focus, v);
                }
    CHECK(n > 10 && bad == 0, "letters of %d command names never act (%d did)", n, bad);
    for (int c = 'A'; c <= 'z'; c++)
        if ((c <= 'Z' || c >= 'a')) {
            d.focus = DASH_FOCUS_VIEW;
            for (int v = 0; v < views_count(); v++) {
                d.view = v;
                CHECK(dash_keymap_action(&d, c, &arg) == DA_NONE, "letter %c in view %d", c, v);
            }
        }
    dash_state_free(&d);
}

int main(void)
{
    test_sweep_view();
    test_tokens();
    test_key_rules();
    test_system_view();
    test_grid_view();
    test_view_owns_state();
    test_letters_never_act();
    return check_summary();
}
