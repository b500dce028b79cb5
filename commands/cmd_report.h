/* cmd_report.h — the table's handlers of cmd_report.c: `report`: one self-contained HTML (or Markdown) report. */
#ifndef LM_CMD_REPORT_H
#define LM_CMD_REPORT_H

#include "session.h"

int cmd_report(Session *s, int argc, const LexWord *argv);

#endif
