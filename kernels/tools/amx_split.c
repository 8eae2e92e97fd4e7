/* xattn-amx-split: the cost of each step of one AMX chunk x key-tile
 * iteration in isolation: pack K/V, Q K^T tile products, online softmax + P to
 * bf16, P V tile products (with the accumulator rescale), on one thread with
 * the data hot, best of N repetitions in TSC ticks. Best-of makes the split
 * usable on a loaded, shared machine where the in-kernel profile
 * (XATTN_AMX_PROFILE) is noisy. It includes the kernel's translation unit to
 * call its static hooks directly; built only with -DXATTN_AMX_PROFILE=ON.
 *
 *   xattn-amx-split [KEYS [D [REPS]]]     (defaults 512 128 1000; RC rows = 64) */
#define xattn_kernels_amx xattn_kernels_amx_split_copy /* the library has the real one */
#include "isa/isa_amx.c"
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

static void keep_min(unsigned long long *best, unsigned long long t) {
  if (t < *best) *best = t;
}

/* ticks per tdpbf16ps with nothing else in flight (4 independent accumulators, like the bench's AMX peak probe) */
static double tdp_ticks(int reps) {
  unsigned long long best = ~0ull;
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_zero(4);
  _tile_zero(5);
  _tile_zero(6);
  _tile_zero(7);
  for (int it = 0; it < reps; it++) {
    const unsigned long long t0 = __rdtsc();
    for (int i = 0; i < 128; i++) {
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
    keep_min(&best, __rdtsc() - t0);
  }
  return best / 512.0;
}

int main(int argc, char **argv) {
  const int ns = argc > 1 ? atoi(argv[1]) : 512, d = argc > 2 ? atoi(argv[2]) : 128;
  const int reps = argc > 3 ? atoi(argv[3]) : 1000;
  if (ns < 32 || ns % 32 || ns > 4096 || d < 32 || d % 32 || d > 512 || reps < 1) {
    fprintf(stderr, "xattn-amx-split: KEYS must be a multiple of 32 in [32, 4096], D a multiple of 32 in [32, 512]\n");
    return 2;
  }
  if (!xattn_isa_runnable("amx")) {
    fprintf(stderr, "xattn-amx-split: this CPU (or OS) does not run AMX\n");
    return 1;
  }
  /* bf16 data around 1 (exponent 0x3f..) so the scores are moderate */
  uint16_t *kraw = malloc(sizeof(uint16_t) * ns * d), *vraw = malloc(sizeof(uint16_t) * ns * d);
  uint16_t *qraw = malloc(sizeof(uint16_t) * RC * d);
  srand(1);
  for (int i = 0; i < ns * d; i++) {
    kraw[i] = (uint16_t)(0x3c00 + (rand() & 0xff));
    vraw[i] = (uint16_t)(0x3c00 + (rand() & 0xff));
  }
  for (int i = 0; i < RC * d; i++) qraw[i] = (uint16_t)(0x3c00 + (rand() & 0xff));
  const char **kp = malloc(sizeof(char *) * ns), **vp = malloc(sizeof(char *) * ns), *qp[RC];
  for (int i = 0; i < ns; i++) {
    kp[i] = (const char *)(kraw + (size_t)i * d);
    vp[i] = (const char *)(vraw + (size_t)i * d);
  }
  for (int i = 0; i < RC; i++) qp[i] = (const char *)(qraw + (size_t)i * d);
  const size_t a = 64;
  void *kpk = aligned_alloc(a, ALIGN_UP(hook_kp_bytes(ns, d), a)), *vpk = aligned_alloc(a, ALIGN_UP(hook_vp_bytes(ns, d), a));
  void *qt = aligned_alloc(a, ALIGN_UP(hook_qt_bytes(d, RC), a)), *pp = aligned_alloc(a, ALIGN_UP(hook_pp_bytes(ns), a));
  float *st = aligned_alloc(a, sizeof(float) * (size_t)(ns + KR) * RC), *acc = aligned_alloc(a, sizeof(float) * RC * d);
  float *tmp = malloc(sizeof(float) * ((size_t)RC * (d + 2) + d));
  float m[RC], l[RC], alpha[RC];
  int32_t lo[RC], hi[RC];
  for (int r = 0; r < RC; r++) lo[r] = 0, hi[r] = ns;
  memset(acc, 0, sizeof(float) * RC * d);
  const float scale2 = 1.0f / sqrtf((float)d) * XATTN_LOG2E;
  hook_pack_q(qt, qp, RC, d, XATTN_BF16, scale2, tmp);
  unsigned long long b_pack = ~0ull, b_qk = ~0ull, b_first = ~0ull, b_next = ~0ull, b_pv = ~0ull;
  amx_begin();
  for (int it = 0; it < 2 * reps; it++) {
    const int first = it & 1; /* odd: a row's first tile (no running max); even: a later tile (running max kept) */
    for (int r = 0; r < RC; r++) m[r] = first ? -INFINITY : 4.0f, l[r] = 1.0f;
    const unsigned long long t0 = __rdtsc();
    hook_pack_kv(kpk, vpk, kp, vp, ns, d, d, d, XATTN_BF16);
    const unsigned long long t1 = __rdtsc();
    hook_qk(kpk, ns, d, qt, RC / 16, st, scale2);
    const unsigned long long t2 = __rdtsc();
    const xattn_softmax_args sa = {st, ns, RC / 16, RC, 1, 0, lo, hi, NULL, 0.0f, scale2, m, l, alpha, pp};
    hook_softmax(&sa);
    const unsigned long long t3 = __rdtsc();
    hook_pv(st, ns, vpk, d, RC, acc, alpha, pp, 0, &sa);
    const unsigned long long t4 = __rdtsc();
    keep_min(&b_pack, t1 - t0);
    keep_min(&b_qk, t2 - t1);
    keep_min(first ? &b_first : &b_next, t3 - t2);
    keep_min(&b_pv, t4 - t3);
  }
  const double peak_tdp = tdp_ticks(reps);
  _tile_release();
  const double tdp = (RC / 16) * (ns / 16) * (d / 32), vecs = RC * ns / 16.0;
  /* a key tile is packed once for every chunk of the item: 4 chunks of RC
     rows at the reference shape's default (BLOCK_M 64 x 4 heads of a group) */
  const double pack = b_pack / 4.0, tot = pack + b_qk + b_next + b_pv;
  printf("one chunk (%d rows) x one key tile (%d keys), D = DV = %d, 1 thread, best of %d, TSC ticks\n", RC, ns, d, reps);
  printf("  %-44s %9.0f  %5.1f %%  %6.1f ticks/key\n", "pack K, V (per chunk: / 4 chunks per tile)", pack,
         100 * pack / tot, (double)b_pack / ns);
  printf("  %-44s %9llu  %5.1f %%  %6.1f ticks/tdpbf16ps\n", "QK tile products + score stores", b_qk,
         100 * b_qk / tot, b_qk / tdp);
  printf("  %-44s %9llu  %5.1f %%  %6.2f ticks/16 scores\n", "softmax + P to bf16, running max kept", b_next,
         100 * b_next / tot, b_next / vecs);
  printf("  %-44s %9llu  %7s  %6.2f ticks/16 scores\n", "  (a row's first tile: no running max yet)", b_first, "",
         b_first / vecs);
  printf("  %-44s %9llu  %5.1f %%  %6.1f ticks/tdpbf16ps\n", "PV tile products + accumulator tiles", b_pv,
         100 * b_pv / tot, b_pv / tdp);
  printf("  %-44s %9.0f  = %.1f %% of the AMX peak (tdpbf16ps alone: %.1f ticks each)\n", "total", tot,
         100 * 2 * tdp * peak_tdp / tot, peak_tdp);
  return 0;
}
