/* Token bucket in integer nanoseconds: used to rate-limit the ERROR answers
 * sent to one peer (KRP/1: 10 per second, burst 10). Pure: the caller
 * passes the time. */
#ifndef KN_TBUCKET_H
#define KN_TBUCKET_H

#include <stdbool.h>
#include <stdint.h>

struct kn_tbucket {
    uint64_t credit_ns; /* saved-up time; one token costs 1e9 / rate ns */
    uint64_t last_ns;   /* when credit was last brought up to date */
};

/* Starts full (a new peer may get `burst` answers at once). */
void kn_tbucket_init(struct kn_tbucket *b, uint32_t rate_per_s, uint32_t burst, uint64_t now_ns);

/* Takes one token if there is one. Time going backwards counts as no time. */
bool kn_tbucket_take(struct kn_tbucket *b, uint32_t rate_per_s, uint32_t burst, uint64_t now_ns);

#endif
