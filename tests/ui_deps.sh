#!/usr/bin/env bash
# ui_deps.sh — the include graph of ui/ is acyclic: every ui/X.{c,h} that includes a
# ui/Y.h is an edge X -> Y (a module is its .c and .h); tsort fails on a loop and names
# it. Usage: ui_deps.sh UI_DIR.
set -eu
cd "$1"
edges=$(for f in *.c *.h; do
    grep -o '#include "[a-z_0-9]*\.h"' "$f" | sed 's/#include "\(.*\)\.h"/\1/' |
        while read -r h; do   # bounded: reads grep's output to its end
            [ -f "$h.h" ] && [ "$h" != "${f%.*}" ] && echo "${f%.*} $h"; done
done | sort -u)
[ -n "$edges" ] || { echo "FAIL: no include edges found in $1"; exit 1; }
printf '%s\n' "$edges" | tsort >/dev/null || { echo "FAIL: include cycle among ui/ files"; exit 1; }
echo "ui/ include graph: $(printf '%s\n' "$edges" | wc -l) edges, acyclic"
echo "1 passed, 0 failed"
