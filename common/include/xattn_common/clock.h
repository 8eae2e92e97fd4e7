/* The one clock timings use: monotonic, in seconds. */
#ifndef XATTN_COMMON_CLOCK_H
#define XATTN_COMMON_CLOCK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds on CLOCK_MONOTONIC (arbitrary origin): only differences mean anything. */
double xc_now(void);

#ifdef __cplusplus
}
#endif
#endif
