/* Bounds on a success probability from a count of successes in n
 * independent tries, sans-I/O and without state: the Wilson score
 * interval a sweep's report shows for each pass rate, and the exact
 * one-sided (Clopper-Pearson) lower bound a trial's score states,
 * shared here so every report computes them the one way. */
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

/* The exact one-sided lower confidence bound on the success probability
 * after pass successes in n tries, at confidence conf (0.8 for 80 %):
 * the p at which pass or more successes have probability 1 - conf,
 * P(X >= pass | n, p) = 1 - conf. 0 at pass = 0, (1 - conf)^(1/n) at
 * pass = n (10 of 10 at 80 %: 0.851, the "80 % reliability at 80 %
 * confidence" of the response-robot test methods); 0 for n = 0 or
 * pass > n. Bisection to 1e-12 on the binomial tail. */
double kn_binom_lower(unsigned pass, unsigned n, double conf);

#endif
