/* test_outfile.c — writing a user-named path without replacing what it is: a new file and
 * a regular file are replaced atomically (no temporary left), a symbolic link stays a link
 * and its target gets the content, a FIFO is streamed to its reader, /dev/null and
 * /dev/full stay devices (the full one reports the disk full), a directory, a socket and
 * a dangling link are refused naming what they are, "-" is standard output. */
#include "check.h"
#include "err.h"
#include "outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256];

static const char *at(const char *name)
{
    static char p[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static int write_text(const char *path, const char *text, char *err)
{
    OutFile o;
    int st = outfile_open(&o, path, err);
    if (st) return st;
    if (outfile_write(&o, text, strlen(text)) != 0) {
        outfile_abort(&o);
        return LM_EIO;
    }
    return outfile_commit(&o, path, err);
}

static int read_text(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
    return (int)n;
}

static int temporaries(void)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, ".tmp.") != NULL;
    if (d) closedir(d);
    return n;
}

static void test_regular_and_link(void)
{
    char err[LM_ERR_LEN], buf[64];
    CHECK(write_text(at("new.txt"), "one", err) == LM_OK, "new file: %s", err);
    CHECK(read_text(at("new.txt"), buf, sizeof buf) == 3 && !strcmp(buf, "one"), "new content");
    chmod(at("new.txt"), 0600);
    CHECK(write_text(at("new.txt"), "two!", err) == LM_OK, "replace: %s", err);
    struct stat sb;
    CHECK(read_text(at("new.txt"), buf, sizeof buf) == 4 && !strcmp(buf, "two!"), "replaced");
    CHECK(stat(at("new.txt"), &sb) == 0 && (sb.st_mode & 0777) == 0600, "mode kept");
    CHECK(symlink("new.txt", at("link.txt")) == 0, "symlink");
    CHECK(write_text(at("link.txt"), "three", err) == LM_OK, "through a link: %s", err);
    CHECK(lstat(at("link.txt"), &sb) == 0 && S_ISLNK(sb.st_mode), "the link is still a link");
    CHECK(read_text(at("new.txt"), buf, sizeof buf) == 5 && !strcmp(buf, "three"),
          "the link's target got the content: '%s'", buf);
    CHECK(symlink("missing.txt", at("dangling")) == 0, "dangling symlink");
    CHECK(write_text(at("dangling"), "x", err) == LM_EARG && strstr(err, "link to a missing"),
          "dangling link refused: %s", err);
    CHECK(temporaries() == 0, "no temporary file left");
}

static void test_refused_kinds(void)
{
    char err[LM_ERR_LEN];
    mkdir(at("sub"), 0755);
    CHECK(write_text(at("sub"), "x", err) == LM_EARG && strstr(err, "is a directory"),
          "directory refused: %s", err);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", at("sock"));
    CHECK(s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0, "bind a socket");
    CHECK(write_text(at("sock"), "x", err) == LM_EARG && strstr(err, "is a socket"),
          "socket refused: %s", err);
    close(s);
    struct stat sb;
    CHECK(stat(at("sock"), &sb) == 0 && S_ISSOCK(sb.st_mode), "the socket is still a socket");
    CHECK(write_text("", "x", err) == LM_EARG, "empty path refused: %s", err);
    CHECK(temporaries() == 0, "no temporary file left");
}

static void test_streams(void)
{
    char err[LM_ERR_LEN], buf[64];
    struct stat sb;
    CHECK(write_text("/dev/null", "gone", err) == LM_OK, "/dev/null: %s", err);
    CHECK(stat("/dev/null", &sb) == 0 && S_ISCHR(sb.st_mode), "/dev/null is still a device");
    if (access("/dev/full", W_OK) == 0) {
        OutFile o;
        CHECK(outfile_open(&o, "/dev/full", err) == LM_OK, "/dev/full opens: %s", err);
        CHECK(outfile_write(&o, "x", 1) == ENOSPC, "/dev/full says the disk is full");
        outfile_abort(&o);
        CHECK(stat("/dev/full", &sb) == 0 && S_ISCHR(sb.st_mode), "/dev/full still a device");
    }
    CHECK(mkfifo(at("fifo"), 0600) == 0, "mkfifo");
    CHECK(write_text(at("fifo"), "x", err) == LM_EIO && strstr(err, "no reader"),
          "FIFO without a reader: a message, no hang: %s", err);
    CHECK(strstr(err, "waited 3.0 s"), "the refusal says how long it waited: %s", err);
    /* A reader started together with the writer (`cat pipe & lmlab export file=pipe`)
     * opens the FIFO a moment after lmlab tries: one attempt, no retry here, must wait
     * for it. The reader opens non-blocking so it never hangs if the writer gave up. */
    pid_t pid = fork();
    if (pid == 0) { /* the reader: 300 ms late, copies what arrives into a file */
        usleep(300000);
        int in = open(at("fifo"), O_RDONLY | O_NONBLOCK), out = open(at("fifo.out"), O_WRONLY | O_CREAT, 0644);
        char b[64];
        ssize_t n, got = 0;
        for (int i = 0; i < 1000; i++) {   /* at most 10 s */
            n = read(in, b, sizeof b);
            if (n > 0) { (void)!write(out, b, (size_t)n); got += n; continue; }
            if ((n == 0 && got > 0) || (n < 0 && errno != EAGAIN)) break;   /* writer closed */
            usleep(10000);   /* no writer yet (0) or nothing written yet (EAGAIN) */
        }
        _exit(0);
    }
    int st = write_text(at("fifo"), "streamed", err);
    CHECK(st == LM_OK, "FIFO whose reader opens it 300 ms late: %s", err);
    int status = 0, ended = 0;
    for (int i = 0; i < 1500 && !ended; i++) {   /* the reader ends within 15 s */
        ended = waitpid(pid, &status, WNOHANG) == pid;
        if (!ended) usleep(10000);
    }
    if (!ended) { kill(pid, SIGKILL); waitpid(pid, &status, 0); }
    CHECK(ended, "the FIFO's reader ended within 15 s");
    CHECK(read_text(at("fifo.out"), buf, sizeof buf) == 8 && !strcmp(buf, "streamed"),
          "the reader got it: '%s'", buf);
    CHECK(stat(at("fifo"), &sb) == 0 && S_ISFIFO(sb.st_mode), "the FIFO is still a FIFO");
    OutFile o;
    CHECK(outfile_open(&o, "-", err) == LM_OK && o.is_stdout, "- is standard output");
    outfile_abort(&o);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/lmlab_test_outfile_%ld", (long)getpid());
    mkdir(dir, 0700);
    test_regular_and_link();
    test_refused_kinds();
    test_streams();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    (void)!system(cmd);
    return check_summary();
}
