/* shellcmd.h — `lmlab CMD ARGS ...` from the shell, git-style: which word of the command
 * line names a command of the one table (commands.c), and the REPL line the shell's
 * words become, so every command runs from the shell with the same words as at the
 * prompt. Not here: running the line (session.c) or parsing lmlab's own options
 * (app/main.c). */
#ifndef LM_SHELLCMD_H
#define LM_SHELLCMD_H

#include "cmdtable.h"

#include <stddef.h>

/* What a bare word on lmlab's command line is. */
typedef enum {
    SHELL_WORD_COMMAND,   /* a command name and no regular file of that name */
    SHELL_WORD_BOTH,      /* a command name and also a regular file here: the command runs
                             (the caller says so on stderr; `./NAME` runs the file) */
    SHELL_WORD_SCRIPT,    /* a regular file, or a word that looks like a path (has a '/' or
                             ends in .lmlab) */
    SHELL_WORD_UNKNOWN    /* neither: err holds "unknown command ... did you mean ..." */
} ShellWordKind;

/* Classifies word against table and the file system (see ShellWordKind). err
 * (LM_ERR_LEN) is set for SHELL_WORD_UNKNOWN, and for a directory named like no command
 * ("'runs/' is a directory, not a script or a command"). */
ShellWordKind shellcmd_classify(const Command *table, int n, const char *word, char *err);

/* Writes into line (cap bytes) the REPL line for the shell words words[0..nw): the
 * command name first, each word as the lexer would read it back unchanged (bare when it
 * can be, else double-quoted with \" \\ \n \t escapes; a key=value word keeps its key bare
 * and quotes only the value). For `train`, a first word that is not key=value names the
 * experiment: the line becomes `use "EXP"; train ...`. LM_OK; LM_EARG when the line
 * would not fit (err says so). */
int shellcmd_line(const char *const *words, int nw, char *line, size_t cap, char *err);

/* LM_OK when the shell words (command first) do something that outlives a one-shot
 * `lmlab CMD ARGS`; LM_EARG with what to do instead in err for a command given arguments
 * that only changes the session's own state (CMD_SESSION: `use quick`, `set lr=1e-3`,
 * `unset lr`), which ends with the call. `use` alone (it lists) is fine. */
int shellcmd_check_lasting(const Command *table, int n, const char *const *words, int nw,
                           char *err);

#endif
