/* cmd_report.h — the table's handler of cmd_report.c, `report`: one self-contained HTML
 * (or Markdown) report; and the report's sections, which the module's other files write
 * into the document (report_doc.h) in the order cmd_report.c puts them. */
#ifndef LM_CMD_REPORT_H
#define LM_CMD_REPORT_H

#include "session.h"
#include "report_doc.h"

int cmd_report(Session *s, int argc, const LexWord *argv);

/* cmd_report_runs.c: the machine and versions, the curves of the best runs, the runs
 * table with the settings that differ, and the series matching the pattern `series`. */
void cmd_report_write_runs(Report *r, const char *series);

/* cmd_report_sweep.c: seed groups as mean ± std bands (when the runs have any) and
 * r->sweep's parallel coordinates and parameter importance (when r->sweep > 0). */
void cmd_report_write_sweep(Report *r);

/* cmd_report_text.c: the best run's samples, the notes on the runs and the sweep, and the
 * console tails of the best runs. */
void cmd_report_write_text(Report *r);

#endif
