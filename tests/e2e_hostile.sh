#!/usr/bin/env bash
# e2e_hostile.sh — the fifth round of hostile input (issue 38, items 4 and 6-9) against
# the real binary: a 1.7 KB checkpoint whose settings describe a large model and that
# holds no tensors is refused by open, import, train init_from= and sample runs= before
# anything is allocated (checked under a 2 GB address-space limit: the model it describes
# needs about 4 GB); ... Every wait is bounded. Usage: e2e_hostile.sh LMLAB_BINARY.
set -u
. "$(dirname "$0")/bounded.sh"   # bwait: every wait on a child is bounded
L=$(readlink -f "$1")
W=$(mktemp -d /tmp/lmlab_hostile_XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
FAILS=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; FAILS=$((FAILS + 1)); }
check() { local d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }
has() { grep -qE -- "$2" "$1"; }
hasnt() { ! grep -qE -- "$2" "$1"; }
eq() { [ "$1" == "$2" ]; }
q() { sqlite3 -cmd ".timeout 5000" "$DB" "$1"; }
DB=t.db
lm() { timeout 300 "$L" --db "$DB" "$@"; }

"$L" --db "$DB" train quick steps=20 checkpoint_every=10 runs_dir=R >/dev/null 2>&1 ||
    { echo "training failed"; exit 1; }

echo "== 4. a tiny checkpoint that describes a large model"
ck=$(ls R/run-1-*/step-*.safetensors | grep -v optim | head -1)
python3 - "$ck" <<'PY'
import json, struct, sys
b = open(sys.argv[1], 'rb').read()
n = struct.unpack('<Q', b[:8])[0]
meta = json.loads(b[8:8 + n])['__metadata__']
big = {'d': 'd=2048', 'nhid': 'nhid=8192', 'layers': 'layers=12'}
meta['config'] = '\n'.join(big.get(l.split('=')[0], l) for l in meta['config'].splitlines()) + '\n'
meta.pop('weights_fnv1a', None)
h = json.dumps({'__metadata__': meta}).encode()     # the settings, no tensor at all
open('big.safetensors', 'wb').write(struct.pack('<Q', len(h)) + h)
PY
check "the crafted checkpoint is under 2 KB" [ "$(stat -c %s big.safetensors)" -lt 2048 ]
limited() { (ulimit -v 2000000; lm "$@") >lim.out 2>&1; }
for c in "open big.safetensors" "import big.safetensors" \
         "use quick; set d=2048 nhid=8192 layers=12; train init_from=big.safetensors steps=1"; do
    limited -c "$c"
    check "'$c' under 2 GB: refused naming the missing tensor, nothing allocated" \
        has lim.out "tensor 'encoder.weight' is missing"
done
# sample runs=: the run's newest checkpoint is the crafted one
mkdir -p R/crafted && cp big.safetensors R/crafted/step-00000030.safetensors
q "UPDATE runs SET checkpoint_dir='$W/R/crafted' WHERE id=1"
limited -c "sample runs=1 tokens=5"
check "'sample runs=1' on it under 2 GB: refused naming the missing tensor" \
    has lim.out "tensor 'encoder.weight' is missing"

echo "$FAILS failed"
[ "$FAILS" -eq 0 ]
