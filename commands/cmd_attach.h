/* cmd_attach.h — the table's handlers of cmd_attach.c: `attach`: the stored run the session shows when it trains none. */
#ifndef LM_CMD_ATTACH_H
#define LM_CMD_ATTACH_H

#include "session.h"

int cmd_attach(Session *s, int argc, const LexWord *argv);

#endif
