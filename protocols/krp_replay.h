/* Replay filter of the KRP/1 shared key (docs/protocol.md, "Counters and
 * replay"): one per key, whoever sends. A verified datagram is identified
 * by its counter and the first 8 bytes of its MAC; it is accepted at most
 * once, and only while its counter lies within a window around the
 * receiver's clock. Memory is bounded: when the set is full the smallest
 * counter is evicted and becomes a floor nothing at or below may pass.
 * No I/O and no clock of its own: the caller passes the time in. */
#ifndef KN_KRP_REPLAY_H
#define KN_KRP_REPLAY_H

#include <stddef.h>
#include <stdint.h>

/* How far a counter (microseconds since 1970) may be behind / ahead of
 * the receiver's clock: lab hosts kept by NTP agree within milliseconds;
 * 30 s behind also covers a datagram held up in a queue, 5 s ahead is kept
 * short because it is how long a datagram captured just before a restart
 * could still be taken once more from a sender whose clock runs ahead. */
#define KN_KRPREPLAY_PAST_US 30000000u
#define KN_KRPREPLAY_FUTURE_US 5000000u
#define KN_KRPREPLAY_TAG_LEN 8
/* Accepted datagrams kept per key: the last 30 s at up to ~540 signed
 * datagrams a second across all senders of the key, in 512 KiB. */
#define KN_KRPREPLAY_CAP 16384

enum kn_krpreplay_verdict {
    KN_KRPREPLAY_OK = 0,
    KN_KRPREPLAY_REPLAYED, /* this counter and MAC were accepted before */
    KN_KRPREPLAY_TOO_OLD,  /* counter at or below now - PAST */
    KN_KRPREPLAY_TOO_NEW,  /* counter above now + FUTURE */
    KN_KRPREPLAY_FLOOR,    /* counter at or below the floor (start, eviction, expiry) */
};

struct kn_krpreplay;

/* A filter holding up to cap datagrams that refuses every counter at or
 * below floor: a receiver starting afresh passes its wall clock, so what
 * was signed before it started cannot pass. NULL when cap is 0 or out of
 * memory. */
struct kn_krpreplay *kn_krpreplay_new(size_t cap, uint64_t floor);
void kn_krpreplay_free(struct kn_krpreplay *f);

/* Call for a datagram whose MAC verified, with its counter, the first
 * KN_KRPREPLAY_TAG_LEN bytes of its MAC and the receiver's clock in
 * microseconds since 1970. OK remembers it; anything else changes nothing
 * but what expired. */
enum kn_krpreplay_verdict kn_krpreplay_check(struct kn_krpreplay *f, uint64_t counter,
                                             const uint8_t *tag, uint64_t now_us);

/* Short English name of a verdict ("replayed", "too old", ...). */
const char *kn_krpreplay_verdict_name(enum kn_krpreplay_verdict v);

/* What the filter holds now, its floor, and how many datagrams were
 * evicted because it was full (each raised the floor). */
size_t kn_krpreplay_held(const struct kn_krpreplay *f);
uint64_t kn_krpreplay_floor(const struct kn_krpreplay *f);
uint64_t kn_krpreplay_evicted(const struct kn_krpreplay *f);

#endif
