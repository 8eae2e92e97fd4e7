/* Which ISAs this CPU can run. GCC's __builtin_cpu_supports reads CPUID and
 * also checks that the OS saves the wide registers (XGETBV), which is what
 * matters in a VM; "avx512bf16" is queried explicitly (vdpbf16ps). */
#include <string.h>
#include "internal/kernel.h"

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
#endif
  return 0;
}
