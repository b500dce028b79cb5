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


/* The table's handlers: `log`, `note`, `alert`. */
int cmd_log(Session *s, int argc, const LexWord *argv);
int cmd_note(Session *s, int argc, const LexWord *argv);
int cmd_alert(Session *s, int argc, const LexWord *argv);

#endif
