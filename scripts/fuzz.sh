#!/usr/bin/env bash
# Builds every libFuzzer target in tests/fuzz (fuzz_*.c) with clang
# -fsanitize=fuzzer,address,undefined against the core sources (and the command-line
# sources the lexer target needs), then runs each for a bounded time on its committed
# corpus tests/fuzz/corpus/<name>/. Fails on a crash, a sanitizer report or a build error.
#   scripts/fuzz.sh [SECONDS_PER_TARGET (default 20; 0 = build only)] [TARGET ...]
# New inputs found are kept in a scratch dir, never written into the committed corpus
# (minimise them by hand with -merge=1, see the targets' header comments).
# Not a coverage report or a corpus minimiser.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-20}
shift || true
OUT=${FUZZ_OUT:-/tmp/lmlab-fuzz}
CC=${CC_FUZZ:-clang}
mkdir -p "$OUT/obj" "$OUT/gen"
# meson generates git_rev.h at build time; the fuzz build writes its own.
echo '#define LMLAB_GIT_REV "fuzz"' > "$OUT/gen/git_rev.h"
FLAGS="-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE -std=c11"
FLAGS="$FLAGS -DLMLAB_VERSION=\"fuzz\" -DLMLAB_DATA_DIR=\"$PWD/data\""
FLAGS="$FLAGS -DLMLAB_EXPERIMENTS_DIR=\"$PWD/experiments\" $(for d in core/*/; do printf -- " -I%s" "${d%/}"; done) -Icommands -I$OUT/gen"
LIBS="-lopenblas -ljansson -lsqlite3 -lutf8proc -lzip -lz -llzma -lzstd -lcrypto -lprotobuf-c -lm -lpthread"
# the TensorBoard messages' C (meson generates it at build time; the fuzz build makes its own)
protoc-c --proto_path=proto --c_out="$OUT/gen" proto/tensorboard.proto

# One archive of the library sources, instrumented for coverage but without a main.
objs=()
for src in core/*/*.c "$OUT/gen/tensorboard.pb-c.c" commands/lexer.c commands/cmdtable.c commands/suggest.c \
           commands/cmdtable_help.c commands/cmdtable_complete.c commands/editor.c commands/history.c; do
    obj="$OUT/obj/$(echo "$src" | tr / _).o"
    if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ "$0" -nt "$obj" ]; then
        # shellcheck disable=SC2086
        $CC $FLAGS -fsanitize=fuzzer-no-link -c "$src" -o "$obj"
    fi
    objs+=("$obj")
done
rm -f "$OUT/liblmfuzz.a"
ar rcs "$OUT/liblmfuzz.a" "${objs[@]}"

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for f in tests/fuzz/fuzz_*.c; do
        n=$(basename "$f" .c)
        targets+=("${n#fuzz_}")
    done
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
failed=0
for name in "${targets[@]}"; do
    bin="$OUT/fuzz_$name"
    # shellcheck disable=SC2086
    $CC $FLAGS -fsanitize=fuzzer "tests/fuzz/fuzz_$name.c" "$OUT/liblmfuzz.a" $LIBS -o "$bin"
    [ "$SECS" -gt 0 ] || continue  # 0: build only
    corpus="tests/fuzz/corpus/$name"
    work="$OUT/work_$name"
    mkdir -p "$corpus" "$work"
    echo "fuzz $name: ${SECS}s on $(find "$corpus" -type f | wc -l) corpus inputs"
    if ! "$bin" -max_total_time="$SECS" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
            -print_final_stats=1 -artifact_prefix="$OUT/crash_${name}_" \
            "$work" "$corpus" >"$OUT/log_$name" 2>&1; then
        echo "fuzz $name: FAILED (log $OUT/log_$name)"
        tail -40 "$OUT/log_$name"
        failed=1
    else
        grep -E 'stat::number_of_executed_units|stat::new_units_added' "$OUT/log_$name" |
            tr '\n' ' ' | sed 's/^/  /'
        echo
    fi
done
exit $failed
