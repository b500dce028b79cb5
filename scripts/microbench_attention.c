/* microbench_attention.c — the fused attention core alone (core/nn/attention_flash.c): one
 * thread runs attention_flash_forward and _backward over every (batch, head) of one layer,
 * best of 7 in thread CPU time, and prints ms and GFLOP/s (causal model FLOPs: QK^T and
 * PV over the lower triangle, twice that for the backward) and a checksum of the outputs
 * (equal checksums: the same results). Not built by meson and not a test (its figures
 * depend on the machine); docs/speed.md quotes it. Build after `ninja -C build`:
 *   gcc -O2 -I core/nn -I core/base scripts/microbench_attention.c build/core/nn/liblm_nn.a \
 *       build/core/base/liblm_base.a -lopenblas -lm -lpthread -o /tmp/microbench_attention
 *   /tmp/microbench_attention B T d H     (wide-msa: 16 128 192 6; small-msa: 12 64 128 4)
 * Two builds of the library side by side (old and new in one command) compare a change. */
#include "attention_flash.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double tcpu(void){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec+t.tv_nsec*1e-9;}
extern void openblas_set_num_threads(int);
int main(int argc,char**argv){
  openblas_set_num_threads(1);
  int B=atoi(argv[1]),T=atoi(argv[2]),d=atoi(argv[3]),H=atoi(argv[4]),hd=d/H;
  size_t M=(size_t)B*T;
  float *qkv=malloc(4*M*3*d),*O=malloc(4*M*d),*dO=malloc(4*M*d),*dqkv=calloc(M*3*d,4),*lse=malloc(4*B*H*T);
  float *w=malloc(4*(attention_flash_forward_floats(T,hd)+attention_flash_backward_floats(T)+64));
  srand(1); for(size_t i=0;i<M*3*d;i++)qkv[i]=rand()/(float)RAND_MAX-0.5f; for(size_t i=0;i<M*d;i++)dO[i]=rand()/(float)RAND_MAX-0.5f;
  double bf=1e9,bb=1e9; double sum=0;
  for(int r=0;r<7;r++){
    double t=tcpu();
    for(int b=0;b<B;b++)for(int h=0;h<H;h++){FlashHead fh={T,hd,1.0f/sqrtf(hd),0,0,0};const float*q=qkv+(size_t)b*T*3*d+h*hd;
      attention_flash_forward(&fh,O+(size_t)b*T*d+h*hd,d,lse+(b*H+h)*T,w,q,q+d,q+2*d,3*d);}
    t=tcpu()-t; if(t<bf)bf=t;
    t=tcpu();
    for(int b=0;b<B;b++)for(int h=0;h<H;h++){FlashHead fh={T,hd,1.0f/sqrtf(hd),0,0,0};size_t off=(size_t)b*T*3*d+h*hd,oo=(size_t)b*T*d+h*hd;
      attention_flash_backward(&fh,dqkv+off,dqkv+off+d,dqkv+off+2*d,3*d,w,dO+oo,O+oo,d,lse+(b*H+h)*T,qkv+off,qkv+off+d,qkv+off+2*d,3*d);}
    t=tcpu()-t; if(t<bb)bb=t;
  }
  for(size_t i=0;i<M*d;i++)sum+=O[i];
  for(size_t i=0;i<M*3*d;i++)sum+=dqkv[i]*1e-3;
  double fl=2.0*2*B*H*(double)T*T/2*hd; /* causal QK^T + PV */
  printf("B=%d T=%d d=%d H=%d: forward %.2f ms (%.1f GFLOP/s), backward %.2f ms (%.1f GFLOP/s) [causal model FLOPs, one thread, best of 7] chk %.6g\n",B,T,d,H,bf*1e3,fl/bf*1e-9,bb*1e3,2*fl/bb*1e-9,sum);
}
