/* Seeded draws for sampled sweeps: splitmix64, so the same seed gives the
 * same cases on every machine and libc; distinct picks by Floyd's
 * algorithm, which needs memory for the picks only, not the product. */
#include "sweep.h"

#include <stdlib.h>

void kn_sweep_rng_seed(struct kn_sweep_rng *r, uint64_t seed)
{
    r->s = seed;
}

uint64_t kn_sweep_rng_next(struct kn_sweep_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t kn_sweep_rng_below(struct kn_sweep_rng *r, uint64_t n)
{
    /* rejection of the top partial block: no modulo bias */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = kn_sweep_rng_next(r);
    while (x >= limit);
    return x % n;
}

double kn_sweep_rng_uniform(struct kn_sweep_rng *r, double lo, double hi)
{
    /* 53 random bits: [0, 1] inclusive of both ends in steps of 2^-53 */
    double u = (double)(kn_sweep_rng_next(r) >> 11) / (double)((1ull << 53) - 1);
    return lo + (hi - lo) * u;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* open addressing set of the picks so far */
struct set {
    uint64_t *slot;
    size_t cap;
};

static int set_add(struct set *s, uint64_t v)
{
    size_t i = (size_t)((v * 0x9e3779b97f4a7c15ull) & (s->cap - 1));
    while (s->slot[i] != UINT64_MAX) {
        if (s->slot[i] == v)
            return 0;
        i = (i + 1) & (s->cap - 1);
    }
    s->slot[i] = v;
    return 1;
}

int kn_sweep_sample_distinct(struct kn_sweep_rng *r, uint64_t n, size_t k, uint64_t *out)
{
    struct set s = { NULL, 16 };
    while (s.cap < 2 * k + 2)
        s.cap *= 2;
    s.slot = malloc(s.cap * sizeof *s.slot);
    if (!s.slot)
        return -1;
    for (size_t i = 0; i < s.cap; i++)
        s.slot[i] = UINT64_MAX;
    /* Floyd: for j from n-k to n-1 pick t in [0, j]; t if new, else j */
    size_t m = 0;
    for (uint64_t j = n - k; j < n; j++) {
        uint64_t t = kn_sweep_rng_below(r, j + 1);
        if (!set_add(&s, t)) {
            set_add(&s, j);
            t = j;
        }
        out[m++] = t;
    }
    free(s.slot);
    qsort(out, k, sizeof *out, cmp_u64);
    return 0;
}
