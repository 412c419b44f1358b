/* Replay filter of the shared key (krp_replay.h). The accepted datagrams
 * are a run sorted by (counter, tag) in an array twice the filter's size:
 * counters track the senders' clocks, so nearly every new one goes at the
 * end and the oldest leave at the start, both in O(1), and the run moves
 * back to the array's start once per cap datagrams. A sender behind the
 * others costs a memmove of the entries above its counter (at most cap:
 * 256 KiB, some microseconds), and only signed datagrams that verified get
 * this far. Lookups are binary searches. */
#include "krp_replay.h"

#include <stdlib.h>
#include <string.h>

struct entry {
    uint64_t counter;
    uint64_t tag;
};

struct kn_krpreplay {
    size_t cap, start, n; /* the run: e[start + i], i < n, ascending; e has 2 cap */
    uint64_t floor, evicted;
    struct entry e[];
};

struct kn_krpreplay *kn_krpreplay_new(size_t cap, uint64_t floor)
{
    if (cap == 0 || cap > (SIZE_MAX - sizeof(struct kn_krpreplay)) / sizeof(struct entry) / 2)
        return NULL;
    struct kn_krpreplay *f = malloc(sizeof *f + 2 * cap * sizeof f->e[0]);
    if (!f)
        return NULL;
    f->cap = cap;
    f->start = f->n = 0;
    f->floor = floor;
    f->evicted = 0;
    return f;
}

void kn_krpreplay_free(struct kn_krpreplay *f)
{
    free(f);
}

static struct entry *at(struct kn_krpreplay *f, size_t i)
{
    return &f->e[f->start + i];
}

static int cmp(const struct entry *a, uint64_t counter, uint64_t tag)
{
    if (a->counter != counter)
        return a->counter < counter ? -1 : 1;
    if (a->tag != tag)
        return a->tag < tag ? -1 : 1;
    return 0;
}

/* The first index whose entry is not below (counter, tag). */
static size_t lower_bound(struct kn_krpreplay *f, uint64_t counter, uint64_t tag)
{
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp(at(f, mid), counter, tag) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The smallest entry leaves; nothing at or below it may pass any more,
 * or it could be taken a second time now that it is forgotten. */
static void drop_first(struct kn_krpreplay *f)
{
    uint64_t c = at(f, 0)->counter;
    if (c > f->floor)
        f->floor = c;
    f->start++;
    f->n--;
}

enum kn_krpreplay_verdict kn_krpreplay_check(struct kn_krpreplay *f, uint64_t counter,
                                             const uint8_t *tag_bytes, uint64_t now_us)
{
    uint64_t oldest = now_us > KN_KRPREPLAY_PAST_US ? now_us - KN_KRPREPLAY_PAST_US : 0;
    /* Expired entries leave through the floor: were the receiver's clock
     * to step back, what they held would still be refused. */
    while (f->n > 0 && at(f, 0)->counter <= oldest)
        drop_first(f);
    if (now_us <= UINT64_MAX - KN_KRPREPLAY_FUTURE_US && counter > now_us + KN_KRPREPLAY_FUTURE_US)
        return KN_KRPREPLAY_TOO_NEW;
    if (counter <= oldest)
        return KN_KRPREPLAY_TOO_OLD;
    if (counter <= f->floor)
        return KN_KRPREPLAY_FLOOR;
    uint64_t tag = 0;
    for (int i = 0; i < KN_KRPREPLAY_TAG_LEN; i++)
        tag = tag << 8 | tag_bytes[i];
    size_t pos = lower_bound(f, counter, tag);
    if (pos < f->n && cmp(at(f, pos), counter, tag) == 0)
        return KN_KRPREPLAY_REPLAYED;
    if (f->n == f->cap) {
        drop_first(f);
        f->evicted++;
        if (counter <= f->floor)
            return KN_KRPREPLAY_FLOOR; /* the new one is the smallest: it cannot be kept */
        pos--;
    }
    if (f->start + f->n == 2 * f->cap) { /* no room after the run: back to the start */
        memmove(f->e, at(f, 0), f->n * sizeof f->e[0]);
        f->start = 0;
    }
    memmove(at(f, pos + 1), at(f, pos), (f->n - pos) * sizeof f->e[0]);
    *at(f, pos) = (struct entry){ counter, tag };
    f->n++;
    return KN_KRPREPLAY_OK;
}

const char *kn_krpreplay_verdict_name(enum kn_krpreplay_verdict v)
{
    switch (v) {
    case KN_KRPREPLAY_OK: return "ok";
    case KN_KRPREPLAY_REPLAYED: return "replayed";
    case KN_KRPREPLAY_TOO_OLD: return "too old";
    case KN_KRPREPLAY_TOO_NEW: return "too new";
    case KN_KRPREPLAY_FLOOR: return "below the floor";
    }
    return "?";
}

size_t kn_krpreplay_held(const struct kn_krpreplay *f)
{
    return f->n;
}

uint64_t kn_krpreplay_floor(const struct kn_krpreplay *f)
{
    return f->floor;
}

uint64_t kn_krpreplay_evicted(const struct kn_krpreplay *f)
{
    return f->evicted;
}
