/* cmd_data.h — the table's handler of cmd_data.c: `data prepare|list|rm`. */
#ifndef LM_CMD_DATA_H
#define LM_CMD_DATA_H

#include "session.h"

int cmd_data(Session *s, int argc, const LexWord *argv);

#endif
