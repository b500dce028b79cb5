/* main.c — lmlab's entry point: parses the command line and hands over to the command
 * interpreter, the dashboard or a headless command. Thin on purpose: no logic here. */
#include <stdio.h>
#include <string.h>

static const char USAGE[] =
    "usage: lmlab [options] [FILE.lmlab]\n"
    "       lmlab train EXPERIMENT [key=value ...]\n"
    "       lmlab bench [WORKLOAD ...] [--json]\n"
    "\n"
    "A terminal workbench for training and studying small language models on a CPU:\n"
    "the Dispatcher LM (arXiv 2105.03994), an MSA transformer, a linear LM and\n"
    "recurrent LMs (LSTM, GRU, RNN).\n"
    "\n"
    "options:\n"
    "  -c 'CMD; CMD'     run the commands and exit\n"
    "  --plain           line-mode prompt instead of the dashboard\n"
    "  --json            print every result as one JSON object per line\n"
    "  --db PATH         the run store (default: $LMLAB_DB or ./lmlab.db)\n"
    "  --keep-going      in scripts, continue after a failing command\n"
    "  --version         print the version and exit\n"
    "  -h, --help        print this help and exit\n";

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--version")) {
            printf("lmlab %s\n", LMLAB_VERSION);
            return 0;
        }
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(USAGE, stdout);
            return 0;
        }
    }
    fputs(USAGE, stderr);
    return 2;
}
