#!/usr/bin/env bash
# microbench_levels.sh — the elementwise kernels that call fast_expf (core/nn/fastmath.h) as
# each CPU level's variant runs them: core/nn/crossentropy.c and activation.c compiled with
# the project's flags for one -march level at a time (LMLAB_NO_CLONES, so the file is that
# level's code only), with and without -fno-trapping-math, into one driver that times the
# fused cross-entropy (the paper's vocabulary, 28782, over 8 rows in cache) and GELU forward
# in ns per element, best of 30, and prints a checksum of the outputs (equal checksums: the
# same results). Shows what each level of the default build runs at on this CPU; a level
# this CPU lacks is skipped. Not built by meson, not a test (its figures depend on the
# machine); docs/cpu.md quotes it. Usage: scripts/microbench_levels.sh
set -euo pipefail
cd "$(dirname "$0")/.."
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
cat > "$T/drv.c" <<'EOF'

#include "activation.h"
#include "crossentropy.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
enum { R = 8, V = 28782, G = 1 << 16 };
static float x[R * V], d[R * V], g[G], go[G];
int main(void){
  int t[R]; for (int r = 0; r < R; r++) t[r] = (r * 7919) % V;
  for (size_t i = 0; i < (size_t)R * V; i++) x[i] = (float)((i * 2654435761u) % 1000) / 100.0f - 5.0f;
  for (int i = 0; i < G; i++) g[i] = (float)((i * 40503u) % 2000) / 250.0f - 4.0f;
  double bc = 1e9, bg = 1e9, loss = 0;
  for (int rep = 0; rep < 30; rep++) {
    double t0 = now(); loss = crossentropy_forward_backward(d, x, t, R, V, 1.0f); double t1 = now();
    gelu_forward(go, g, G); double t2 = now();
    if (t1 - t0 < bc) bc = t1 - t0;
    if (t2 - t1 < bg) bg = t2 - t1;
  }
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < (size_t)R * V; i++) { uint32_t u; memcpy(&u, &d[i], 4); h = (h ^ u) * 1099511628211ull; }
  for (int i = 0; i < G; i++) { uint32_t u; memcpy(&u, &go[i], 4); h = (h ^ u) * 1099511628211ull; }
  printf("cross-entropy %6.2f ns/element   GELU %6.2f ns/element   checksum %016llx (loss %.6f)\n",
         bc / ((double)R * V) * 1e9, bg / G * 1e9, (unsigned long long)h, loss);
}
EOF
flags="-std=c11 -O3 -fno-math-errno -ffp-contract=off -D_GNU_SOURCE -DLMLAB_NO_CLONES -Icore/nn -Icore/base"
for level in x86-64 x86-64-v3 x86-64-v4; do
  case $level in
    x86-64-v3) need=avx2 ;;
    x86-64-v4) need=avx512f ;;
    *) need=sse2 ;;
  esac
  if ! grep -qw "$need" /proc/cpuinfo; then
    echo "$level: not run, this CPU lacks $need"; continue
  fi
  for trap in "" -fno-trapping-math; do
    gcc $flags -march=$level $trap "$T/drv.c" core/nn/crossentropy.c core/nn/activation.c \
      -lm -o "$T/drv"
    printf '%-10s %-19s ' "$level" "${trap:-(trapping math)}"
    "$T/drv"
  done
done
