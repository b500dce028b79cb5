/* cmd_model.h — the table's handlers of cmd_model.c: the open model: `open`, `import`, `save`. */
#ifndef LM_CMD_MODEL_H
#define LM_CMD_MODEL_H

#include "session.h"

int cmd_open(Session *s, int argc, const LexWord *argv);
int cmd_import(Session *s, int argc, const LexWord *argv);
int cmd_save(Session *s, int argc, const LexWord *argv);

#endif
