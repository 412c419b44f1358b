/* Bounds on a success probability from a count of successes in n
 * independent tries, sans-I/O and without state: the Wilson score
 * interval a sweep's report shows for each pass rate, shared here so
 * every report computes it the one way. */
#ifndef KN_BINOM_H
#define KN_BINOM_H

/* The normal quantile of a two-sided 95 % interval. */
#define KN_BINOM_Z95 1.959964

/* The Wilson score interval of pass successes in n trials at normal
 * quantile z (KN_BINOM_Z95): with p = pass/n,
 *   centre = (p + z²/2n) / (1 + z²/n)
 *   half   = z / (1 + z²/n) · sqrt(p(1-p)/n + z²/4n²)
 * [lo, hi] = [centre - half, centre + half], exactly 0 at pass = 0 and
 * exactly 1 at pass = n; [0, 1] for n = 0 (nothing known). */
void kn_binom_wilson(unsigned pass, unsigned n, double z, double *lo, double *hi);

#endif
