/* Log-linear histogram: see histogram.h. */
#include "histogram.h"

#include <string.h>

void kn_hist_init(struct kn_hist *h)
{
    memset(h, 0, sizeof *h);
}

unsigned kn_hist_bucket_of(uint64_t v)
{
    if (v < KN_HIST_SUB)
        return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v); /* >= SUB_BITS */
    if (e >= KN_HIST_MAX_BITS)
        return KN_HIST_BUCKETS - 1;
    unsigned shift = e - KN_HIST_SUB_BITS;
    unsigned mant = (unsigned)(v >> shift) - KN_HIST_SUB; /* 0..SUB-1 */
    return KN_HIST_SUB + shift * KN_HIST_SUB + mant;
}

uint64_t kn_hist_bucket_high(unsigned b)
{
    if (b < KN_HIST_SUB)
        return b;
    unsigned shift = (b - KN_HIST_SUB) / KN_HIST_SUB;
    uint64_t mant = (b - KN_HIST_SUB) % KN_HIST_SUB;
    uint64_t low = (KN_HIST_SUB + mant) << shift;
    return low + (1ull << shift) - 1;
}

void kn_hist_record(struct kn_hist *h, uint64_t v)
{
    if (h->count == 0 || v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
    h->count++;
    h->sum = (h->sum > UINT64_MAX - v) ? UINT64_MAX : h->sum + v;
    if (v >> KN_HIST_MAX_BITS)
        h->overflow++;
    h->bucket[kn_hist_bucket_of(v)]++;
}

uint64_t kn_hist_quantile(const struct kn_hist *h, double q)
{
    if (h->count == 0)
        return 0;
    if (q < 0)
        q = 0;
    if (q > 1)
        q = 1;
    /* rank of the wanted value, 1-based: ceil(q * count), at least 1 */
    double r = q * (double)h->count;
    uint64_t rank = (uint64_t)r;
    if ((double)rank < r)
        rank++;
    if (rank == 0)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned b = 0; b < KN_HIST_BUCKETS; b++) {
        seen += h->bucket[b];
        if (seen >= rank) {
            if (b == KN_HIST_BUCKETS - 1)
                return h->max; /* the open-ended top bucket */
            uint64_t hi = kn_hist_bucket_high(b);
            if (hi > h->max)
                hi = h->max;
            if (hi < h->min)
                hi = h->min;
            return hi;
        }
    }
    return h->max;
}
