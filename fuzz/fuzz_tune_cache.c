/* libFuzzer target: the tune cache loader (tune/src/tune_store.c). Each input
 * is written as a cache file and opened; it must be loaded or refused with one
 * line, never crash, and a refused cache must be left byte for byte as it was
 * (repair may only cut a torn last line). XATTN_FUZZ_SEEDS=DIR writes seed
 * caches into DIR at start-up. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tune_store.h"

static char path[256];

static tune_identity fuzz_id(void) {
  tune_identity id;
  memset(&id, 0, sizeof id);
  snprintf(id.machine, sizeof id.machine, "fuzz-machine");
  snprintf(id.cpu_model, sizeof id.cpu_model, "Fuzz CPU");
  snprintf(id.topology, sizeof id.topology, "1 package");
  snprintf(id.compiler, sizeof id.compiler, "clang");
  snprintf(id.cflags, sizeof id.cflags, "-O1");
  snprintf(id.kernel_digest, sizeof id.kernel_digest, "0123");
  return id;
}

static void write_seed(const char *dir) {
  char p[512], err[512];
  snprintf(p, sizeof p, "%s/seed-cache.jsonl", dir);
  tune_identity id = fuzz_id();
  tune_store *s = tune_store_open(p, &id, 1, err, sizeof err);
  if (!s) return;
  tune_store_set_durable(s, 0);
  for (int i = 0; i < 4; i++) tune_store_add_time(s, "avx512/f32/d128", "64x64/gqa/dynamic/t2/compact", "search", i, 0.01 * (i + 1));
  tune_store_add_verdict(s, "avx512/f32/d128", "64x64/gqa/dynamic/t2/compact", 1, "max err 0.1");
  tune_store_close(s);
  snprintf(p, sizeof p, "%s/seed-cache.jsonl.lock", dir);
  unlink(p);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  snprintf(path, sizeof path, "/tmp/xattn-fuzz-tune-%ld.jsonl", (long)getpid());
  const char *seeds = getenv("XATTN_FUZZ_SEEDS");
  if (seeds && *seeds) write_seed(seeds);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  fwrite(data, 1, size, f);
  fclose(f);
  char err[1024] = "";
  tune_identity id = fuzz_id();
  tune_store *s = tune_store_open(path, &id, 0, err, sizeof err);
  if (s) {
    tune_store_times(s, "avx512/f32/d128", "64x64/gqa/dynamic/t2/compact", "search", NULL);
    tune_store_close(s);
  } else {
    if (!err[0] || strchr(err, '\n')) abort(); /* one line */
    struct stat st; /* refused: untouched */
    if (stat(path, &st) != 0 || (size_t)st.st_size != size) abort();
  }
  return 0;
}
