/* Order statistics every timing tool reports. */
#ifndef XATTN_COMMON_STATS_H
#define XATTN_COMMON_STATS_H

#ifdef __cplusplus
extern "C" {
#endif

/* The median of x[0..n-1] (mean of the middle two for even n); x is not
 * modified. NaN when n < 1 or when a copy cannot be allocated. */
double xc_median(const double *x, int n);

/* Sorts x[0..n-1] ascending in place. */
void xc_sort_doubles(double *x, int n);

#ifdef __cplusplus
}
#endif
#endif
