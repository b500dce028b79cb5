/* sysinfo.c — machine and process facts from /proc, OpenBLAS and the clocks (see
 * sysinfo.h). Not portable beyond Linux + OpenBLAS, on purpose: that is the target. */
#include "sysinfo.h"

#include "blas_select.h"
#include "git_rev.h"

#include <cblas.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <ctype.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int sysinfo_cores(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* The number after "key:" on its line of a /proc file (the kB figure), or -1. */
static long proc_field(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[256];
    size_t klen = strlen(key);
    long value = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            value = strtol(line + klen + 1, NULL, 10);
            break;
        }
    fclose(f);
    return value;
}

double sysinfo_mem_total(void)
{
    long kb = proc_field("/proc/meminfo", "MemTotal");
    return kb > 0 ? (double)kb * 1024.0 : 0.0;
}

double sysinfo_mem_available(void)
{
    long kb = proc_field("/proc/meminfo", "MemAvailable");
    return kb > 0 ? (double)kb * 1024.0 : 0.0;
}

double sysinfo_as_headroom(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) || rl.rlim_cur == RLIM_INFINITY)
        return -1;
    long vm_kb = proc_field("/proc/self/status", "VmSize");
    double left = (double)rl.rlim_cur - (vm_kb > 0 ? (double)vm_kb * 1024.0 : 0.0)
                - SYSINFO_AS_RESERVE;
    return left > 0 ? left : 0;
}

long sysinfo_rss_kb(void)
{
    return proc_field("/proc/self/status", "VmRSS");
}

long sysinfo_peak_rss_kb(void)
{
    return proc_field("/proc/self/status", "VmHWM");
}

const char *sysinfo_blas(char *buf, size_t cap)
{
    if (cap)
        snprintf(buf, cap, "%s, %d threads", openblas_get_config(), openblas_get_num_threads());
    return buf;
}

void sysinfo_set_threads(int n)
{
    if (blas_select_thread_cap() == 1)   /* ulimit -v: more threads would hang OpenBLAS */
        n = 1;
    openblas_set_num_threads(n > 0 ? n : sysinfo_cores());
}

/* A build flag of openblas_get_config(): upper case, digits and '_' only, no '='. */
static int is_build_flag(const char *word, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!(isupper((unsigned char)word[i]) || isdigit((unsigned char)word[i]) ||
              word[i] == '_'))
            return 0;
    return 1;
}

const char *sysinfo_blas_kernels(char *buf, size_t cap)
{
    if (!cap)
        return buf;
    buf[0] = 0;
    size_t len = 0;
    const char *s = openblas_get_config();
    while (s && *s && len < cap) {
        while (*s == ' ')
            s++;
        size_t w = strcspn(s, " ");
        if (w && !is_build_flag(s, w) && !memchr(s, '=', w))
            len += (size_t)snprintf(buf + len, cap - len, "%s%.*s", len ? " " : "", (int)w, s);
        s += w;
    }
    return buf;
}

void sysinfo_describe(char *buf, size_t cap)
{
    if (!cap)
        return;
    int len = snprintf(buf, cap, "%d cores, %.1f GiB,", sysinfo_cores(),
                       sysinfo_mem_total() / (1024.0 * 1024.0 * 1024.0));
    const char *s = openblas_get_config();
    while (s && *s && len >= 0 && (size_t)len < cap) {
        while (*s == ' ')
            s++;
        size_t w = strcspn(s, " ");
        if (w && !is_build_flag(s, w))
            len += snprintf(buf + len, cap - (size_t)len, " %.*s", (int)w, s);
        s += w;
    }
    char why[160];
    if (*blas_select_brief(why, sizeof why) && len >= 0 && (size_t)len < cap)
        len += snprintf(buf + len, cap - (size_t)len, " (%s)", why);
    int avx, amx;
    sysinfo_bf16(&avx, &amx);
    if (len >= 0 && (size_t)len < cap)
        snprintf(buf + len, cap - (size_t)len, ", bf16: avx512_bf16 %s, amx_bf16 %s",
                 avx ? "yes" : "no", amx ? "yes" : "no");
}

void sysinfo_bf16(int *avx512_bf16, int *amx_bf16)
{
    BlasCpu c;
    blas_select_read_cpu(&c);
    *avx512_bf16 = c.os_avx512 && c.avx512f && c.avx512bw && c.avx512vl && c.avx512bf16;
    *amx_bf16 = 0;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, cx, d;
    if (__get_cpuid_max(0, NULL) < 7 || !__get_cpuid(1, &a, &b, &cx, &d) || !((cx >> 27) & 1))
        return;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    __cpuid_count(7, 0, a, b, cx, d);
    *amx_bf16 = ((d >> 22) & 1) && ((d >> 24) & 1) && (lo & 0x60000u) == 0x60000u;
#endif
}

double sysinfo_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double sysinfo_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *sysinfo_git_rev(void)
{
    return LMLAB_GIT_REV;
}
