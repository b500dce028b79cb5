/* run_fork.h — what a fork starts from: the checkpoint of a run's folder at one step
 * (step-N.safetensors, with its optimizer file next to it), and the settings a fork may
 * not change because the checkpoint's data position and shapes depend on them.
 * Not the launch itself (run_launch with RunLaunchOptions.fork_from) nor the command
 * (commands/cmd_fork.c). */
#ifndef LM_RUN_FORK_H
#define LM_RUN_FORK_H

#include <stddef.h>

/* The checkpoint of folder dir at step into path (0), or -1 when there is none; then
 * steps receives the steps that have one, ascending ("100, 200, 300"; "none" when the
 * folder holds no step checkpoint, "none: its folder DIR is gone (...)" when the folder
 * itself is missing; cut with ", ..." to fit cap). */
int run_fork_find(const char *dir, long step, char *path, size_t path_cap, char *steps,
                  size_t cap);

/* 1 when a fork may not change setting key (the data's tokenization and batching: the
 * checkpoint's data position depends on them), else 0. data= may be given: its content
 * must hash as the parent's (run_launch checks), wherever it is. */
int run_fork_fixed_key(const char *key);

#endif
