/* libFuzzer target: the workload-suite parser (bench/src/workload.c) on
 * arbitrary bytes. It must refuse or accept with one line, never crash or
 * leak (ASan/UBSan). Seeds: the suites in bench/suites. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xattn_bench/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0'; /* the parser takes a C string, as read_file hands it */
  char err[1024] = "";
  xb_suite *s = xb_suite_parse(text, "fuzz.json", err, sizeof err);
  if (s) {
    xb_suite_free(s);
  } else if (!err[0] || strchr(err, '\n')) {
    abort(); /* a refusal is exactly one non-empty line */
  }
  free(text);
  return 0;
}
