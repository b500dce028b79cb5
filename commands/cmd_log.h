/* cmd_log.h — the console, notes and alerts commands (commands/cmd_log.c) and the blocks
 * `run ID` and the report add about a run (notes, system metrics, fired alerts). */
#ifndef LM_CMD_LOG_H
#define LM_CMD_LOG_H

#include "session.h"
#include "runstore_notes.h"

/* Local time of Unix seconds t: "HH:MM:SS", with_date "YYYY-MM-DD HH:MM:SS"; "-" for 0. */
void cmd_log_fmt_time(char *buf, size_t cap, double t, int with_date);

/* `run ID`'s notes, system metrics (means and peaks) and fired alerts, as text lines or
 * as the keys note_list, system and alerts_fired of o. Store errors leave a block out. */
void cmd_log_run_text(Session *s, RunStore *st, long run);
void cmd_log_run_json(json_t *o, RunStore *st, long run);

/* The notes as a JSON array of {id, run, sweep, time, text} (new reference). */
json_t *cmd_log_notes_json(const NoteRow *nt, int n);

/* `bench track` (cmd_bench_track.c): the tracking's cost per second of training against
 * a step of the small workload measured at tokens_per_s. Prints; returns the status. */
int cmd_bench_track(Session *s, double tokens_per_s, long tokens_per_step);

#endif
