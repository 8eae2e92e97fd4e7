/* Which CPU features this machine offers, by the names the ISA registry
 * (src/isa/isas.def) uses. GCC's __builtin_cpu_supports reads CPUID and also
 * checks that the OS saves the wide registers (XGETBV), which is what matters
 * in a VM; "amx" also needs the OS's tile state and this process's permission. */
#define _GNU_SOURCE /* syscall() */
#include <string.h>
#include <stdatomic.h>
#include "internal/kernel.h"
#if defined(__x86_64__)
#include <cpuid.h>
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

/* One CPU feature of src/isa/isas.def's vocabulary. */
static int cpu_has(const char *f, size_t n) {
#define IS(name) (n == sizeof(name) - 1 && strncmp(f, name, n) == 0)
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (IS("avx2")) return !!__builtin_cpu_supports("avx2");
  if (IS("fma")) return !!__builtin_cpu_supports("fma");
  if (IS("f16c")) { /* CPUID.1:ECX bit 29 (clang 14's __builtin_cpu_supports does not know "f16c"); asked
                       once: CPUID traps to the hypervisor in a VM, and every call checks its ISA's features
                       (~1 % of a 1 ms decode call on the Zen 4 VM) */
    static atomic_int f16c = -1; /* threads racing here all compute the same answer */
    int known = atomic_load(&f16c);
    if (known < 0) {
      unsigned a, b, c, d;
      known = __get_cpuid(1, &a, &b, &c, &d) && (c >> 29 & 1u);
      atomic_store(&f16c, known);
    }
    return known;
  }
  if (IS("avx512f")) return !!__builtin_cpu_supports("avx512f");
  if (IS("avx512bw")) return !!__builtin_cpu_supports("avx512bw");
  if (IS("avx512vl")) return !!__builtin_cpu_supports("avx512vl");
  if (IS("avx512dq")) return !!__builtin_cpu_supports("avx512dq");
  if (IS("avx512bf16")) return !!__builtin_cpu_supports("avx512bf16");
  if (IS("avx512vbmi")) return !!__builtin_cpu_supports("avx512vbmi");
#if defined(__x86_64__)
  if (IS("amx")) return amx_usable();
#endif
#endif
#undef IS
  return 0;
}

int xattn_cpu_has_features(const char *features) {
  if (!features) return 0;
  for (const char *f = features; *f;) {
    while (*f == ' ') f++;
    size_t n = strcspn(f, " ");
    if (n > 0 && !cpu_has(f, n)) return 0;
    f += n;
  }
  return 1;
}
