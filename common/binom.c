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
