/* Which ISAs this CPU can run. GCC's __builtin_cpu_supports reads CPUID and
 * also checks that the OS saves the wide registers (XGETBV), which is what
 * matters in a VM; "avx512bf16" is queried explicitly (vdpbf16ps). */
#define _GNU_SOURCE /* syscall() */
#include <string.h>
#include "internal/kernel.h"
#if defined(__x86_64__)
#include <cpuid.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

/* AMX needs the CPU bits (AMX-TILE, AMX-BF16), the OS saving tile state
 * (XCR0 bits 17-18) and, on Linux, this process's permission to use it,
 * which is asked for once (arch_prctl ARCH_REQ_XCOMP_PERM, XTILEDATA). */
static int amx_usable(void) {
  static atomic_int state = -1; /* threads racing here all compute the same answer */
  const int known = atomic_load(&state);
  if (known >= 0) return known;
  unsigned a, b, c, d;
  int ok = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (1u << 22)) && (d & (1u << 24));
  if (ok) {
    __get_cpuid(1, &a, &b, &c, &d);
    ok = (c & (1u << 27)) != 0; /* OSXSAVE */
  }
  if (ok) {
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    ok = (lo & (3u << 17)) == (3u << 17);
  }
#ifdef SYS_arch_prctl
  if (ok) ok = syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) == 0;
#else
  ok = 0;
#endif
  atomic_store(&state, ok);
  return ok;
}
#endif

int xattn_cpu_can_run(const char *isa) {
  if (!isa) return 0;
  if (strcmp(isa, "scalar") == 0) return 1;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const int avx2 = !!__builtin_cpu_supports("avx2") && !!__builtin_cpu_supports("fma") &&
                   !!__builtin_cpu_supports("f16c");
  const int avx512 = avx2 && !!__builtin_cpu_supports("avx512f") &&
                     !!__builtin_cpu_supports("avx512bw") && !!__builtin_cpu_supports("avx512vl");
  if (strcmp(isa, "avx2") == 0) return avx2;
  if (strcmp(isa, "avx512") == 0) return avx512;
  if (strcmp(isa, "avx512bf16") == 0) return avx512 && !!__builtin_cpu_supports("avx512bf16");
#if defined(__x86_64__)
  if (strcmp(isa, "amx") == 0) return avx512 && !!__builtin_cpu_supports("avx512bf16") && amx_usable();
#endif
#endif
  return 0;
}
