/* microbench_bf16.c — one thread's sgemm against gemm_bf16 (core/nn/gemm_bf16.c) on
 * M x N x K (default 768 x 1536 x 1536; ta = 1: A stored K x M, as a weight gradient's
 * dY^T), alternated, best of 6 in thread CPU time: the bf16/fp32 ceiling of this CPU's
 * kernels (docs/bf16.md). With -DPACKED, B is packed once beforehand as the step's
 * weights are; without, each call packs it. The paper's decoder, one chunk of 583 rows:
 * logits 583 28782 512 and dX 583 512 28782 (-DPACKED), dW 28782 512 583 1. Not built by
 * meson, not a test. Build:
 *   gcc -O2 [-DPACKED] -I core/nn -I core/base scripts/microbench_bf16.c \
 *       build/core/nn/liblm_nn.a build/core/base/liblm_base.a -lopenblas -lm -lpthread \
 *       -o /tmp/microbench_bf16
 * Run: /tmp/microbench_bf16 [M N K [ta]] */
#include "gemm_bf16.h"
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double tcpu(void){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec+t.tv_nsec*1e-9;}
extern void openblas_set_num_threads(int);
int main(int argc,char**argv){
  openblas_set_num_threads(1);
  int M=argc>3?atoi(argv[1]):768,N=argc>3?atoi(argv[2]):1536,K=argc>3?atoi(argv[3]):1536,ta=argc>4&&atoi(argv[4]);
  int lda=ta?M:K;
  float *A=aligned_alloc(64,4ul*M*K),*B=aligned_alloc(64,4ul*K*N),*C=aligned_alloc(64,4ul*M*N);
  for(long i=0;i<(long)M*K;i++)A[i]=(i%7)*0.1f;
  for(long i=0;i<(long)K*N;i++)B[i]=(i%5)*0.1f;
  void *scr=aligned_alloc(64,(gemm_bf16_scratch_bytes()+63)/64*64);
  GemmBf16Kernel k=gemm_bf16_select_kernel();
  if(k==GEMM_BF16_NONE){printf("no bf16 kernel on this CPU (LMLAB_TEST_BF16_EMULATE=1 runs the emulation)\n");return 1;}
  const GemmBf16PackedB *pp=NULL;
#ifdef PACKED
  GemmBf16PackedB pb; pb.data=aligned_alloc(64,(gemm_bf16_packed_b_elems(K,N)*2+63)/64*64); gemm_bf16_pack_b(&pb,0,K,N,B,N); pp=&pb;
#endif
  double bs=1e9,bb=1e9,fl=2.0*M*N*K;
  for(int r=0;r<6;r++){
    double t=tcpu(); cblas_sgemm(CblasRowMajor,ta?CblasTrans:CblasNoTrans,CblasNoTrans,M,N,K,1,A,lda,B,N,0,C,N); t=tcpu()-t; if(t<bs)bs=t;
    t=tcpu(); gemm_bf16(k,ta,0,M,N,K,1,A,lda,B,N,pp,0,C,N,scr); t=tcpu()-t; if(t<bb)bb=t;
  }
  printf("%d x %d x %d%s, kernel %s: sgemm %.1f GFLOP/s, bf16 %.1f GFLOP/s, ratio %.2fx (one thread, thread CPU time, best of 6, B %s)\n",M,N,K,ta?" (A transposed)":"",gemm_bf16_kernel_name(k),fl/bs*1e-9,fl/bb*1e-9,bs/bb,pp?"packed once":"packed in each call");
}
