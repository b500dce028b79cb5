#!/usr/bin/env bash
# e2e_data.sh — `data prepare|list|rm` against the real binary: kill -9 during a prepare
# leaves no cache taken as whole (list says incomplete; the next prepare names what it
# found and starts over); a changed source makes the cache stale; a disk that fills
# during a prepare keeps nothing and says how much is needed; a prepare that cannot fit
# is refused before it starts; strict refusals; --json events; rm asks for yes; a refused
# prepare (after it took its key's lock) leaves no KEY.lock behind.
# Disk scenarios need root and tmpfs mounts (skipped otherwise, as e2e_faults.sh).
# Usage: e2e_data.sh LMLAB_BINARY.
set -u
. "$(dirname "$0")/e2e_lib.sh"   # ok, bad, check and FAILS
. "$(dirname "$0")/bounded.sh"   # bwait, wait_until: every wait is bounded
L=$(readlink -f "$1")
W=$(mktemp -d /tmp/lmlab_data_XXXXXX)
MOUNTS=()
cleanup() {
    for m in "${MOUNTS[@]}"; do umount -l "$m" 2>/dev/null; done
    rm -rf "$W"
}
trap cleanup EXIT
cd "$W" || exit 1
has() { grep -q -- "$2" "$1"; }
lm() { "$L" --db t.db "$@"; }

# a 2 MB text (lines of words), and a folder of links to it: a long prepare that reads
# from the page cache and writes little (word tokens, uint16)
for i in $(seq 1 400); do echo "the quick brown fox $i jumps over the lazy dog near line $i of the text"; done >part.txt
for i in $(seq 1 30); do cat part.txt; done >a.txt
links() { mkdir -p "$1"; for i in $(seq 1 "$2"); do ln -sf ../a.txt "$1/$i.txt"; done; }
links many 150
LIST=many

echo "== 1. kill -9 during a prepare, then start again"
shard_in_tmp() { ls lmlab-tokens/.tmp-*/all_000000.bin >/dev/null 2>&1; }
killed=0
for attempt in 1 2 3; do
    "$L" --db t.db data prepare "$LIST" tokenizer=word >k.log 2>&1 &
    pid=$!
    wait_until 120 shard_in_tmp
    lm data list >l0.log 2>&1                     # while it runs (when the kill finds it)
    if kill -9 $pid 2>/dev/null; then
        bwait $pid 30 "the killed prepare" 2>/dev/null
        killed=1
        break
    fi
    bwait $pid 30 "a prepare that ended before the kill"   # too fast here: a longer list
    lm data rm "$LIST" tokenizer=word yes >/dev/null 2>&1
    links many$attempt $((150 * 4 ** attempt))
    LIST=many$attempt
done
check "a prepare was killed while it wrote shards" [ $killed -eq 1 ]
check "list while it ran: being prepared now, by its process" has l0.log "being prepared now (process $pid)"
lm data list >l1.log 2>&1
check "list: the killed prepare is incomplete" has l1.log "incomplete"
check "list: no cache is fresh" bash -c "! grep -q fresh l1.log"
lm data prepare "$LIST" tokenizer=word >k2.log 2>&1
check "the next prepare succeeds" [ $? -eq 0 ]
check "it says it found an interrupted prepare and starts over" has k2.log "found an interrupted prepare"
check "no temporary directory is left" bash -c "! ls -d lmlab-tokens/.tmp-* 2>/dev/null"
lm data prepare "$LIST" tokenizer=word >k3.log 2>&1
check "a third start uses the cache" has k3.log "using the prepared tokens"
lm data list >l2.log 2>&1
check "list: fresh, word tokenizer, its sources" bash -c "grep fresh l2.log | grep -q 'word/'"

echo "== 2. a changed source makes the cache stale"
lm data prepare part.txt >s1.log 2>&1
echo "one more line" >>part.txt
lm data list >s2.log 2>&1
check "list says stale and why" bash -c "grep -q stale s2.log && grep -q 'changed since it was prepared' s2.log"
lm data prepare part.txt >s3.log 2>&1
check "the next prepare says stale and prepares again" bash -c "grep -q 'are stale' s3.log && grep -q 'tokens) in' s3.log"

echo "== 3. --json events"
lm --json data prepare a.txt tokenizer=bpe >j.log 2>&1
check "json: progress events" has j.log '"event":"data_progress"'
check "json: the done event" has j.log '"event":"data_done"'
check "json: the result" has j.log '"ok":true'

echo "== 4. bad input"
# the cache's lock files: a refused prepare (after it took its key's lock) leaves none
locks() { ls -A lmlab-tokens | grep '\.lock$'; }
l0=$(locks)
mkdir -p mixed && cp part.txt mixed/ && printf 'ELF\0\0\0binary' >mixed/x.bin
lm data prepare mixed strict=true >b1.log 2>&1
check "strict=true refuses a binary file, naming it" bash -c "[ $? -ne 0 ] && grep -q 'x.bin' b1.log && grep -q strict b1.log"
check "the refused prepare leaves no lock file" [ "$(locks)" = "$l0" ]
lm data prepare part.txt tokenizer=gpt2 vocab_size=500 >b5.log 2>&1
check "a vocab_size gpt2 cannot have is refused, naming it" bash -c "[ $? -ne 0 ] && grep -q 'vocab_size=500' b5.log"
check "and leaves no lock file" [ "$(locks)" = "$l0" ]
lm data prepare mixed >b2.log 2>&1
check "without strict the binary file is skipped" [ $? -eq 0 ]
check "meta.json counts and names it" bash -c "grep -l x.bin lmlab-tokens/*/meta.json | grep -q meta"
lm data prepare nosuch.txt >b3.log 2>&1
check "a missing source is named" bash -c "grep -q nosuch.txt b3.log"
printf '{"text": "ok"}\nnot json\n' >bad.jsonl
for i in $(seq 1 50); do echo '{"text": "the quick brown fox jumps over the lazy dog"}'; done >>bad.jsonl
lm data prepare bad.jsonl >b4.log 2>&1
check "a bad jsonl line is skipped" [ $? -eq 0 ]
check "and named with its line" bash -c "grep -h 'bad.jsonl:2' lmlab-tokens/*/meta.json | grep -q bad"

echo "== 5. rm asks"
key=$(lm --json data list | python3 -c 'import json,sys; print(json.load(sys.stdin)["caches"][0]["key"])')
lm data rm "$key" </dev/null >r1.log 2>&1
check "rm without yes in a script deletes nothing" bash -c "[ $? -ne 0 ] && grep -q 'nothing was deleted' r1.log && [ -d lmlab-tokens/$key ]"
lm data rm "$key" yes >r2.log 2>&1
check "rm yes deletes" bash -c "[ $? -eq 0 ] && [ ! -d lmlab-tokens/$key ] && grep -q deleted r2.log"

echo "== 6. a full disk"
if [ "$(id -u)" -ne 0 ] || ! mkdir -p D || ! mount -t tmpfs -o size=4M tmpfs D 2>/dev/null; then
    echo "skip: disk full needs root and a tmpfs mount"
else
    MOUNTS+=("$W/D")
    for i in $(seq 1 5); do cat a.txt; done >big.txt       # 13 MB of text: 26 MB of char tokens
    lm data prepare big.txt tokens_dir=D/tok >d1.log 2>&1
    check "refused before it starts, saying the space needed and free" \
        bash -c "[ $? -ne 0 ] && grep -q 'would need about' d1.log && grep -q 'MB free' d1.log"
    gzip -c big.txt >big.txt.gz                            # compresses ~100x: the estimate fits
    lm data prepare big.txt.gz tokens_dir=D/tok >d2.log 2>&1
    check "the disk fills during the prepare: an error saying how much is needed" \
        bash -c "[ $? -ne 0 ] && grep -q 'the disk filled' d2.log && grep -q 'needs about' d2.log"
    check "no partial cache is kept, nor a lock file" bash -c "[ -z \"\$(ls -A D/tok)\" ]"
    check "the disk's space is back" bash -c "[ \$(du -sk D | cut -f1) -lt 100 ]"
fi

[ $FAILS -eq 0 ] && echo "all passed" || echo "$FAILS failed"
exit $((FAILS > 0))
