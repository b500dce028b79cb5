/* cmd_config.h — the table's handlers of cmd_config.c: configuration and help: `help`, `quit`, `use`, `set`, `unset`, `show`. */
#ifndef LM_CMD_CONFIG_H
#define LM_CMD_CONFIG_H

#include "session.h"

int cmd_help(Session *s, int argc, const LexWord *argv);
int cmd_quit(Session *s, int argc, const LexWord *argv);
int cmd_use(Session *s, int argc, const LexWord *argv);
int cmd_set(Session *s, int argc, const LexWord *argv);
int cmd_unset(Session *s, int argc, const LexWord *argv);
int cmd_show(Session *s, int argc, const LexWord *argv);

#endif
