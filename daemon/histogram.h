/* Log-linear latency histogram (HDR style): exact below 32 ns, then 32
 * linear sub-buckets per power of two, so any reported percentile is within
 * 1/32 (about 3 %) of the true value. Fixed size, no allocation, O(1)
 * record; percentiles walk the buckets. Values are nanoseconds. */
#ifndef KN_HISTOGRAM_H
#define KN_HISTOGRAM_H

#include <stdint.h>

#define KN_HIST_SUB_BITS 5
#define KN_HIST_SUB (1u << KN_HIST_SUB_BITS)
#define KN_HIST_MAX_BITS 40 /* values up to 2^40 ns (about 18 min) */
#define KN_HIST_BUCKETS (KN_HIST_SUB + (KN_HIST_MAX_BITS - KN_HIST_SUB_BITS) * KN_HIST_SUB)

struct kn_hist {
    uint64_t count;
    uint64_t min, max;
    uint64_t sum;      /* saturates */
    uint64_t overflow; /* values >= 2^40, counted in the last bucket */
    uint64_t bucket[KN_HIST_BUCKETS];
};

void kn_hist_init(struct kn_hist *h);
void kn_hist_record(struct kn_hist *h, uint64_t value_ns);

/* The value at quantile q (0..1): the highest value of the bucket holding
 * that rank, capped at the recorded maximum; 0 when empty. */
uint64_t kn_hist_quantile(const struct kn_hist *h, double q);

/* Bucket of a value and the highest value a bucket holds (for tests). */
unsigned kn_hist_bucket_of(uint64_t value_ns);
uint64_t kn_hist_bucket_high(unsigned bucket);

#endif
