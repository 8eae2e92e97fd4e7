/* The measurement cache: an append-only JSON-lines file, one record per
 * timed repetition or verification verdict, flushed and fsync'ed per record,
 * so that a killed run resumes where it stopped and measures nothing twice.
 * Its first line records the identity the measurements are valid for; a cache
 * of another identity is refused (never silently reused). */
#ifndef TUNE_STORE_H
#define TUNE_STORE_H

#include <stddef.h>

typedef struct tune_identity {
  char machine[128];
  char cpu_model[128];
  char topology[256];
  char compiler[128];
  char cflags[512];
  char kernel_digest[72];
  /* "warm", or "flushed": every timed call began with the problem's memory
     flushed from the caches (xattn-tune --flush-caches); a cache written
     before this field existed was warm */
  char timing[16];
} tune_identity;

typedef struct tune_store tune_store;

/* Opens or creates the cache at path. fresh: an existing file is moved aside
 * (path.TIME.old) and a new one started. On refusal (foreign identity,
 * unreadable) returns NULL and writes one line naming what differs into err. */
tune_store *tune_store_open(const char *path, const tune_identity *id, int fresh, char *err,
                            size_t errn);
void tune_store_close(tune_store *s);
/* durable = 0 skips the fsync per record (tests that replay thousands of
 * fake measurements; never the tool, whose runs must survive kill -9). */
void tune_store_set_durable(tune_store *s, int durable);

/* Repetitions recorded for (class, candidate, phase); *times stays valid until
 * the next add. Returns their number (0 if none). */
int tune_store_times(tune_store *s, const char *cls, const char *cand, const char *phase,
                     const double **times);
/* Appends repetition number `rep` (must be the next one). 0 on success. */
int tune_store_add_time(tune_store *s, const char *cls, const char *cand, const char *phase,
                        int rep, double seconds);

/* Verification verdict: returns 1 and sets *ok and *why if recorded, else 0. */
int tune_store_verdict(tune_store *s, const char *cls, const char *cand, int *ok,
                       const char **why);
int tune_store_add_verdict(tune_store *s, const char *cls, const char *cand, int ok,
                           const char *why);

/* What loading found: records reused, torn/garbled lines dropped. */
int tune_store_loaded(const tune_store *s);
int tune_store_dropped(const tune_store *s);
const char *tune_store_path(const tune_store *s);

#endif
