/* cmd_tokenize.h — the table's handlers of cmd_tokenize.c: `tokenize`. */
#ifndef LM_CMD_TOKENIZE_H
#define LM_CMD_TOKENIZE_H

#include "session.h"

int cmd_tokenize(Session *s, int argc, const LexWord *argv);

#endif
