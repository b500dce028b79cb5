/* cmd_compare.h — the table's handler of cmd_compare.c: `compare` (runs side by side). */
#ifndef LM_CMD_COMPARE_H
#define LM_CMD_COMPARE_H

#include "session.h"

int cmd_compare(Session *s, int argc, const LexWord *argv);

#endif
