/* test_corpus.c — reading corpora as users have them (core/data/corpus.c, cstream.c): a
 * directory read recursively in path order with dot files skipped and empty, binary and
 * unreadable files counted and named; .jsonl with bad lines and another text_key; gzip
 * (two members), xz and zstd files equal to their text; a truncated gzip; comma lists; a
 * WikiText directory's splits and its refusal inside a list; strict refusals; pieces cut
 * only where the cut function allows; a file changed while read and between passes; the
 * filesystem's root and system directories refused unwalked; roots_only not walking. */
#include "check.h"
#include "corpus.h"
#include "err.h"

#include <fcntl.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

static char tmp[256];

static void put(const char *name, const void *data, size_t n)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", tmp, name);
    FILE *f = fopen(p, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n)) exit(1);
    fclose(f);
}

static void puts_(const char *name, const char *text) { put(name, text, strlen(text)); }

static void put_gz(const char *name, const char *a, const char *b)   /* two gzip members */
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", tmp, name);
    gzFile g = gzopen(p, "wb");
    gzwrite(g, a, (unsigned)strlen(a));
    gzclose(g);
    g = gzopen(p, "ab");
    gzwrite(g, b, (unsigned)strlen(b));
    gzclose(g);
}

static void put_xz(const char *name, const char *text)
{
    uint8_t out[65536];
    size_t pos = 0;
    if (lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, (const uint8_t *)text, strlen(text), out,
                                &pos, sizeof out) != LZMA_OK) exit(1);
    put(name, out, pos);
}

static void put_zst(const char *name, const char *text)
{
    char out[65536];
    size_t n = ZSTD_compress(out, sizeof out, text, strlen(text), 3);
    if (ZSTD_isError(n)) exit(1);
    put(name, out, n);
}

/* Everything of spec, pieces joined ("|" after each document). */
static int read_all(const char *spec, const CorpusOptions *o, char *out, size_t cap, CorpusSkips *sk,
                    char *err)
{
    Corpus *c;
    int rc = corpus_open(spec, o, &c, err);
    if (rc) return rc;
    out[0] = 0;
    for (;;) {
        CorpusPiece p;
        int end;
        rc = corpus_next(c, &p, &end, err);
        if (rc || end) break;
        if (strlen(out) + p.len + 2 < cap) {
            strncat(out, p.text, p.len);
            if (p.doc_end) strcat(out, "|");
        }
    }
    if (sk) *sk = *corpus_skips(c);
    corpus_close(c);
    return rc;
}

static void test_dir(void)
{
    char d[600], out[8192], err[LM_ERR_LEN];
    CorpusSkips sk;
    snprintf(d, sizeof d, "%s/dir", tmp);
    mkdir(d, 0755);
    snprintf(d, sizeof d, "%s/dir/a", tmp);
    mkdir(d, 0755);
    snprintf(d, sizeof d, "%s/dir/a/b", tmp);
    mkdir(d, 0755);
    puts_("dir/z.txt", "zed\n");
    puts_("dir/a/1.txt", "one\n");
    puts_("dir/a/b/2.txt", "two\n");
    puts_("dir/a-c.txt", "dash\n");         /* '-' sorts before '/' */
    puts_("dir/.hidden.txt", "hidden\n");
    puts_("dir/empty.txt", "");
    put("dir/bin.dat", "\x7f" "ELF\0\0\1", 7);
    char fifo[600], link[600];
    snprintf(fifo, sizeof fifo, "%s/dir/fifo.txt", tmp);
    mkfifo(fifo, 0644);
    snprintf(link, sizeof link, "%s/dir/gone.txt", tmp);
    symlink("/no/such/target", link);
    snprintf(d, sizeof d, "%s/dir", tmp);
    CorpusOptions o = {0};
    int rc = read_all(d, &o, out, sizeof out, &sk, err);
    CHECK(rc == LM_OK, "dir: %s", err);
    CHECK(!strcmp(out, "dash\n|one\n|two\n|zed\n|"), "dir: sorted by path, recursive, dot files skipped: '%s'", out);
    CHECK(sk.n[CORPUS_SKIP_EMPTY] == 1 && strstr(sk.first[CORPUS_SKIP_EMPTY], "empty.txt"), "empty counted and named: %s",
          sk.first[CORPUS_SKIP_EMPTY]);
    CHECK(sk.n[CORPUS_SKIP_BINARY] == 1 && strstr(sk.first[CORPUS_SKIP_BINARY], "bin.dat") &&
          strstr(sk.first[CORPUS_SKIP_BINARY], "NUL"), "binary counted and named: %s", sk.first[CORPUS_SKIP_BINARY]);
    CHECK(sk.n[CORPUS_SKIP_UNREADABLE] == 2 && strstr(sk.first[CORPUS_SKIP_UNREADABLE], "gone.txt"),
          "a FIFO and a dangling link counted as unreadable (%llu): %s", sk.n[CORPUS_SKIP_UNREADABLE],
          sk.first[CORPUS_SKIP_UNREADABLE]);
    o.strict = 1;
    rc = read_all(d, &o, out, sizeof out, &sk, err);
    CHECK(rc == LM_EFORMAT && strstr(err, "bin.dat") && strstr(err, "strict=true"), "strict refuses the binary file: %s", err);
    unlink(fifo);
    unlink(link);
    snprintf(d, sizeof d, "%s/dir/a/1.txt,%s/dir/z.txt", tmp, tmp);
    o.strict = 0;
    rc = read_all(d, &o, out, sizeof out, &sk, err);
    CHECK(rc == LM_OK && !strcmp(out, "one\n|zed\n|"), "a comma list in its order: '%s' %s", out, err);
    snprintf(d, sizeof d, "%s/emptydir", tmp);
    mkdir(d, 0755);
    CHECK(read_all(d, &o, out, sizeof out, NULL, err) == LM_EARG && strstr(err, "has no files"), "empty dir: %s", err);
    puts_("named_empty.txt", "");
    snprintf(d, sizeof d, "%s/named_empty.txt", tmp);
    CHECK(read_all(d, &o, out, sizeof out, NULL, err) == LM_EFORMAT && strstr(err, "is empty"), "a named empty file: %s", err);
    CHECK(read_all("/no/such/thing.txt", &o, out, sizeof out, NULL, err) == LM_EIO && strstr(err, "/no/such/thing.txt"),
          "missing: %s", err);
}

static void test_jsonl(void)
{
    char p[600], out[8192], err[LM_ERR_LEN];
    CorpusSkips sk;
    puts_("docs.jsonl", "{\"text\": \"first doc\\n\", \"id\": 1}\n"
                        "not json at all\n"
                        "\n"
                        "{\"body\": \"other key\"}\n"
                        "{\"text\": 5}\n"
                        "{\"text\": \"nul\\u0000inside\"}\n"
                        "{\"text\": \"caf\\u00e9 \\u65e5\\u672c\", \"body\": \"b2\"}");   /* no final \n */
    snprintf(p, sizeof p, "%s/docs.jsonl", tmp);
    CorpusOptions o = {0};
    CHECK(read_all(p, &o, out, sizeof out, &sk, err) == LM_OK, "jsonl: %s", err);
    CHECK(!strcmp(out, "first doc\n|café 日本|"), "jsonl documents: '%s'", out);
    CHECK(sk.n[CORPUS_SKIP_BAD_JSON] == 1 && strstr(sk.first[CORPUS_SKIP_BAD_JSON], "docs.jsonl:2"),
          "bad line counted and named with its line: %s", sk.first[CORPUS_SKIP_BAD_JSON]);
    CHECK(sk.n[CORPUS_SKIP_MISSING_KEY] == 2 && strstr(sk.first[CORPUS_SKIP_MISSING_KEY], "docs.jsonl:4"),
          "lines without the key: %llu %s", sk.n[CORPUS_SKIP_MISSING_KEY], sk.first[CORPUS_SKIP_MISSING_KEY]);
    CHECK(sk.n[CORPUS_SKIP_BINARY] == 1 && strstr(sk.first[CORPUS_SKIP_BINARY], "docs.jsonl:6"), "NUL document: %s",
          sk.first[CORPUS_SKIP_BINARY]);
    o.text_key = "body";
    CHECK(read_all(p, &o, out, sizeof out, &sk, err) == LM_OK && !strcmp(out, "other key|b2|"), "text_key=body: '%s'", out);
    o.text_key = NULL;
    o.strict = 1;
    CHECK(read_all(p, &o, out, sizeof out, &sk, err) == LM_EFORMAT && strstr(err, "docs.jsonl' line 2"),
          "strict: the bad line refused: %s", err);
    /* compressed jsonl */
    put_zst("docs2.jsonl.zst", "{\"text\": \"zst doc\"}\n{\"text\": \"two\"}\n");
    snprintf(p, sizeof p, "%s/docs2.jsonl.zst", tmp);
    o.strict = 0;
    CHECK(read_all(p, &o, out, sizeof out, &sk, err) == LM_OK && !strcmp(out, "zst doc|two|"), "jsonl.zst: '%s' %s", out, err);
}

static void test_compressed(void)
{
    char p[1800], out[8192], err[LM_ERR_LEN];
    const char *text = "It was the best of times,\nit was the worst of times.\n";
    CorpusOptions o = {0};
    put_gz("t.txt.gz", "It was the best of times,\n", "it was the worst of times.\n");
    put_xz("t.txt.xz", text);
    put_zst("t.txt.zst", text);
    char want[300];
    snprintf(want, sizeof want, "%s|", text);
    const char *names[3] = { "t.txt.gz", "t.txt.xz", "t.txt.zst" };
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", tmp, names[i]);
        CHECK(read_all(p, &o, out, sizeof out, NULL, err) == LM_OK && !strcmp(out, want), "%s: '%s' %s", names[i], out, err);
    }
    /* a truncated gzip file */
    snprintf(p, sizeof p, "%s/t.txt.gz", tmp);
    struct stat st;
    stat(p, &st);
    truncate(p, st.st_size - 12);
    CHECK(read_all(p, &o, out, sizeof out, NULL, err) == LM_EFORMAT && strstr(err, "not a whole gzip file"),
          "truncated gzip: %s", err);
    snprintf(p, sizeof p, "%s/t.txt.zst", tmp);
    stat(p, &st);
    truncate(p, st.st_size - 5);
    CHECK(read_all(p, &o, out, sizeof out, NULL, err) == LM_EFORMAT && strstr(err, "zstd"), "truncated zstd: %s", err);
    /* a list of a compressed file, a directory and a jsonl */
    snprintf(p, sizeof p, "%s/t.txt.xz,%s/dir/a,%s/docs2.jsonl.zst", tmp, tmp, tmp);
    CHECK(read_all(p, &o, out, sizeof out, NULL, err) == LM_OK, "list: %s", err);
    snprintf(want, sizeof want, "%s|one\n|two\n|zst doc|two|", text);
    CHECK(!strcmp(out, want), "list of xz, dir, jsonl.zst: '%s'", out);
}

static void test_wikitext(void)
{
    char d[600], out[8192], err[LM_ERR_LEN];
    snprintf(d, sizeof d, "%s/wiki", tmp);
    mkdir(d, 0755);
    puts_("wiki/wiki.train.tokens", "train text\n");
    puts_("wiki/wiki.valid.tokens", "valid text\n");
    CorpusOptions o = {0};
    Corpus *c;
    CHECK(corpus_open(d, &o, &c, err) == LM_OK, "wiki: %s", err);
    CHECK(corpus_has_splits(c) && corpus_n_sources(c) == 2 && corpus_source(c, 1)->split == 1, "wiki layout: two splits");
    corpus_close(c);
    char list[1300];
    snprintf(list, sizeof list, "%s,%s/dir/z.txt", d, tmp);
    CHECK(read_all(list, &o, out, sizeof out, NULL, err) == LM_EARG && strstr(err, "cannot be part of a list"),
          "a WikiText dir in a list is refused: %s", err);
    snprintf(d, sizeof d, "%s/wiki2", tmp);
    mkdir(d, 0755);
    puts_("wiki2/train.txt", "t\n");
    CHECK(read_all(d, &o, out, sizeof out, NULL, err) == LM_EIO && strstr(err, "valid.txt"), "no valid split: %s", err);
}

static int cuts, grow;
static char grow_path[600];

/* Cuts after any '\n' like the default; counts calls and, when grow, appends to the file
 * being read (a writer at work). */
static size_t cut_counting(const char *s, size_t n, void *ud)
{
    (void)ud;
    cuts++;
    if (grow) {
        FILE *f = fopen(grow_path, "a");
        fputs("more\n", f);
        fclose(f);
        grow = 0;
    }
    for (size_t i = n - 1; i > 0; i--)
        if (s[i - 1] == '\n') return i;
    return 0;
}

static void test_pieces_and_changes(void)
{
    char out[70000], err[LM_ERR_LEN], text[60000] = "";
    for (int i = 0; i < 2000; i++) strcat(text, "line of text\n");
    puts_("long.txt", text);
    snprintf(grow_path, sizeof grow_path, "%s/long.txt", tmp);
    CorpusOptions o = { .cut = cut_counting, .piece = 100 };
    Corpus *c;
    CHECK(corpus_open(grow_path, &o, &c, err) == LM_OK, "open: %s", err);
    size_t total = 0, pieces = 0;
    int ok = 1;
    for (;;) {
        CorpusPiece p;
        int end;
        if (corpus_next(c, &p, &end, err) || end) break;
        pieces++;
        total += p.len;
        ok &= p.text[p.len - 1] == '\n' && (p.len % 13) == 0;
    }
    CHECK(pieces > 5 && total == strlen(text) && ok && cuts > 0, "pieces cut where allowed (%zu pieces, %zu bytes)", pieces, total);
    /* changed between passes: same size and mtime, other bytes */
    struct stat st;
    stat(grow_path, &st);
    text[0] = 'L';
    puts_("long.txt", text);
    struct timespec ts[2] = { st.st_atim, st.st_mtim };
    utimensat(AT_FDCWD, grow_path, ts, 0);
    corpus_rewind(c);
    int rc = LM_OK;
    for (;;) {
        CorpusPiece p;
        int end;
        rc = corpus_next(c, &p, &end, err);
        if (rc || end) break;
    }
    CHECK(rc == LM_EIO && strstr(err, "changed during the prepare") && strstr(err, "first pass"),
          "bytes changed between the passes: %s", err);
    corpus_close(c);
    /* written while it is read */
    grow = 1;
    rc = read_all(grow_path, &o, out, sizeof out, NULL, err);
    CHECK(rc == LM_EIO && strstr(err, "changed while it was read"), "a file growing while read: %s", err);
}

/* The filesystem's root and its system directories are refused before anything under them
 * is listed (a list holding one too; a path that resolves to one too), where `data rm /`
 * walked the disk first. roots_only resolves a directory without walking it: a tree
 * whose walk fails (nested past 64) opens at once, with its roots, a WikiText layout's
 * splits, and no source. */
static void test_roots(void)
{
    char d[600], err[LM_ERR_LEN];
    CorpusOptions o = {0};
    Corpus *c = NULL;
    CHECK(corpus_open("/", &o, &c, err) == LM_EARG && !c &&
          strstr(err, "'/' is the root of the filesystem, not a corpus"), "/: %s", err);
    const char *sys[] = {"/usr", "/proc/", "/usr/../etc", NULL};
    for (int i = 0; sys[i]; i++)
        CHECK(corpus_open(sys[i], &o, &c, err) == LM_EARG && strstr(err, "is a system "
              "directory, not a corpus"), "%s: %s", sys[i], err);
    snprintf(d, sizeof d, "%s/dir/z.txt,/sys", tmp);   /* test_dir's file */
    CHECK(corpus_open(d, &o, &c, err) == LM_EARG && strstr(err, "'/sys' is a system"),
          "a system directory in a list: %s", err);
    o.roots_only = 1;
    CHECK(corpus_open("/", &o, &c, err) == LM_EARG, "roots_only refuses / too: %s", err);
    snprintf(d, sizeof d, "%s/deep", tmp);   /* 70 directories deep: the walk refuses it */
    for (int i = 0; i <= 70; i++) {
        mkdir(d, 0755);
        if (i < 70) strcat(d, "/d");
    }
    snprintf(d, sizeof d, "%s/deep", tmp);
    puts_("deep/a.txt", "a\n");
    o.roots_only = 0;
    CHECK(corpus_open(d, &o, &c, err) == LM_EARG && strstr(err, "nested over 64"),
          "the deep tree's walk fails: %s", err);
    o.roots_only = 1;
    CHECK(corpus_open(d, &o, &c, err) == LM_OK && c && corpus_n_sources(c) == 0 &&
          !strcmp(corpus_roots(c), d) && !corpus_has_splits(c),
          "roots_only does not walk: %s", err);
    corpus_close(c);
    snprintf(d, sizeof d, "%s/wiki", tmp);   /* test_wikitext's layout */
    CHECK(corpus_open(d, &o, &c, err) == LM_OK && corpus_has_splits(c) &&
          corpus_n_sources(c) == 2, "roots_only still finds a WikiText layout: %s", err);
    corpus_close(c);
}

/* Symlinks in a corpus: a loop (links to . and ..) is walked once, each directory entered
 * once and the repeats counted; a link to / is refused, naming the link; a directory given
 * twice in a list is refused. Before, two links to '.' made the walk exponential. */
static void test_links(void)
{
    char d[600], l[700], out[8192], err[LM_ERR_LEN];
    CorpusSkips sk;
    snprintf(d, sizeof d, "%s/loop", tmp);
    mkdir(d, 0755);
    snprintf(d, sizeof d, "%s/loop/sub", tmp);
    mkdir(d, 0755);
    puts_("loop/x.txt", "x\n");
    puts_("loop/sub/y.txt", "y\n");
    const char *links[][2] = { {"..", "loop/sub/up"}, {".", "loop/a"}, {".", "loop/b"}, {"sub", "loop/s2"} };
    for (int i = 0; i < 4; i++) {
        snprintf(l, sizeof l, "%s/%s", tmp, links[i][1]);
        symlink(links[i][0], l);
    }
    snprintf(d, sizeof d, "%s/loop", tmp);
    CorpusOptions o = {0};
    int rc = read_all(d, &o, out, sizeof out, &sk, err);
    CHECK(rc == LM_OK && (!strcmp(out, "x\n|y\n|") || !strcmp(out, "y\n|x\n|")),
          "each file once through the loops: '%s' %s", out, err);
    CHECK(sk.n[CORPUS_SKIP_REPEATED_DIR] == 4 && strstr(sk.first[CORPUS_SKIP_REPEATED_DIR], "already listed"),
          "the four links to listed directories counted (%llu): %s", sk.n[CORPUS_SKIP_REPEATED_DIR],
          sk.first[CORPUS_SKIP_REPEATED_DIR]);
    CHECK(!strcmp(corpus_skip_name(CORPUS_SKIP_REPEATED_DIR), "repeated_dirs"), "its meta.json name");
    snprintf(d, sizeof d, "%s/loop,%s/loop/sub", tmp, tmp);
    Corpus *c = NULL;
    CHECK(corpus_open(d, &o, &c, err) == LM_EARG && !c && strstr(err, "listed twice"),
          "a directory inside another item of the list: %s", err);
    snprintf(l, sizeof l, "%s/loop/sub/root", tmp);
    symlink("/", l);
    snprintf(d, sizeof d, "%s/loop", tmp);
    CHECK(corpus_open(d, &o, &c, err) == LM_EARG && !c && strstr(err, "/root' is a link to '/', "
          "the root of the filesystem"), "a link to / refused before it is walked: %s", err);
    unlink(l);
}

/* A directory walk tells how far it got every CORPUS_LIST_EVERY entries, and stops when
 * told to (Ctrl-C, SIGTERM: the session's interrupt). */
static int listed_calls;
static int stop_listing(unsigned long long entries, void *ud)
{
    (void)entries;
    listed_calls++;
    return *(int *)ud;
}

static void test_listing(void)
{
    char d[400], p[500];
    snprintf(d, sizeof d, "%s/many", tmp);
    mkdir(d, 0755);
    for (int i = 0; i < 2 * CORPUS_LIST_EVERY + 5; i++) {
        snprintf(p, sizeof p, "%s/f%05d.txt", d, i);
        FILE *f = fopen(p, "w");
        if (f) fclose(f);
    }
    int stop = 0;
    CorpusOptions o = { .listed = stop_listing, .listed_ud = &stop };
    Corpus *c = NULL;
    char err[LM_ERR_LEN];
    listed_calls = 0;
    corpus_open(d, &o, &c, err);   /* every file empty: refused later, walked whole first */
    corpus_close(c);
    CHECK(listed_calls == 2, "told twice over 2 x %d + 5 entries: %d", CORPUS_LIST_EVERY,
          listed_calls);
    stop = 1;
    listed_calls = 0;
    c = NULL;
    CHECK(corpus_open(d, &o, &c, err) == LM_ECANCEL && strstr(err, "stopped") && listed_calls == 1,
          "stopped at the first report: %s (%d)", err, listed_calls);
    corpus_close(c);
}

int main(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/lmlab_test_corpus_XXXXXX");
    if (!mkdtemp(tmp)) return 1;
    test_dir();
    test_jsonl();
    test_compressed();
    test_wikitext();
    test_pieces_and_changes();
    test_roots();
    test_listing();
    test_links();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", tmp);
    return check_summary();
}
