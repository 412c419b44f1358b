/* Token bucket: see tbucket.h. Credit is kept as elapsed time so refill
 * is exact at any rate without floating point. */
#include "tbucket.h"

static uint64_t cost_ns(uint32_t rate_per_s)
{
    return rate_per_s ? 1000000000ull / rate_per_s : UINT64_MAX;
}

void kn_tbucket_init(struct kn_tbucket *b, uint32_t rate_per_s, uint32_t burst, uint64_t now_ns)
{
    b->credit_ns = cost_ns(rate_per_s) * burst;
    b->last_ns = now_ns;
}

bool kn_tbucket_take(struct kn_tbucket *b, uint32_t rate_per_s, uint32_t burst, uint64_t now_ns)
{
    uint64_t cost = cost_ns(rate_per_s);
    uint64_t cap = cost * burst;
    if (now_ns > b->last_ns) {
        uint64_t add = now_ns - b->last_ns;
        b->credit_ns = (add >= cap || b->credit_ns >= cap - add) ? cap : b->credit_ns + add;
        b->last_ns = now_ns;
    }
    if (b->credit_ns < cost)
        return false;
    b->credit_ns -= cost;
    return true;
}
