/* config_text.c — a Config as text: experiment files and config_from_text read key=value
 * lines through config_set, config_to_text writes every key so that reading it back gives
 * the same Config. Not a general INI/TOML parser: one key=value per line, '#' comments,
 * and lines prefixed "bf16:" or "fp32:" that apply only on a CPU with or without
 * AVX512-BF16. The keys themselves are config.c's table. */
#include "config.h"

#include "err.h"
#include "regfile.h"
#include "sysinfo.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Strings are written with C escapes so that prompts with newlines survive a line. */
static void escape_into(char *out, size_t cap, const char *s)
{
    size_t o = 0;
    for (; *s && o + 3 < cap; s++) {
        if (*s == '\n') { out[o++] = '\\'; out[o++] = 'n'; }
        else if (*s == '\t') { out[o++] = '\\'; out[o++] = 't'; }
        else if (*s == '\\') { out[o++] = '\\'; out[o++] = '\\'; }
        else out[o++] = *s;
    }
    out[o] = 0;
}

static void unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (*s == '\\' && s[1]) {
            s++;
            *o++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
        } else {
            *o++ = *s;
        }
    }
    *o = 0;
}

/* A value that parse_line would otherwise alter (a '#' read as a comment, a leading
 * quote stripped, surrounding blanks trimmed) is written between double quotes. */
static int needs_quotes(const char *esc)
{
    size_t n = strlen(esc);
    return strchr(esc, '#') || esc[0] == '"' ||
           (n && (isspace((unsigned char)esc[0]) || isspace((unsigned char)esc[n - 1])));
}

char *config_to_text(const Config *c)
{
    size_t cap = 8192, len = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    out[0] = 0;
    int n_keys;
    const ConfigKey *keys = config_keys(&n_keys);
    for (int i = 0; i < n_keys; i++) {
        char val[CONFIG_STR_LEN * 2], esc[CONFIG_STR_LEN * 2 + 8];
        config_get(c, keys[i].key, val, sizeof val);
        escape_into(esc, sizeof esc, val);
        const char *q = needs_quotes(esc) ? "\"" : "";
        int n = snprintf(out + len, cap - len, "%s=%s%s%s\n", keys[i].key, q, esc, q);
        if (n < 0 || (size_t)n >= cap - len) {
            free(out);
            return NULL;
        }
        len += (size_t)n;
    }
    return out;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = 0;
    return s;
}

char *config_comment(char *line)
{
    size_t n = strlen(line);
    while (n > 0 && isspace((unsigned char)line[n - 1]))
        n--;
    if (n > 0 && line[n - 1] == '"')   /* key="..." whole (config_to_text's own lines: */
        return NULL;                   /* inner quotes are not escaped), no comment */
    int quoted = 0;
    for (char *p = line; *p; p++) {
        if (*p == '\\' && p[1])
            p++;                  /* an escaped character: never a quote or a comment */
        else if (*p == '"')
            quoted = !quoted;
        else if (*p == '#' && !quoted)
            return p;
    }
    return NULL;
}

/* The lines that set a key in an experiment file so far, by scope (0 a plain line, 1 a
 * bf16: line, 2 an fp32: line); 0 = none yet. One per key, in config_keys' order. */
typedef int KeyLines[3];

/* A file says each key once: a second plain line (or a second bf16: line) would silently
 * win over the first. A bf16: or fp32: line after a plain one overrides it on its CPU
 * (the speedrun preset's `bf16: steps = 200000`); a plain line after one would undo it. */
static int check_seen(KeyLines *seen, const char *key, int scope, const char *where,
                      int lineno, char *err)
{
    static const char *const prefix[3] = {"", "bf16: ", "fp32: "};
    const ConfigKey *k = config_find_key(key);
    if (!k)
        return LM_OK;   /* config_set says what is wrong */
    int n_keys;
    int *at = seen[k - config_keys(&n_keys)];
    if (at[scope])
        return err_set(err, LM_EARG, "%s:%d: %s%s is given twice (lines %d and %d): keep one",
                       where, lineno, prefix[scope], key, at[scope], lineno);
    for (int o = 1; !scope && o < 3; o++)
        if (at[o])
            return err_set(err, LM_EARG, "%s:%d: %s is given after the %s%s line %d, which it "
                           "would undo: put the plain line first (a bf16: or fp32: line "
                           "overrides it on its CPU)", where, lineno, key, prefix[o], key, at[o]);
    at[scope] = lineno;
    return LM_OK;
}

/* One line of an experiment file or of config_to_text's text: comments, blank lines,
 * key = value, and "bf16: key = value" / "fp32: key = value", applied only where the CPU
 * has (bf16 = 1) or lacks (bf16 = 0) AVX512-BF16 (the other CPU's line is checked, not
 * applied); bf16 < 0 (plain text, not a file) refuses such lines. Sets *cond when the
 * line had a condition. seen: the file's keys' lines so far (NULL for text). */
static int parse_line(Config *c, char *line, const char *where, int lineno, int bf16,
                      int *cond, KeyLines *seen, char *err)
{
    char *hash = config_comment(line);
    if (hash)
        *hash = 0;
    char *s = trim(line);
    if (!*s)
        return LM_OK;
    int scope = !strncmp(s, "bf16:", 5) ? 1 : !strncmp(s, "fp32:", 5) ? 2 : 0;
    if (scope) {
        if (bf16 < 0)
            return err_set(err, LM_EARG, "%s:%d: '%.5s' lines (by the CPU's bf16 support) "
                           "belong in experiment files only", where, lineno, s);
        *cond = 1;
        s = trim(s + 5);
    }
    char *eq = strchr(s, '=');
    if (!eq)
        return err_set(err, LM_EARG, "%s:%d: expected key=value, got '%s'", where, lineno, s);
    *eq = 0;
    char *key = trim(s), *val = trim(eq + 1);
    size_t vl = strlen(val);
    if (vl >= 2 && val[0] == '"' && val[vl - 1] == '"') {
        val[vl - 1] = 0;
        val++;
    }
    unescape(val);
    if (seen && check_seen(seen, key, scope, where, lineno, err))
        return LM_EARG;
    Config *into = c;
    if (scope && (scope == 1) != (bf16 > 0)) {   /* the other CPU's line: checked, not applied */
        if (!(into = malloc(sizeof *into)))
            return err_set(err, LM_ENOMEM, "out of memory");
        *into = *c;
    }
    char e2[LM_ERR_LEN];
    int rc = config_set(into, key, val, e2) ? err_set(err, LM_EARG, "%s:%d: %s", where, lineno,
                                                      e2) : LM_OK;
    if (into != c)
        free(into);
    return rc;
}

int config_from_text(Config *c, const char *text, char *err)
{
    char *copy = strdup(text);
    if (!copy)
        return err_set(err, LM_ENOMEM, "out of memory");
    int rc = LM_OK, lineno = 0;
    for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        int cond = 0;
        if ((rc = parse_line(c, line, "config", lineno, -1, &cond, NULL, err)))
            break;
    }
    free(copy);
    return rc;
}

int config_load_file(Config *c, const char *path, char *err)
{
    int avx512_bf16 = 0, amx = 0;
    sysinfo_bf16(&avx512_bf16, &amx);
    return config_load_file_cpu(c, path, avx512_bf16, err);
}

int config_load_file_cpu(Config *c, const char *path, int bf16, char *err)
{
    char e2[LM_ERR_LEN];
    int cond = 0;
    FILE *f = regfile_fopen(path, e2);   /* a FIFO or device never blocks: refused */
    if (!f)
        return err_set(err, LM_EIO, "cannot open experiment file %s", e2);
    char line[2048];
    int lineno = 0, rc = LM_OK, n_keys;
    config_keys(&n_keys);
    KeyLines *seen = calloc((size_t)n_keys, sizeof *seen);
    if (!seen) {
        fclose(f);
        return err_set(err, LM_ENOMEM, "out of memory");
    }
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            rc = err_set(err, LM_EFORMAT, "%s:%d: line too long", path, lineno);
            break;
        }
        char *text = line;
        if (lineno == 1 && !memcmp(line, "\xEF\xBB\xBF", 3))   /* a UTF-8 byte-order mark */
            text += 3;
        if ((rc = parse_line(c, text, path, lineno, bf16 ? 1 : 0, &cond, seen, err)))
            break;
    }
    free(seen);
    fclose(f);
    if (!rc && cond)   /* the run records which recipe this CPU got */
        snprintf(c->cpu_recipe, sizeof c->cpu_recipe, "%s", bf16 ? "bf16" : "fp32");
    return rc;
}
