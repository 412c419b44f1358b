/* A sweep's cases: the cartesian product of its discrete parameters in
 * the order they appear (the last varies fastest), or a seeded sample of
 * it, with uniform draws per case; each case's id from its canonical
 * string. Sans-I/O. */
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The product of the discrete parameters' sizes, saturated at cap+1. */
static uint64_t product(const struct kn_sweep *sw, uint64_t cap)
{
    uint64_t n = 1;
    for (int p = 0; p < sw->nparams; p++) {
        if (sw->params[p].uniform)
            continue;
        uint64_t k = sw->params[p].nvalues;
        if (n > cap / k)
            return cap + 1;
        n *= k;
    }
    return n;
}

/* Case c gets the discrete values of product index idx. */
static void assign(const struct kn_sweep *sw, uint64_t idx, struct kn_sweep_case *c)
{
    for (int p = sw->nparams - 1; p >= 0; p--) {
        const struct kn_sweep_param *pa = &sw->params[p];
        if (pa->uniform)
            continue;
        c->v[p] = pa->values[idx % pa->nvalues];
        idx /= pa->nvalues;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The product indices of a sampled sweep, ascending. */
static int pick(struct kn_sweep *sw, uint64_t total, int uniform, struct kn_sweep_rng *r,
                uint64_t *idx, char *err, size_t errlen)
{
    size_t k = (size_t)sw->sample_cases;
    if ((uint64_t)k <= total)
        return kn_sweep_sample_distinct(r, total, k, idx) ? -1 : 0;
    if (!uniform) {
        snprintf(err, errlen,
                 "sample.cases %ld is more than the %llu cases of the parameters' product",
                 sw->sample_cases, (unsigned long long)total);
        return -1;
    }
    /* more draws than discrete combinations: the uniform draws differ */
    for (size_t i = 0; i < k; i++)
        idx[i] = kn_sweep_rng_below(r, total);
    qsort(idx, k, sizeof *idx, cmp_u64);
    return 0;
}

static int set_ids(struct kn_sweep *sw, char *err, size_t errlen)
{
    char canon[2048];
    uint64_t *h = malloc((sw->ncases ? sw->ncases : 1) * sizeof *h);
    if (!h) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < sw->ncases; i++) {
        size_t n = kn_sweep_canonical(sw, &sw->cases[i], canon, sizeof canon);
        uint64_t f = kn_sweep_fnv(KN_SWEEP_FNV_INIT, canon, n);
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)f);
        memcpy(sw->cases[i].id, hex, KN_SWEEP_ID_LEN);
        sw->cases[i].id[KN_SWEEP_ID_LEN] = '\0';
        h[i] = f >> 24; /* the id's 40 bits */
    }
    qsort(h, sw->ncases, sizeof *h, cmp_u64);
    for (size_t i = 1; i < sw->ncases; i++)
        if (h[i] == h[i - 1]) {
            snprintf(err, errlen,
                     "two cases have the same id %010llx (change a value or the "
                     "sample's seed)",
                     (unsigned long long)h[i]);
            free(h);
            return -1;
        }
    free(h);
    return 0;
}

int kn_sweep_expand(struct kn_sweep *sw, char *err, size_t errlen)
{
    err[0] = '\0';
    int uniform = 0;
    for (int p = 0; p < sw->nparams; p++)
        uniform |= sw->params[p].uniform;
    uint64_t total = product(sw, (uint64_t)1 << 53);
    if (total > (uint64_t)1 << 53) {
        snprintf(err, errlen, "the parameters' product is beyond 2^53 cases");
        return -1;
    }
    uint64_t n = sw->has_sample ? (uint64_t)sw->sample_cases : total;
    if (n > (uint64_t)sw->max_cases) {
        snprintf(err, errlen,
                 "%llu cases, more than max_cases %ld (sample them, or raise "
                 "max_cases)",
                 (unsigned long long)n, sw->max_cases);
        return -1;
    }
    free(sw->cases);
    sw->cases = calloc((size_t)n, sizeof *sw->cases);
    uint64_t *idx = malloc((size_t)n * sizeof *idx);
    if (!sw->cases || !idx) {
        free(idx);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    sw->ncases = (size_t)n;
    struct kn_sweep_rng r;
    kn_sweep_rng_seed(&r, sw->sample_seed);
    if (sw->has_sample) {
        if (pick(sw, total, uniform, &r, idx, err, errlen)) {
            free(idx);
            if (!err[0])
                snprintf(err, errlen, "out of memory");
            return -1;
        }
    } else {
        for (uint64_t i = 0; i < n; i++)
            idx[i] = i;
    }
    for (size_t i = 0; i < sw->ncases; i++) {
        assign(sw, idx[i], &sw->cases[i]);
        for (int p = 0; p < sw->nparams; p++)
            if (sw->params[p].uniform)
                sw->cases[i].v[p] =
                    kn_sweep_round9(kn_sweep_rng_uniform(&r, sw->params[p].lo, sw->params[p].hi));
    }
    free(idx);
    return set_ids(sw, err, errlen);
}
