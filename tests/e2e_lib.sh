# e2e_lib.sh — the tally the end-to-end scripts that go on past a failed check keep (the
# others stop at their first `fail`). Sourced near the top, before the script leaves the
# folder it was started in:  . "$(dirname "$0")/e2e_lib.sh"
#   ok DESC / bad DESC    print one line for a check ("ok   DESC", "FAIL DESC");
#                         bad counts it in FAILS (a script may redefine bad to say more)
#   check DESC CMD...     runs CMD: ok when it succeeds, bad when not, and returns 1
#                         then, so that `check ... || show FILE` prints what was said
# The script ends with its own summary line from FAILS and exits non-zero when FAILS > 0.
FAILS=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; FAILS=$((FAILS + 1)); }
check() { local d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; return 1; fi; }
# show FILE...: the last lines of each file, indented, for a failed check to print what
# the command said (the script's folder is gone after it ends, unless KEEP is set)
show() { local f; for f in "$@"; do echo "     $f:"; tail -8 "$f" 2>/dev/null | sed 's/^/     | /'; done; }
