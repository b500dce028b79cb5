/* cmd_eval.h — the table's handlers of cmd_eval.c: using the open model: `eval`, `sample`, `coeffs`. */
#ifndef LM_CMD_EVAL_H
#define LM_CMD_EVAL_H

#include "session.h"

int cmd_eval(Session *s, int argc, const LexWord *argv);
int cmd_sample(Session *s, int argc, const LexWord *argv);
int cmd_coeffs(Session *s, int argc, const LexWord *argv);

#endif
