/* cmd_export.h — the table's handler of cmd_export.c: `export` (CSV, JSON, TensorBoard). */
#ifndef LM_CMD_EXPORT_H
#define LM_CMD_EXPORT_H

#include "session.h"

int cmd_export(Session *s, int argc, const LexWord *argv);

#endif
