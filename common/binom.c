/* Bounds on a success probability (binom.h). */
#include "binom.h"

#include <math.h>

void kn_binom_wilson(unsigned pass, unsigned n, double z, double *lo, double *hi)
{
    if (n == 0 || pass > n) {
        *lo = 0;
        *hi = 1;
        return;
    }
    double nn = n, p = pass / nn, z2 = z * z;
    double d = 1 + z2 / nn;
    double centre = (p + z2 / (2 * nn)) / d;
    double half = z / d * sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));
    /* the bounds touch 0 and 1 exactly when every case failed or passed;
     * rounding must not leave 1e-17 there */
    *lo = pass == 0 ? 0 : fmax(0, centre - half);
    *hi = pass == n ? 1 : fmin(1, centre + half);
}

/* P(X >= k) for X ~ Binomial(n, p), summed in logs so large n neither
 * overflows the coefficients nor underflows the powers. */
static double tail(unsigned k, unsigned n, double p)
{
    if (p <= 0)
        return k == 0 ? 1 : 0;
    if (p >= 1)
        return 1;
    double lp = log(p), lq = log1p(-p), lfn = lgamma(n + 1.0), sum = 0;
    for (unsigned i = k; i <= n; i++)
        sum += exp(lfn - lgamma(i + 1.0) - lgamma(n - i + 1.0) + i * lp + (n - i) * lq);
    return sum;
}

double kn_binom_lower(unsigned pass, unsigned n, double conf)
{
    if (n == 0 || pass == 0 || pass > n || !(conf > 0 && conf < 1))
        return 0;
    double alpha = 1 - conf;
    /* the closed form where there is one: exact, and no bisection */
    if (pass == n)
        return pow(alpha, 1.0 / n);
    /* the tail grows with p: the bound is where it reaches alpha */
    double lo = 0, hi = 1;
    while (hi - lo > 1e-12) {
        double mid = 0.5 * (lo + hi);
        if (tail(pass, n, mid) < alpha)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}
