#!/usr/bin/env bash
# e2e_files.sh — what `export file=`, `plot file=` and `save PATH` do to the path they are
# given, against the real binary: a symbolic link stays a link and its target gets the
# content; a FIFO is streamed to its reader and stays a FIFO; /dev/null stays a device; a
# directory and a socket are refused naming what they are; "-" is standard output. Paths
# longer than a fixed buffer are refused, never cut (--db, use).
# Usage: e2e_files.sh LMLAB_BINARY.
set -u
. "$(dirname "$0")/e2e_lib.sh"   # ok, bad, check and FAILS
. "$(dirname "$0")/bounded.sh"   # bwait: every wait on a child is bounded
L=$(readlink -f "$1")
W=$(mktemp -d /tmp/lmlab_files_XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
lm() { "$L" --db t.db -c "$1" >out.log 2>&1; }

"$L" --db t.db train quick steps=20 runs_dir=R >/dev/null 2>&1 || { echo "training failed"; exit 1; }

: >target.csv
ln -s target.csv link.csv
lm "export 1 file=link.csv"
check "export through a symlink succeeds" [ $? -eq 0 ]
check "the link is still a link" [ -L link.csv ]
check "its target holds the CSV" grep -q "^run,step,metric,value" target.csv

mkfifo pipe.csv
# the reader starts with lmlab and opens the FIFO a moment after it (issue 38: this race
# failed the first run on a fresh machine, and an unbounded wait then hung the suite)
( sleep 0.5; exec cat pipe.csv >got.csv ) &
reader=$!
lm "export 1 file=pipe.csv"
check "export into a FIFO whose reader opens it 0.5 s later succeeds" [ $? -eq 0 ]
bwait $reader 20 "the FIFO's reader (cat)"
check "the reader got the CSV" grep -q "^run,step,metric,value" got.csv
check "the FIFO is still a FIFO" [ -p pipe.csv ]
lm "export 1 file=pipe.csv"
check "a FIFO without a reader is refused, no hang, saying how long it waited" \
    grep -q "no reader (waited 3.0 s for one)" out.log

# A character device: a private node of /dev/null's kind (root only), never /dev/null
# itself, so a regression cannot damage the machine's device.
if mknod -m 666 devnull c 1 3 2>/dev/null; then
    lm "export 1 format=csv file=devnull"
    check "export to a character device succeeds" [ $? -eq 0 ]
    check "the device is still a character device" [ -c devnull ]
else
    echo "skip: a character device needs root (mknod)"
fi
mkdir adir
lm "export 1 format=csv file=adir"
check "a directory is refused, naming it" grep -q "adir is a directory" out.log
check "the directory is untouched" [ -d adir ]
lm "export 1"
check "no file= writes CSV to standard output" grep -q "^run,step,metric,value" out.log

: >w.safetensors
ln -s w.safetensors wlink.safetensors
lm "open 1; save wlink.safetensors"
check "save through a symlink succeeds" [ $? -eq 0 ]
check "the saved link is still a link" [ -L wlink.safetensors ]
check "its target holds the weights" [ -s w.safetensors ]
lm "open wlink.safetensors; sample tokens=3"
check "the weights saved through the link load" [ $? -eq 0 ]
lm "open 1; save adir"
check "save onto a directory is refused" grep -q "adir is a directory" out.log

: >p.png
ln -s p.png plink.png
lm "plot 1 file=plink.png"
check "plot through a symlink succeeds" [ $? -eq 0 ]
check "the plot link is still a link" [ -L plink.png ]
check "its target is a PNG" bash -c "head -c 8 p.png | od -An -c | grep -q 'P   N   G'"
check "no temporary files left" bash -c "! ls -A | grep -q '\\.tmp\\.'"

# Paths longer than a fixed buffer are never cut into another file's name (issue 25):
# --db refuses with a usage error, `use` of an experiment file says it is not there.
long=$(printf 'd%.0s' $(seq 1100))
"$L" --db "$long/x.db" -c runs >out.log 2>&1
check "--db with a 1,105-byte path is a usage error" [ $? -eq 2 ]
check "  saying the path is too long" grep -q "the path is 1105 bytes" out.log
lm "use $(printf 'x/%.0s' $(seq 520))quick.conf"
check "use of a 1,049-byte experiment path is refused" grep -q "no experiment" out.log

echo "e2e_files: $FAILS failed"
[ "$FAILS" -eq 0 ] && echo "1 passed, 0 failed"
[ "$FAILS" -eq 0 ]
