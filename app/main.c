/* main.c — lmlab's entry point: parses the command line and hands over to the
 * dashboard, the line-mode prompt, a script, or a headless command. Thin on purpose:
 * every behaviour lives in commands/, ui/ or core/. */
#include "blas_select.h"
#include "dashboard.h"
#include "dist.h"
#include "err.h"
#include "regfile.h"
#include "output.h"
#include "jsonval.h"
#include "runstore.h"
#include "repl.h"
#include "cmd_bench.h"
#include "commands.h"
#include "session.h"
#include "shellcmd.h"
#include "sweep_pool.h"
#include "trainer_dist.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char USAGE[] =
    "usage: lmlab [options] [FILE.lmlab]\n"
    "       lmlab [options] COMMAND [ARGS ...]\n"
    "       lmlab train [EXPERIMENT] [key=value ...]\n"
    "\n"
    "Every command of the prompt runs from the shell with the same words (`lmlab runs\n"
    "sort=best`, `lmlab compare 4 5`, `lmlab train resume=3`); `lmlab help` lists them.\n"
    "A command that starts training (train, sweep) waits for it to end, printing progress.\n"
    "Exit status: 0 ok, 1 the command failed, 2 a usage error. A word names a script only\n"
    "when it is a regular file and no command: when both exist the command runs and a note\n"
    "on stderr says so (run the file as ./NAME).\n"
    "\n"
    "A terminal workbench for training and studying small language models on a CPU:\n"
    "the Dispatcher LM (arXiv 2105.03994), an MSA transformer, a linear LM and\n"
    "recurrent LMs (LSTM, GRU, RNN). On a terminal it opens the dashboard on the\n"
    "bundled default experiment; type `train` and watch it learn.\n"
    "\n"
    "options:\n"
    "  -c 'CMD; CMD'     run the commands and exit (not with a FILE.lmlab)\n"
    "  --plain           line-mode prompt instead of the dashboard\n"
    "  --dashboard       under mpirun: the dashboard on the terminal mpirun runs in\n"
    "                    (without it, rank 0 reads commands from stdin as a script)\n"
    "  --json            print every result as one JSON object per line (also after a\n"
    "                    COMMAND, as --db PATH)\n"
    "  --db PATH         the run store (default: $LMLAB_DB or ./lmlab.db)\n"
    "  --keep-going      in scripts, continue after a failing command\n"
    "  --transcript FILE the dashboard appends every line of its output pane to FILE\n"
    "                    (what was typed, what the commands and the followed runs said)\n"
    "  --version         print the version and exit\n"
    "  -h, --help        print this help and exit\n";

typedef struct {
    const char *commands, *script, *db, *transcript;
    int plain, dashboard, json, keep_going, cmd_index;
    const char *words[256];   /* a shell command: its words (cmd_index's and after) */
    int n_words;
} Args;

/* Collects the command's words from argv[i..], taking out --json and --db PATH (lmlab's
 * own options, allowed after the command as `lmlab bench --json`). 0, or -1 (said why). */
static int take_command(int argc, char **argv, int i, Args *a)
{
    if (a->transcript) {
        fprintf(stderr, "lmlab: --transcript keeps the dashboard's output pane; `lmlab %s` "
                "prints to stdout already: redirect it (> FILE, or | tee FILE)\n", argv[i]);
        return -1;
    }
    a->cmd_index = i;
    for (int k = i; k < argc; k++) {
        if (!strcmp(argv[k], "--json")) {
            a->json = 1;
        } else if (!strcmp(argv[k], "--db") && k + 1 < argc) {
            a->db = argv[++k];
        } else if (a->n_words == (int)(sizeof a->words / sizeof a->words[0])) {
            fprintf(stderr, "lmlab: too many words for `%s`: put the commands in a script\n",
                    argv[i]);
            return -1;
        } else {
            a->words[a->n_words++] = argv[k];
        }
    }
    return 0;
}

/* A usage error on stderr: "lmlab: MSG", or under --json the object every other error
 * is ({"ok":false,"error":MSG,"status":"invalid argument"}). */
static void usage_error(const Args *a, const char *msg)
{
    json_t *o = a->json ? json_pack("{s:b s:o s:s}", "ok", 0, "error", jsonval_str(msg),
                                    "status", err_name(LM_EARG)) : NULL;
    char *t = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    if (t) fprintf(stderr, "%s\n", t);
    else fprintf(stderr, "lmlab: %s\n", msg);
    free(t);
    json_decref(o);
}

/* The options that go only with one way of running: 0, or -1 (said why). */
static int options_together(const Args *a)
{
    if (a->dashboard && (a->plain || a->commands || a->script)) {
        fprintf(stderr, "lmlab: --dashboard opens the dashboard, so it goes without --plain, -c "
                "or a script\n");
        return -1;
    }
    if (a->transcript && (a->plain || a->commands || a->script)) {
        fprintf(stderr, "lmlab: --transcript keeps the dashboard's output pane; with %s the "
                "output is lmlab's stdout already: redirect it (> FILE, or | tee FILE)\n",
                a->plain ? "--plain" : a->commands ? "-c" : "a script");
        return -1;
    }
    if (a->commands && a->script) {   /* one source of commands: never drop one silently */
        fprintf(stderr, "lmlab: -c and the script %s given together: run one of them (put the "
                "commands in the script, or run them one after the other)\n", a->script);
        return -1;
    }
    return 0;
}

/* 0: go on; 1: done (--version, --help printed); -1: bad arguments (said why). */
static int parse_args(int argc, char **argv, Args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++)   /* --json anywhere: even the usage errors are JSON */
        if (!strcmp(argv[i], "--json")) a->json = 1;
        else if (!strcmp(argv[i], "-c") || !strcmp(argv[i], "--db") ||
                 !strcmp(argv[i], "--transcript")) i++;
    int ntable;
    const Command *table = session_commands(&ntable);
    ShellWordKind kind;
    char cerr[LM_ERR_LEN];
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--version")) {
            printf("lmlab %s\n", LMLAB_VERSION);
            return 1;
        } else if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            fputs(USAGE, stdout);
            return 1;
        } else if (!strcmp(s, "-c") && i + 1 < argc) {
            if (a->commands) {
                fprintf(stderr, "lmlab: -c given twice: join the commands with ';' in one -c\n");
                return -1;
            }
            a->commands = argv[++i];
        } else if (!strcmp(s, "--db") && i + 1 < argc) {
            a->db = argv[++i];
            if (strlen(a->db) >= sizeof ((Session *)0)->db_path) {   /* never cut: another store */
                fprintf(stderr, "lmlab: --db: the path is %zu bytes, more than the %zu lmlab "
                        "takes; give a shorter path (cd to its folder)\n", strlen(a->db),
                        sizeof ((Session *)0)->db_path - 1);
                return -1;
            }
        } else if (!strcmp(s, "--transcript") && i + 1 < argc) {
            a->transcript = argv[++i];
        } else if (!strcmp(s, "--plain")) {
            a->plain = 1;
        } else if (!strcmp(s, "--dashboard")) {
            a->dashboard = 1;
        } else if (!strcmp(s, "--json")) {
            a->json = 1;
        } else if (!strcmp(s, "--keep-going")) {
            a->keep_going = 1;
        } else if (s[0] != '-' && (a->script || a->commands || a->dashboard) &&
                   shellcmd_classify(table, ntable, s, cerr) != SHELL_WORD_SCRIPT &&
                   shellcmd_classify(table, ntable, s, cerr) != SHELL_WORD_UNKNOWN) {
            fprintf(stderr, "lmlab: `%s` and %s given together: run one of them\n", s,
                    a->commands ? "-c" : a->script ? a->script : "--dashboard");
            return -1;   /* never drop one silently */
        } else if (s[0] != '-' && !a->script && !a->commands && !a->dashboard &&
                   (kind = shellcmd_classify(table, ntable, s, cerr)) != SHELL_WORD_SCRIPT) {
            if (kind == SHELL_WORD_UNKNOWN) {
                usage_error(a, cerr);
                return -1;
            }
            if (kind == SHELL_WORD_BOTH)
                fprintf(stderr, "lmlab: '%s' is a command and also a file here: running the "
                        "command (`lmlab ./%s` runs the file as a script)\n", s, s);
            return take_command(argc, argv, i, a);
        } else if (s[0] == '-') {
            fprintf(stderr, "lmlab: unknown option '%s'\n%s", s, USAGE);
            return -1;
        } else if (!a->script) {
            a->script = s;
        } else {
            fprintf(stderr, "lmlab: unexpected argument '%s'\n", s);
            return -1;
        }
    }
    return options_together(a);
}

/* Runs the best OpenBLAS kernels the CPU supports (core/base/blas_select.h): when OpenBLAS
 * chose a weaker core, re-executes this same program with OPENBLAS_CORETYPE set. Re-exec,
 * not dlopen: OpenBLAS reads the variable only in its load-time constructor, which has run
 * before main; loading the library later by hand would route every cblas call in core/ and
 * the tests through function pointers, while one exec at start costs a few milliseconds and
 * keeps the normal link. The mark variable makes a second re-exec impossible, and a failed
 * exec just carries on with OpenBLAS's kernels. Here, not in core/: only the lmlab binary
 * re-executes itself, never a library user or a test binary. */
static void blas_reexec(char **argv)
{
    BlasChoice ch;
    const char *chosen;
    /* Under a tight `ulimit -v` OpenBLAS's worker threads spin forever on buffers they
     * cannot map and exit() waits for them: the process restarts with one BLAS thread
     * (the variable is read only by the load-time constructor), unless the user chose. */
    int one_thread = blas_select_thread_cap() == 1 && !getenv("OPENBLAS_NUM_THREADS") &&
                     !setenv("OPENBLAS_NUM_THREADS", "1", 1);
    if (one_thread)
        fprintf(stderr, "lmlab: the address space is limited (ulimit -v); OpenBLAS runs "
                "one thread\n");
    int override = blas_select_plan(&ch, &chosen);
    if (override &&
        (setenv(BLAS_SELECT_MARK_ENV, chosen, 1) || setenv("OPENBLAS_CORETYPE", ch.core, 1)))
        override = 0;
    if (!override && !one_thread)
        return;
    char self[4096];   /* the real path, so the process keeps its name ("lmlab", not "exe") */
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        execv(self, argv);
    }
    if (!override) {
        fprintf(stderr, "lmlab: could not restart with one OpenBLAS thread (%s): under this "
                "ulimit -v it may hang; set OPENBLAS_NUM_THREADS=1\n", strerror(errno));
        _exit(1);
    }
    fprintf(stderr, "lmlab: could not restart with OPENBLAS_CORETYPE=%s (%s); running "
            "OpenBLAS's %s kernels\n", ch.core, strerror(errno), chosen);
    unsetenv("OPENBLAS_CORETYPE");
}

/* The process's exit status for a command's status: 0 ok, 3 asked another process that
 * has not answered yet (LM_EPENDING: `stop ID`), 1 any other failure. */
static int exit_status(int status)
{
    return status == LM_OK ? 0 : status == LM_EPENDING ? 3 : 1;
}

/* `lmlab CMD ARGS ...`: the command's REPL line (shellcmd.h), then, when it started
 * training (train, sweep, sweep resume), `wait` until the job ends, printing progress.
 * The exit status: 0, 2 for a usage error (LM_EARG), 3 for a request another process
 * has not answered yet (LM_EPENDING), else 1. */
static int shell_command(Session *s, const Args *a)
{
    char line[16384], err[LM_ERR_LEN];
    int ntable;
    const Command *table = session_commands(&ntable);
    if (shellcmd_check_lasting(table, ntable, a->words, a->n_words, err) ||
        shellcmd_line(a->words, a->n_words, line, sizeof line, err)) {
        usage_error(a, err);
        return 2;
    }
    int rc = session_run_line(s, line);
    /* a run that failed at once (its first batch) has ended by now: `wait` still reports
     * its end and its status */
    if (!rc && (session_job_kind(s) != SESSION_JOB_NONE || session_job_holds_run(s)))
        rc = session_run_line(s, "wait");
    return rc == LM_EARG ? 2 : exit_status(rc);
}

/* The dashboard, with --transcript's file opened for appending: 0 it ran; 1 the terminal
 * is unusable (line mode then); 2 the transcript could not be opened (said on stderr: the
 * dashboard does not start without the file it was asked to keep). */
static int dashboard(Session *s, const Args *a)
{
    FILE *f = a->transcript ? fopen(a->transcript, "a") : NULL;
    if (a->transcript && !f) {
        fprintf(stderr, "lmlab: --transcript %s: cannot open it for appending (%s); give a "
                "writable path\n", a->transcript, strerror(errno));
        return 2;
    }
    int rc = dashboard_run(s, f);
    if (f)
        fclose(f);
    return rc;
}

/* `--dashboard` under mpirun: rank 0's stdin is mpirun's pipe (mpirun forwards what is
 * typed) and its stdout mpirun's pty or pipe, but the terminal mpirun was started from is
 * still the controlling terminal. stdout becomes that terminal (/dev/tty), so the
 * dashboard draws on it and sets its modes there (raw: the terminal then hands each key
 * to mpirun at once), while keys keep coming through mpirun's pipe. The rank runs in its
 * own process group, in the terminal's background: SIGTTOU is ignored so that setting the
 * modes and drawing do not stop it. An explicit flag, because the same pipe also carries
 * a script piped into mpirun. LM_OK, or LM_EARG with the reason in err. */
static int mpi_terminal(char *err)
{
    struct stat st;
    if (fstat(STDIN_FILENO, &st) || !S_ISFIFO(st.st_mode))
        return err_set(err, LM_EARG, "--dashboard under mpirun reads the keys mpirun forwards "
                       "to rank 0, and this rank's standard input is not mpirun's pipe (was "
                       "it started with --stdin none?)");
    int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
    if (fd < 0 || !isatty(fd)) {
        if (fd >= 0)
            close(fd);
        return err_set(err, LM_EARG, "--dashboard: mpirun was not started from a terminal "
                       "(no /dev/tty), so there is nothing to draw on; leave out --dashboard "
                       "and pass the commands with -c or a script");
    }
    signal(SIGTTOU, SIG_IGN);
    fflush(stdout);
    int rc = dup2(fd, STDOUT_FILENO) < 0 ? err_set(err, LM_EIO, "--dashboard: cannot use the "
                                                   "terminal (%s)", strerror(errno)) : LM_OK;
    close(fd);
    return rc;
}

int main(int argc, char **argv)
{
    blas_reexec(argv);  /* first: may exec this binary again with the best BLAS kernels */
    char derr[LM_ERR_LEN];
    if (dist_init(&argc, &argv, derr)) {
        if (derr[0])
            fprintf(stderr, "lmlab: %s\n", derr);
        return 2;
    }
    if (dist_args_differ(argc, argv, derr) && dist_rank() == 0)
        fprintf(stderr, "lmlab: note: %s\n", derr);
    if (dist_rank() > 0) {         /* under mpirun: ranks 1..N-1 serve rank 0's runs */
        /* mpirun passes its SIGINT/SIGTERM to every rank: rank 0 stops the run cleanly and
         * then releases the others, which would otherwise die at once and take the job,
         * rank 0's clean stop and its record with them (the run read "interrupted") */
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        trainer_dist_set_service(sweep_pool_serve_rank);   /* and parallel sweeps */
        int src = trainer_dist_serve();
        dist_finalize();
        return src ? 1 : 0;
    }
    Args a;
    int pa = parse_args(argc, argv, &a);
    if (pa) {   /* the other ranks wait for a job: release them, then leave MPI properly */
        trainer_dist_release();
        dist_finalize();
        return pa < 0 ? 2 : 0;
    }
    Session s;
    session_init(&s, a.db);
    bench_set_frame_hook(dashboard_bench_frame);   /* `bench board` times dashboard frames */
    s.json = a.json;
    repl_install_signals(&s);
    int rc;
    int mpi_dash = a.dashboard && dist_size() > 1 && !isatty(STDIN_FILENO);
    int drc = 1;   /* dashboard(): 1 while it has not run */
    if (a.cmd_index) {
        rc = shell_command(&s, &a);
    } else if (a.commands) {
        rc = exit_status(repl_run_lines(&s, a.commands, a.keep_going));
    } else if (a.script) {
        char ferr[LM_ERR_LEN];
        FILE *f = regfile_fopen(a.script, ferr);   /* a directory or FIFO: said, not run */
        if (!f) {
            fprintf(stderr, "lmlab: %s (a script; `lmlab help` lists the commands)\n",
                    ferr);
            session_free(&s);
            trainer_dist_release();
            dist_finalize();
            return 2;
        }
        rc = repl_run_file(&s, f, a.script, a.keep_going) ? 1 : 0;
        fclose(f);
    } else if (mpi_dash && mpi_terminal(derr) != LM_OK) {
        fprintf(stderr, "lmlab: %s\n", derr);
        rc = 2;
    } else if (!isatty(STDIN_FILENO) && !mpi_dash) {
        rc = repl_run_file(&s, stdin, "<stdin>", a.keep_going) ? 1 : 0;
    } else if (!a.plain && isatty(STDOUT_FILENO) && (drc = dashboard(&s, &a)) != 1) {
        rc = drc;   /* 1 when the terminal is unusable: line mode then */
    } else {
        rc = repl_interactive(&s) ? 1 : 0;   /* 1: the terminal could not be read */
    }
    if (a.transcript && drc == 1)
        fprintf(stderr, "lmlab: --transcript: no dashboard ran (stdin or stdout is not a "
                "terminal, or TERM cannot draw one), so nothing was kept in %s\n", a.transcript);
    session_free(&s);
    trainer_dist_release();
    dist_finalize();
    return rc;
}
