/* libFuzzer target: the case-folder loader (cli/case_io.c, cli/npy.c). At
 * start-up a small valid case is saved as a template folder; each input's
 * first byte picks one of its files (case.json or a .npy) and the rest of the
 * input replaces that file's contents. The loader must accept or refuse with
 * one line, never crash or leak (ASan/UBSan). XATTN_FUZZ_SEEDS=DIR writes every
 * template file, prefixed with its selector byte, into DIR as seeds. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "case_io.h"

#define MAX_FILES 16
static char dir[256];
static char names[MAX_FILES][64];
static unsigned char *contents[MAX_FILES];
static size_t sizes[MAX_FILES];
static int nfiles;

static int write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  const int ok = fwrite(data, 1, n, f) == n;
  return fclose(f) == 0 && ok ? 0 : -1;
}

/* 2 requests (prefix 2 + extend 3, extend 2), GQA 2:1, D = DV = 8, f32, causal */
static void save_template(void) {
  static float q[5 * 2 * 8], kx[5 * 8], vx[5 * 8], kc[4 * 8], vc[4 * 8];
  for (int i = 0; i < 80; i++) q[i] = (float)((i * 37) % 17) / 17.0f - 0.5f;
  for (int i = 0; i < 40; i++) kx[i] = vx[i] = (float)((i * 11) % 13) / 13.0f - 0.5f;
  for (int i = 0; i < 32; i++) kc[i] = vc[i] = (float)((i * 7) % 5) / 5.0f - 0.5f;
  static int32_t prefix[2] = {2, 0}, extend[2] = {3, 2}, table[2 * 8] = {1, 3, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0};
  static int64_t req_index[2] = {0, 1};
  xattn_problem p;
  xattn_problem_init(&p);
  p.batch = 2;
  p.prefix_lens = prefix;
  p.extend_lens = extend;
  p.total_tokens = 5;
  p.heads_q = 2;
  p.heads_kv = 1;
  p.head_dim = p.head_dim_v = 8;
  p.scale = 0.35f;
  p.q = (xattn_tensor){q, 16, 8};
  p.k_ext = (xattn_tensor){kx, 8, 8};
  p.v_ext = (xattn_tensor){vx, 8, 8};
  p.k_cache = (xattn_tensor){kc, 8, 8};
  p.v_cache = (xattn_tensor){vc, 8, 8};
  p.cache_slots = 4;
  p.req_to_token = table;
  p.req_to_token_type = XATTN_I32;
  p.max_reqs = 2;
  p.max_ctx = 8;
  p.req_index = req_index;
  static float o[5 * 2 * 8];
  p.o = (xattn_tensor){o, 16, 8};
  char err[512];
  if (xattn_case_save(dir, &p, err, sizeof err) != XATTN_OK) {
    fprintf(stderr, "fuzz_case_folder: cannot save the template case: %s\n", err);
    abort();
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  snprintf(dir, sizeof dir, "/tmp/xattn-fuzz-case-%ld", (long)getpid());
  save_template();
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)) && nfiles < MAX_FILES) {
    if (e->d_name[0] == '.') continue;
    snprintf(names[nfiles], sizeof names[nfiles], "%s", e->d_name);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "rb");
    if (!f) continue;
    fseek(f, 0, SEEK_END);
    sizes[nfiles] = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    contents[nfiles] = malloc(sizes[nfiles] + 1);
    if (fread(contents[nfiles], 1, sizes[nfiles], f) != sizes[nfiles]) abort();
    fclose(f);
    nfiles++;
  }
  if (d) closedir(d);
  const char *seeds = getenv("XATTN_FUZZ_SEEDS");
  for (int i = 0; seeds && *seeds && i < nfiles; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/seed-%s", seeds, names[i]);
    unsigned char *b = malloc(sizes[i] + 1);
    b[0] = (unsigned char)i;
    memcpy(b + 1, contents[i], sizes[i]);
    write_file(path, b, sizes[i] + 1);
    free(b);
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || nfiles == 0) return 0;
  const int k = data[0] % nfiles;
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, names[k]);
  if (write_file(path, data + 1, size - 1) != 0) return 0;
  xattn_case c;
  char err[1024] = "";
  if (xattn_case_load(dir, &c, err, sizeof err) != XATTN_OK && (!err[0] || strchr(err, '\n'))) abort();
  xattn_case_free(&c);
  write_file(path, contents[k], sizes[k]); /* the template again for the next input */
  return 0;
}
