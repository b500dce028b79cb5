/* cmd_edits.h — the table's handlers of cmd_edits.c: the edits of a stored run: `tag`,
 * `untag`, `rename`, `rm`. */
#ifndef LM_CMD_EDITS_H
#define LM_CMD_EDITS_H

#include "session.h"

int cmd_tag(Session *s, int argc, const LexWord *argv);
int cmd_untag(Session *s, int argc, const LexWord *argv);
int cmd_rename(Session *s, int argc, const LexWord *argv);
int cmd_rm(Session *s, int argc, const LexWord *argv);

#endif
