/* A sweep's statistics (see stats.h): per-value tables (with Wilson
 * intervals from common/binom.h), boundaries and failure-mode counts, on plain arrays. */
#include "stats.h"

#include <math.h>
#include <string.h>

/* A rate read from a file (0.95) and one computed (19/20) are the same
 * double, but a sum of doubles need not be: compare with a margin far
 * below any rate a count can give. */
#define RATE_EPS 1e-12

static const char *const mode_names[KN_SWEEPSTATS_NMODES] = {
    [KN_SWEEPSTATS_MODE_NONE] = "none",           [KN_SWEEPSTATS_MODE_TIP_OVER] = "tip-over",
    [KN_SWEEPSTATS_MODE_STALL] = "stall",         [KN_SWEEPSTATS_MODE_TIME_OUT] = "time-out",
    [KN_SWEEPSTATS_MODE_LIMIT] = "limit",         [KN_SWEEPSTATS_MODE_CRASH] = "crash",
    [KN_SWEEPSTATS_MODE_CRITERION] = "criterion", [KN_SWEEPSTATS_MODE_ERROR] = "error",
};

const char *kn_sweepstats_mode_name(enum kn_sweepstats_mode m)
{
    return (unsigned)m < KN_SWEEPSTATS_NMODES ? mode_names[m] : "?";
}

int kn_sweepstats_mode_parse(const char *name)
{
    for (int m = 0; name && m < KN_SWEEPSTATS_NMODES; m++)
        if (strcmp(name, mode_names[m]) == 0)
            return m;
    return -1;
}

void kn_sweepstats_table(const struct kn_sweepstats_case *cases, const size_t *vidx, size_t ncases,
                         struct kn_sweepstats_cell *cells, size_t nvalues)
{
    memset(cells, 0, nvalues * sizeof *cells);
    for (size_t i = 0; i < ncases; i++) {
        if (vidx[i] >= nvalues)
            continue;
        struct kn_sweepstats_cell *c = &cells[vidx[i]];
        switch (cases[i].status) {
        case KN_SWEEPSTATS_PASS:
            c->n++;
            c->pass++;
            break;
        case KN_SWEEPSTATS_FAIL:
            c->n++;
            if ((unsigned)cases[i].mode < KN_SWEEPSTATS_NMODES)
                c->modes[cases[i].mode]++;
            break;
        case KN_SWEEPSTATS_ERROR:
            c->errors++;
            c->modes[KN_SWEEPSTATS_MODE_ERROR]++;
            break;
        case KN_SWEEPSTATS_NOT_RUN: break;
        }
    }
    for (size_t v = 0; v < nvalues; v++) {
        struct kn_sweepstats_cell *c = &cells[v];
        c->rate = c->n ? (double)c->pass / c->n : NAN;
        kn_binom_wilson(c->pass, c->n, KN_BINOM_Z95, &c->lo, &c->hi);
    }
}

void kn_sweepstats_modes(const struct kn_sweepstats_case *cases, size_t ncases,
                         unsigned modes[KN_SWEEPSTATS_NMODES])
{
    memset(modes, 0, KN_SWEEPSTATS_NMODES * sizeof *modes);
    for (size_t i = 0; i < ncases; i++) {
        if (cases[i].status == KN_SWEEPSTATS_ERROR)
            modes[KN_SWEEPSTATS_MODE_ERROR]++;
        else if (cases[i].status == KN_SWEEPSTATS_FAIL &&
                 (unsigned)cases[i].mode < KN_SWEEPSTATS_NMODES)
            modes[cases[i].mode]++;
    }
}

void kn_sweepstats_boundary(const struct kn_sweepstats_cell *cells, size_t n, bool harder_lower,
                            double target, struct kn_sweepstats_boundary *b)
{
    b->point = b->confident = b->lo = b->hi = -1;
    long last = -1;       /* the hardest judged value */
    bool point_on = true; /* no value up to here missed the target */
    bool conf_on = true;  /* no value up to here had lo < target */
    for (size_t k = 0; k < n; k++) {
        long v = harder_lower ? (long)(n - 1 - k) : (long)k;
        const struct kn_sweepstats_cell *c = &cells[v];
        if (c->n == 0)
            continue;
        last = v;
        if (point_on && c->rate >= target - RATE_EPS)
            b->point = v;
        else
            point_on = false;
        if (conf_on && c->lo >= target - RATE_EPS)
            b->confident = v;
        else
            conf_on = false;
        if (b->lo < 0 && c->lo < target - RATE_EPS)
            b->lo = v;
        /* the interval's hard end: the first value past point (from the
         * easiest when there is no point) whose hi misses the target */
        if (!point_on && b->hi < 0 && c->hi < target - RATE_EPS)
            b->hi = v;
    }
    if (last < 0)
        return;
    if (b->lo < 0)
        b->lo = last;
    if (b->hi < 0)
        b->hi = last;
}
